//! The name of the assembly a module belongs to, asked of the runtime
//! without opening the module's metadata.
//!
//! Opening a module's public metadata interface, even read-only
//! (`GetModuleMetaData` with `ofRead`), makes CoreCLR convert that
//! module's internal metadata to its read-write form for good:
//! `Module::GetReadablePublicMetaDataInterface` calls `GetRWImporter`
//! (src/coreclr/vm/ceeload.cpp), whose `PEAssembly::OpenImporter` calls
//! `ConvertMDInternalToReadWrite` (src/coreclr/vm/peassembly.cpp), and the
//! runtime's own metadata reads of the module go through the read-write
//! implementation from then on. A profiler that names every module's
//! assembly through its metadata pays that for every module the program
//! loads; `GetModuleInfo` and `GetAssemblyInfo` read the runtime's own
//! structures instead, and answer from `ModuleLoadFinished` on (checked on
//! CoreCLR 3.1.23 and 8.0.4: the runtime marks the module as notified
//! before it calls `ModuleLoadFinished`, `Module::NotifyProfilerLoadFinished`
//! in ceeload.cpp). So CallTarget opens the metadata of a module only when
//! its assembly is one a target or the helper names.

use alloc::string::String;

use crate::facade::ProfilerInfo;
use crate::profiling::ModuleID;

/// The simple name of `module`'s assembly (`System.Private.CoreLib`):
/// `GetModuleInfo`, then `GetAssemblyInfo`. If the runtime answers neither
/// (a module still loading), the name from the module's own manifest,
/// which opens its metadata; `None` if that fails too.
pub(crate) fn assembly_of(info: &ProfilerInfo, module: ModuleID) -> Option<String> {
    let from_runtime = info
        .module_info(module)
        .ok()
        .filter(|m| !m.assembly.is_null())
        .and_then(|m| info.assembly_info(m.assembly).ok())
        .map(|a| a.name)
        .filter(|name| !name.is_empty());
    from_runtime.or_else(|| {
        info.module_metadata(module)
            .ok()
            .flatten()
            .and_then(|m| m.assembly_name().ok())
    })
}
