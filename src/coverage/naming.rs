//! What a method is reported under, and whether it is covered at all: the
//! filters of [`CoverageOptions`] and the attributes
//! (`[CompilerGenerated]`, `[ExcludeFromCodeCoverage]`) read from the
//! module's metadata.

use std::format;
use std::string::String;
use std::vec::Vec;

use super::options::CoverageOptions;
use super::pdb::PortablePdb;
use super::symbols::ModuleState;
use crate::facade::MetadataImport;
use crate::metadata::{mdMethodDef, mdToken, mdTypeDef};

const COMPILER_GENERATED: &str = "System.Runtime.CompilerServices.CompilerGeneratedAttribute";
const EXCLUDE_FROM_COVERAGE: &str =
    "System.Diagnostics.CodeAnalysis.ExcludeFromCodeCoverageAttribute";

/// Whether `token` carries the custom attribute `name`.
fn has_attribute(import: &MetadataImport, token: u32, name: &str) -> bool {
    let wide: Vec<u16> = name.encode_utf16().chain(Some(0)).collect();
    let mut data: *const core::ffi::c_void = core::ptr::null();
    let mut len = 0u32;
    // SAFETY: `wide` is NUL-terminated and outlives the call; the out
    // pointers are locals.
    let hr = unsafe {
        import
            .raw()
            .GetCustomAttributeByName(mdToken(token), wide.as_ptr(), &mut data, &mut len)
    };
    hr == crate::S_OK
}

/// The enclosing type of a nested type, if it is one.
fn enclosing(import: &MetadataImport, typedef: mdTypeDef) -> Option<mdTypeDef> {
    let mut outer = mdTypeDef(0);
    // SAFETY: the out pointer is a local.
    let hr = unsafe { import.raw().GetNestedClassProps(typedef, &mut outer) };
    (hr.is_ok() && outer.0 != 0).then_some(outer)
}

/// Every method of `module` that the filters and attributes let in,
/// by token, made once.
pub(super) fn catalog<'m>(
    options: &CoverageOptions,
    import: &MetadataImport,
    pdb: &PortablePdb,
    module: &'m ModuleState,
) -> &'m [(u32, String, String)] {
    module.catalog.get_or_init(|| {
        let mut catalog = Vec::new();
        for (row, m) in pdb.methods.iter().enumerate() {
            let token = 0x0600_0001 + row as u32;
            if m.sequence_points.is_empty() {
                continue;
            }
            if let Some((class, name)) = naming(options, import, pdb, module, mdMethodDef(token)) {
                catalog.push((token, class, name));
            }
        }
        catalog
    })
}

/// The class and name a method is reported under, or `None` when a
/// filter or an attribute leaves it out.
pub(super) fn naming(
    options: &CoverageOptions,
    import: &MetadataImport,
    pdb: &PortablePdb,
    module: &ModuleState,
    method: mdMethodDef,
) -> Option<(String, String)> {
    let props = import.method_props(method).ok()?;
    // Compiler-generated methods are left out, but for property
    // accessors (auto-properties: `public int X { get; set; }`), whose
    // sequence points are the user's line, counted as coverlet counts
    // them (its `SkipAutoProps` is off by default).
    let accessor = props.name.starts_with("get_") || props.name.starts_with("set_");
    if (!accessor && has_attribute(import, method.0, COMPILER_GENERATED))
        || has_attribute(import, method.0, EXCLUDE_FROM_COVERAGE)
    {
        return None;
    }
    // A state machine's MoveNext is reported as its kickoff method.
    let (user_method, user_name) = match pdb.kickoff_method(method.0) {
        Some(kickoff) => {
            let kickoff = mdMethodDef(kickoff);
            if has_attribute(import, kickoff.0, EXCLUDE_FROM_COVERAGE) {
                return None;
            }
            let name = import.method_props(kickoff).ok()?.name;
            (kickoff, name)
        }
        None => (method, props.name.clone()),
    };
    let user_type = import.method_props(user_method).ok()?.declaring_type;
    // The declaring type and its enclosing types.
    let mut outermost = props.declaring_type;
    let mut typedef = Some(props.declaring_type);
    let mut depth = 0;
    while let Some(t) = typedef {
        if has_attribute(import, t.0, EXCLUDE_FROM_COVERAGE) || depth > 32 {
            return None;
        }
        outermost = t;
        typedef = enclosing(import, t);
        depth += 1;
    }
    let type_name = import.type_name(user_type).ok()?;
    let full_type = import.type_name(props.declaring_type).ok()?;
    let included = options.include.is_empty()
        || options
            .include
            .iter()
            .any(|f| f.matches(&module.assembly, &full_type));
    if !included
        || options
            .exclude
            .iter()
            .any(|f| f.matches(&module.assembly, &full_type))
    {
        return None;
    }
    let class = import.type_name(outermost).ok()?;
    Some((class, format!("{type_name}::{user_name}")))
}
