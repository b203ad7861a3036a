//! All naming, in one room: what a function, a class, a frame and the
//! runtime's own machinery are called.
//!
//! The route of a name: a `FunctionID` goes to its module and token
//! (`GetFunctionInfo`), the module to its metadata importer through the
//! per-module cache (`cache.rs`: looked up once per module that cannot
//! unload), the token to its method and type names (the metadata room's
//! [`MetadataImport`](crate::facade::MetadataImport)), and the UTF-16
//! answers to Rust strings (the strings room). Here:
//! [`function_name`](ProfilerInfo::function_name) and
//! [`class_name`](ProfilerInfo::class_name); `writer.rs` writes a name
//! without allocating; `frames.rs` names one compiled instantiation (a
//! stack frame's); `machinery.rs` recognizes the runtime's own frames by
//! name. The files of this room add methods to [`ProfilerInfo`] and name
//! only the rooms below (info, module_cache, metadata, stack, strings).

use alloc::string::String;
use alloc::vec::Vec;

use super::info::{ProfilerInfo, Result};
use super::metadata::MethodName;
use crate::metadata::mdTypeDef;
use crate::profiling::*;

pub(super) mod cache;
mod frames;
pub(super) mod machinery;
mod writer;

/// How many classes one [`ProfilerInfo::class_name`] names at most, its type
/// arguments' included: past it, arguments print as `...`. Real names need
/// a handful; the bound keeps a self-referential answer from taking
/// exponential time.
const CLASS_NAME_BUDGET: u32 = 256;

impl ProfilerInfo {
    /// A function's name and its declaring type's full name, read from
    /// metadata (`Program.Fib`, `Outer+Inner.Method`).
    ///
    /// This names the method's definition: a generic type keeps its
    /// metadata name with its arity and no type arguments
    /// (``WebShop.Repository`1.Find``, for every instantiation), as ildasm
    /// prints it. For the instantiation of one compiled function use
    /// [`instantiated_function_name`](ProfilerInfo::instantiated_function_name)
    /// (`WebShop.Repository<System.Int32>.Find`); instrumentation targets
    /// (`corprof::instrument::MethodTarget`) are written
    /// ``Shop!WebShop.Repository`1::Find``. docs/hooks.md ("One method,
    /// three names") compares the three forms. This format is stable: the
    /// JIT tracer and its C baseline print it.
    ///
    /// The metadata of modules that cannot unload is kept per module after
    /// the first use, so naming costs `GetFunctionInfo`, `GetMethodProps`
    /// and `GetTypeDefProps`; other functions are named through
    /// `GetTokenAndMetaDataFromFunction`. To format the name without
    /// allocating, use [`write_function_name`](ProfilerInfo::write_function_name).
    pub fn function_name(&self, function: FunctionID) -> Result<MethodName> {
        let (import, token) = self.function_import(function)?;
        import.method_name(token)
    }

    /// A class's full name, generic instantiations included
    /// (`System.Collections.Generic.List<System.String>`), from
    /// `GetClassIDInfo2` and the module's metadata. Arrays are named by
    /// `IsArrayClass` as their element type with C#-like brackets
    /// (`System.Byte[]`, `System.String[,]`, `System.Int32[][]`); other
    /// classes without a TypeDef (pointers, function pointers) give the
    /// runtime's error.
    ///
    /// Bounded against broken answers: type arguments nest at most 16 deep
    /// and at most 256 classes are named in all (the rest print as `...`);
    /// a count of type arguments above 65,535 is `E_UNEXPECTED`. Module
    /// metadata comes from the same per-module cache as
    /// [`function_name`](ProfilerInfo::function_name)'s.
    pub fn class_name(&self, class: ClassID) -> Result<String> {
        let mut budget = CLASS_NAME_BUDGET;
        self.class_name_depth(class, 0, &mut budget)
    }

