//! A module's symbols: its Portable PDB found and parsed ([`load_pdb`]),
//! once per module ([`Modules`]).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::string::{String, ToString};
use std::sync::{Arc, Mutex, OnceLock};
use std::vec::Vec;
use std::{format, vec};

use super::pdb::PortablePdb;
use super::pe;
use crate::facade::ProfilerInfo;
use crate::profiling::ModuleID;
use crate::support::sync::lock;

/// One message on stderr, `coverage: ` first; write errors are ignored.
pub(super) fn log(text: core::fmt::Arguments<'_>) {
    use std::io::Write as _;
    let _ = writeln!(std::io::stderr().lock(), "coverage: {text}");
}

/// A module's PDB, once looked up.
pub(super) struct ModuleState {
    pub(super) assembly: String,
    pub(super) pdb: Option<PortablePdb>,
    /// Every method with sequence points that the filters and attributes
    /// let in: (MethodDef token, class, name). Made at the module's first
    /// JIT compilation; the methods never compiled are reported with zero
    /// counts from it.
    pub(super) catalog: OnceLock<Vec<(u32, String, String)>>,
}

/// The modules met so far: `None` for one without a file or a PDB.
#[derive(Default)]
pub(super) struct Modules(Mutex<HashMap<ModuleID, Option<Arc<ModuleState>>>>);

impl Modules {
    /// The module's PDB, looked up once (one message if it is broken).
    pub(super) fn get(&self, info: &ProfilerInfo, module: ModuleID) -> Option<Arc<ModuleState>> {
        if let Some(known) = lock(&self.0).get(&module) {
            return known.clone();
        }
        let state = (|| {
            let module_info = info.module_info(module).ok()?;
            let path = PathBuf::from(&module_info.path);
            if !path.is_file() {
                return None;
            }
            let assembly = info
                .assembly_info(module_info.assembly)
                .map(|a| a.name)
                .unwrap_or_else(|_| {
                    path.file_stem()
                        .map_or_else(String::new, |s| s.to_string_lossy().into_owned())
                });
            let pdb = match load_pdb(&path) {
                Ok(pdb) => pdb,
                Err(error) => {
                    log(format_args!(
                        "{}: {error}; the module runs uninstrumented",
                        path.display()
                    ));
                    None
                }
            };
            Some(Arc::new(ModuleState {
                assembly,
                pdb,
                catalog: OnceLock::new(),
            }))
        })();
        lock(&self.0).insert(module, state.clone());
        state
    }

    /// The state of `module` if it was met (never looked up here).
    pub(super) fn known(&self, module: ModuleID) -> Option<Arc<ModuleState>> {
        lock(&self.0).get(&module).cloned().flatten()
    }

    /// Every module with a PDB met so far, with its state, each state
    /// once (with the first of the module IDs that share it).
    pub(super) fn all_with_ids(&self) -> Vec<(ModuleID, Arc<ModuleState>)> {
        let mut modules: Vec<(ModuleID, Arc<ModuleState>)> = lock(&self.0)
            .iter()
            .filter_map(|(id, m)| m.clone().map(|m| (*id, m)))
            .collect();
        modules.sort_by_key(|(id, m)| (Arc::as_ptr(m) as usize, id.0));
        modules.dedup_by_key(|(_, m)| Arc::as_ptr(m) as usize);
        modules
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Finds and parses a module's Portable PDB: embedded in the assembly, or
/// beside it (`App.pdb`), or at its CodeView path. `Ok(None)`: no PDB.
pub fn load_pdb(assembly_path: &Path) -> core::result::Result<Option<PortablePdb>, String> {
    let image = std::fs::read(assembly_path).map_err(|e| format!("cannot read: {e}"))?;
    let directory = pe::debug_directory(&image).map_err(|e| e.to_string())?;
    if let Some(embedded) = directory.embedded_pdb {
        return PortablePdb::parse(&embedded)
            .map(Some)
            .map_err(|e| format!("embedded PDB: {e}"));
    }
    let mut candidates = vec![assembly_path.with_extension("pdb")];
    if let Some(path) = directory.codeview_path {
        candidates.push(PathBuf::from(path));
    }
    for candidate in &candidates {
        if let Ok(bytes) = std::fs::read(candidate) {
            let pdb =
                PortablePdb::parse(&bytes).map_err(|e| format!("{}: {e}", candidate.display()))?;
            // A PDB of another build would put probes at the wrong IL
            // offsets: the ids must match (PE-COFF.md, Portable CodeView).
            if let Some(expected) = directory.portable_pdb_id {
                if pdb.id != expected {
                    return Err(format!(
                        "{}: not the PDB this assembly was built with (PDB id {}, the assembly's \
                         CodeView entry names {})",
                        candidate.display(),
                        hex(&pdb.id),
                        hex(&expected)
                    ));
                }
            }
            return Ok(Some(pdb));
        }
    }
    let mut mdb = std::ffi::OsString::from(assembly_path.as_os_str());
    mdb.push(".mdb");
    if Path::new(&mdb).exists() {
        return Err(format!(
            "{}: Mono .mdb symbols are not supported; compile with -debug:portable",
            Path::new(&mdb).display()
        ));
    }
    Ok(None)
}