    fn class_name_depth(&self, class: ClassID, depth: u32, budget: &mut u32) -> Result<String> {
        let raw = self.live()?;
        const MAX_DEPTH: u32 = 16;
        *budget = budget.saturating_sub(1);
        if let Some(name) = self.array_class_name(class, depth, budget) {
            return Ok(name);
        }
        let (mut module, mut typedef) = (ModuleID::NULL, mdTypeDef(0));
        let mut args: Vec<ClassID> = Vec::new();
        if let Some(v2) = self.v2() {
            let mut parent = ClassID::NULL;
            let mut count: u32 = 0;
            // SAFETY: valid out-pointers; a zero-capacity first call asks for the count.
            unsafe {
                v2.GetClassIDInfo2(
                    class,
                    &mut module,
                    &mut typedef,
                    &mut parent,
                    0,
                    &mut count,
                    core::ptr::null_mut(),
                )
                .ok_with("GetClassIDInfo2")?;
            }
            // Metadata numbers generic parameters with 16 bits: a larger
            // count is a broken answer, refused before allocating for it.
            if count > u32::from(u16::MAX) {
                return Err(crate::E_UNEXPECTED.into());
            }
            if count > 0 {
                args.resize(count as usize, ClassID::NULL);
                let mut written: u32 = 0;
                // SAFETY: `args` has room for `count` IDs.
                unsafe {
                    v2.GetClassIDInfo2(
                        class,
                        &mut module,
                        &mut typedef,
                        &mut parent,
                        count,
                        &mut written,
                        args.as_mut_ptr(),
                    )
                    .ok_with("GetClassIDInfo2")?;
                }
                args.truncate(written as usize);
            }
        } else {
            // SAFETY: valid out-pointers.
            unsafe { raw.GetClassIDInfo(class, &mut module, &mut typedef) }
                .ok_with("GetClassIDInfo")?;
        }
        let import = self.module_import(module)?;
        let mut name = import.type_name(typedef)?;
        if !args.is_empty() {
            if let Some(tick) = name.rfind('`') {
                name.truncate(tick);
            }
            name.push('<');
            for (i, arg) in args.iter().enumerate() {
                if i > 0 {
                    name.push_str(", ");
                }
                if depth < MAX_DEPTH && *budget > 0 {
                    name.push_str(
                        &self
                            .class_name_depth(*arg, depth + 1, budget)
                            .unwrap_or_else(|_| String::from("?")),
                    );
                } else {
                    name.push_str("...");
                }
            }
            name.push('>');
        }
        Ok(name)
    }

    /// The name of an array class (`System.Byte[]`, `System.String[,]`)
    /// from `IsArrayClass`, or `None` when `class` is not an array: arrays
    /// have no TypeDef for `GetClassIDInfo2` to answer.
    fn array_class_name(&self, class: ClassID, depth: u32, budget: &mut u32) -> Option<String> {
        let raw = self.live().ok()?;
        let (mut element, mut element_class, mut rank) =
            (crate::metadata::CorElementType(0), ClassID::NULL, 0u32);
        // SAFETY: valid out-pointers; S_FALSE (not an array) is checked.
        let hr = unsafe { raw.IsArrayClass(class, &mut element, &mut element_class, &mut rank) };
        if hr != crate::S_OK || rank == 0 || rank > 32 {
            return None;
        }
        let mut name = if !element_class.is_null() && depth < 16 && *budget > 0 {
            self.class_name_depth(element_class, depth + 1, budget)
                .unwrap_or_else(|_| String::from("?"))
        } else {
            String::from(primitive_name(element).unwrap_or("?"))
        };
        name.push('[');
        for _ in 1..rank {
            name.push(',');
        }
        name.push(']');
        Some(name)
    }
}

/// The runtime type of a primitive element type, as `class_name` names it.
fn primitive_name(element: crate::metadata::CorElementType) -> Option<&'static str> {
    use crate::metadata::*;
    Some(match element {
        ELEMENT_TYPE_BOOLEAN => "System.Boolean",
        ELEMENT_TYPE_CHAR => "System.Char",
        ELEMENT_TYPE_I1 => "System.SByte",
        ELEMENT_TYPE_U1 => "System.Byte",
        ELEMENT_TYPE_I2 => "System.Int16",
        ELEMENT_TYPE_U2 => "System.UInt16",
        ELEMENT_TYPE_I4 => "System.Int32",
        ELEMENT_TYPE_U4 => "System.UInt32",
        ELEMENT_TYPE_I8 => "System.Int64",
        ELEMENT_TYPE_U8 => "System.UInt64",
        ELEMENT_TYPE_R4 => "System.Single",
        ELEMENT_TYPE_R8 => "System.Double",
        ELEMENT_TYPE_STRING => "System.String",
        ELEMENT_TYPE_I => "System.IntPtr",
        ELEMENT_TYPE_U => "System.UIntPtr",
        ELEMENT_TYPE_OBJECT => "System.Object",
        _ => return None,
    })
}
