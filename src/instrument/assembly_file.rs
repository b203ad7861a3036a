//! An assembly file's name, version and references, read from the file
//! itself (no runtime, no metadata interface): what CallTarget compares
//! between the helper and the runtime's own assemblies
//! (`helper_check.rs`).
//!
//! Formats transcribed from:
//! * the DOS stub's `e_lfanew`, the COFF header, the optional header's data
//!   directories (the CLI header is entry 14) and the section table:
//!   Microsoft PE/COFF specification, sections 2-4 (ECMA-335 6th edition,
//!   Partition II 25.2 repeats the parts a CLI image uses);
//! * the CLI header (its `MetaData` directory at offset 8): ECMA-335
//!   II.25.3.3;
//! * the metadata root, stream headers, `#~` stream, `#Strings` heap and
//!   index sizes: II.24.2.1-24.2.6 (and CoreCLR's one extension, a `u32`
//!   after the row counts when `HeapSizes` has bit 0x40:
//!   `CMiniMdSchema::EXTRA_DATA`, src/coreclr/md/inc/metamodel.h);
//! * the columns of tables 0x00-0x23 and the coded indexes: II.22 and
//!   II.24.2.6.
//!
//! Only the `Assembly` (0x20) and `AssemblyRef` (0x23) rows are read; the
//! tables before them are only measured. Every malformed input is an
//! [`Err`] saying what was wrong; nothing is read out of bounds.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::fmt;

use crate::support::bytes::ByteReader;
use crate::support::pe::PeImage;

/// Data directory 14: the CLI header (ECMA-335 II.25.2.3.3).
const CLI_HEADER: usize = 14;

/// An assembly version: major, minor, build, revision. Ordered as the
/// runtime's binder compares them (major first).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct Version(pub(crate) [u16; 4]);

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [a, b, c, d] = self.0;
        write!(f, "{a}.{b}.{c}.{d}")
    }
}

/// An assembly's name and version (a row of `Assembly` or `AssemblyRef`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct AssemblyName {
    pub(crate) name: String,
    pub(crate) version: Version,
}

/// What an assembly file says of itself and of the assemblies it needs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct AssemblyFile {
    /// Its `Assembly` row; `None` for a module without a manifest.
    pub(crate) identity: Option<AssemblyName>,
    /// Its `AssemblyRef` rows, in table order.
    pub(crate) references: Vec<AssemblyName>,
}

/// Table numbers (ECMA-335 II.22).
mod table {
    pub(super) const MODULE: usize = 0x00;
    pub(super) const TYPE_REF: usize = 0x01;
    pub(super) const TYPE_DEF: usize = 0x02;
    pub(super) const FIELD: usize = 0x04;
    pub(super) const METHOD_DEF: usize = 0x06;
    pub(super) const PARAM: usize = 0x08;
    pub(super) const INTERFACE_IMPL: usize = 0x09;
    pub(super) const MEMBER_REF: usize = 0x0A;
    pub(super) const DECL_SECURITY: usize = 0x0E;
    pub(super) const STAND_ALONE_SIG: usize = 0x11;
    pub(super) const EVENT: usize = 0x14;
    pub(super) const PROPERTY: usize = 0x17;
    pub(super) const MODULE_REF: usize = 0x1A;
    pub(super) const TYPE_SPEC: usize = 0x1B;
    pub(super) const ASSEMBLY: usize = 0x20;
    pub(super) const ASSEMBLY_REF: usize = 0x23;
    pub(super) const FILE: usize = 0x26;
    pub(super) const EXPORTED_TYPE: usize = 0x27;
    pub(super) const MANIFEST_RESOURCE: usize = 0x28;
    pub(super) const GENERIC_PARAM: usize = 0x2A;
    pub(super) const METHOD_SPEC: usize = 0x2B;
    pub(super) const GENERIC_PARAM_CONSTRAINT: usize = 0x2C;
}

fn truncated(what: &str) -> impl Fn(crate::support::bytes::Truncated) -> String + '_ {
    move |_| format!("truncated {what}")
}

/// The metadata (the bytes the CLI header's `MetaData` directory names) of
/// a PE image, found through the crate's one PE reader (`support::pe`).
fn metadata(image: &[u8]) -> Result<&[u8], String> {
    let pe = PeImage::parse(image).map_err(|e| e.0)?;
    let Some((cli_rva, _)) = pe.directory(CLI_HEADER).map_err(|e| e.0)? else {
        return Err("no CLI header: not a .NET assembly".to_string());
    };
    let cli = pe.offset_of(cli_rva).map_err(|e| e.0)?;
    let mut c = ByteReader::at(image, cli.saturating_add(8));
    let metadata_rva = c.u32().map_err(truncated("CLI header"))?;
    let metadata_size = c.u32().map_err(truncated("CLI header"))? as usize;
    pe.slice(metadata_rva, metadata_size, "the metadata")
        .map_err(|e| e.0)
}

/// The `#~` and `#Strings` streams of the metadata.
fn streams(metadata: &[u8]) -> Result<(&[u8], &[u8]), String> {
    let mut c = ByteReader::new(metadata);
    if c.u32().map_err(truncated("metadata root"))? != 0x424A_5342 {
        return Err("no metadata root (signature BSJB)".to_string());
    }
    c.take(8).map_err(truncated("metadata root"))?;
    let version_len = c.u32().map_err(truncated("metadata root"))? as usize;
    c.take(version_len).map_err(truncated("metadata root"))?;
    c.take(2).map_err(truncated("metadata root"))?;
    let count = c.u16().map_err(truncated("metadata root"))?;
    let (mut tables, mut strings) = (None, None);
    for _ in 0..count {
        let offset = c.u32().map_err(truncated("stream header"))? as usize;
        let size = c.u32().map_err(truncated("stream header"))? as usize;
        // The name: ASCII, NUL-terminated, padded to 4 bytes, at most 32.
        let len = c
            .rest()
            .iter()
            .take(32)
            .position(|&b| b == 0)
            .ok_or("stream name not terminated within 32 bytes")?;
        let name = c.take((len + 4) & !3).map_err(truncated("stream name"))?;
        let body = offset
            .checked_add(size)
            .and_then(|end| metadata.get(offset..end))
            .ok_or("a stream extends past the end of the metadata")?;
        match &name[..len] {
            b"#~" => tables = Some(body),
            b"#-" => return Err("uncompressed metadata tables (#-) are not supported".to_string()),
            b"#Strings" => strings = Some(body),
            _ => {}
        }
    }
    Ok((tables.ok_or("no #~ stream")?, strings.unwrap_or(&[])))
}

/// The string at `index` of the `#Strings` heap (UTF-8, NUL-terminated).
fn string(heap: &[u8], index: u32) -> Result<String, String> {
    let from = heap
        .get(index as usize..)
        .ok_or_else(|| format!("string index {index:#x} past the #Strings heap"))?;
    let len = from
        .iter()
        .position(|&b| b == 0)
        .ok_or("a string runs past the #Strings heap")?;
    core::str::from_utf8(&from[..len])
        .map(ToString::to_string)
        .map_err(|_| format!("string {index:#x} is not UTF-8"))
}

impl AssemblyFile {
    /// Reads the bytes of an assembly file (a PE image with CLI metadata).
    pub(crate) fn read(image: &[u8]) -> Result<AssemblyFile, String> {
        let (tables, strings) = streams(metadata(image)?)?;
        // The #~ stream (ECMA-335 II.24.2.6).
        let mut t = ByteReader::new(tables);
        t.take(6).map_err(truncated("#~ header"))?;
        let heap_sizes = t.u8().map_err(truncated("#~ header"))?;
        t.take(1).map_err(truncated("#~ header"))?;
        let valid = t.u64().map_err(truncated("#~ header"))?;
        t.take(8).map_err(truncated("#~ header"))?;
        let mut rows = [0u64; 64];
        for (n, count) in rows.iter_mut().enumerate() {
            if valid >> n & 1 == 1 {
                *count = u64::from(t.u32().map_err(truncated("#~ row counts"))?);
            }
        }
        if heap_sizes & 0x40 != 0 {
            t.take(4).map_err(truncated("#~ extra data"))?;
        }
        let size = |wide: bool| if wide { 4u64 } else { 2 };
        let s = size(heap_sizes & 0x01 != 0);
        let g = size(heap_sizes & 0x02 != 0);
        let b = size(heap_sizes & 0x04 != 0);
        // A simple index is 2 bytes while its table has fewer than 2^16
        // rows; a coded index with an n-bit tag while every table it can
        // name has fewer than 2^(16 - n).
        let idx = |t: usize| size(rows[t] >= 1 << 16);
        let coded =
            |bits: u32, tables: &[usize]| size(tables.iter().any(|&t| rows[t] >= 1 << (16 - bits)));
        use table::*;
        let type_def_or_ref = coded(2, &[TYPE_DEF, TYPE_REF, TYPE_SPEC]);
        let has_constant = coded(2, &[FIELD, PARAM, PROPERTY]);
        let ca_parent = coded(
            5,
            &[
                METHOD_DEF,
                FIELD,
                TYPE_REF,
                TYPE_DEF,
                PARAM,
                INTERFACE_IMPL,
                MEMBER_REF,
                MODULE,
                DECL_SECURITY,
                PROPERTY,
                EVENT,
                STAND_ALONE_SIG,
                MODULE_REF,
                TYPE_SPEC,
                ASSEMBLY,
                ASSEMBLY_REF,
                FILE,
                EXPORTED_TYPE,
                MANIFEST_RESOURCE,
                GENERIC_PARAM,
                GENERIC_PARAM_CONSTRAINT,
                METHOD_SPEC,
            ],
        );
        let has_field_marshal = coded(1, &[FIELD, PARAM]);
        let has_decl_security = coded(2, &[TYPE_DEF, METHOD_DEF, ASSEMBLY]);
        let member_ref_parent = coded(3, &[TYPE_DEF, TYPE_REF, MODULE_REF, METHOD_DEF, TYPE_SPEC]);
        let has_semantics = coded(1, &[EVENT, PROPERTY]);
        let method_def_or_ref = coded(1, &[METHOD_DEF, MEMBER_REF]);
        let member_forwarded = coded(1, &[FIELD, METHOD_DEF]);
        let ca_type = coded(3, &[METHOD_DEF, MEMBER_REF]);
        let resolution_scope = coded(2, &[MODULE, MODULE_REF, ASSEMBLY_REF, TYPE_REF]);
        let (field, method_def, param) = (idx(FIELD), idx(METHOD_DEF), idx(PARAM));
        let (type_def, event, property) = (idx(TYPE_DEF), idx(EVENT), idx(PROPERTY));
        // Row sizes of tables 0x00-0x23, column by column (II.22.2-22.39;
        // the Ptr tables, EncLog and EncMap from CoreCLR's metamodel).
        let row_size = |n: usize| -> u64 {
            match n {
                0x00 => 2 + s + 3 * g,                                    // Module
                0x01 => resolution_scope + 2 * s,                         // TypeRef
                0x02 => 4 + 2 * s + type_def_or_ref + field + method_def, // TypeDef
                0x03 => field,                                            // FieldPtr
                0x04 => 2 + s + b,                                        // Field
                0x05 => method_def,                                       // MethodPtr
                0x06 => 4 + 2 + 2 + s + b + param,                        // MethodDef
                0x07 => param,                                            // ParamPtr
                0x08 => 2 + 2 + s,                                        // Param
                0x09 => type_def + type_def_or_ref,                       // InterfaceImpl
                0x0A => member_ref_parent + s + b,                        // MemberRef
                0x0B => 2 + has_constant + b,                             // Constant
                0x0C => ca_parent + ca_type + b,                          // CustomAttribute
                0x0D => has_field_marshal + b,                            // FieldMarshal
                0x0E => 2 + has_decl_security + b,                        // DeclSecurity
                0x0F => 2 + 4 + type_def,                                 // ClassLayout
                0x10 => 4 + field,                                        // FieldLayout
                0x11 => b,                                                // StandAloneSig
                0x12 => type_def + event,                                 // EventMap
                0x13 => event,                                            // EventPtr
                0x14 => 2 + s + type_def_or_ref,                          // Event
                0x15 => type_def + property,                              // PropertyMap
                0x16 => property,                                         // PropertyPtr
                0x17 => 2 + s + b,                                        // Property
                0x18 => 2 + method_def + has_semantics,                   // MethodSemantics
                0x19 => type_def + 2 * method_def_or_ref,                 // MethodImpl
                0x1A => s,                                                // ModuleRef
                0x1B => b,                                                // TypeSpec
                0x1C => 2 + member_forwarded + s + idx(MODULE_REF),       // ImplMap
                0x1D => 4 + field,                                        // FieldRVA
                0x1E => 4 + 4,                                            // EncLog
                0x1F => 4,                                                // EncMap
                0x20 => 4 + 8 + 4 + b + 2 * s,                            // Assembly
                0x21 => 4,                                                // AssemblyProcessor
                0x22 => 4 + 4 + 4,                                        // AssemblyOS
                _ => 8 + 4 + 2 * b + 2 * s,                               // AssemblyRef
            }
        };
        let mut starts = [0u64; ASSEMBLY_REF + 1];
        let mut at = t.pos() as u64;
        for (n, start) in starts.iter_mut().enumerate() {
            *start = at;
            at = at.saturating_add(rows[n].saturating_mul(row_size(n)));
        }
        // (`at` is now the end of AssemblyRef, the last table read.)
        if at > tables.len() as u64 {
            return Err("#~ tables extend past the end of the stream".to_string());
        }
        let index = |r: &mut ByteReader<'_>, width: u64| -> Result<u32, String> {
            if width == 4 {
                r.u32().map_err(truncated("a row"))
            } else {
                r.u16().map(u32::from).map_err(truncated("a row"))
            }
        };
        let version = |r: &mut ByteReader<'_>| -> Result<Version, String> {
            let mut v = [0u16; 4];
            for part in &mut v {
                *part = r.u16().map_err(truncated("a version"))?;
            }
            Ok(Version(v))
        };

        // Assembly (II.22.2): HashAlgId, version, Flags, PublicKey, Name,
        // Culture.
        let identity = if rows[ASSEMBLY] == 0 {
            None
        } else {
            // Within the stream (checked above): the cast cannot truncate.
            let mut r = ByteReader::at(tables, starts[ASSEMBLY] as usize);
            r.take(4).map_err(truncated("Assembly"))?;
            let version = version(&mut r)?;
            r.take(4).map_err(truncated("Assembly"))?;
            index(&mut r, b)?;
            let name = string(strings, index(&mut r, s)?)?;
            Some(AssemblyName { name, version })
        };
        // AssemblyRef (II.22.5): version, Flags, PublicKeyOrToken, Name,
        // Culture, HashValue.
        let mut references = Vec::new();
        let mut r = ByteReader::at(tables, starts[ASSEMBLY_REF] as usize);
        for _ in 0..rows[ASSEMBLY_REF] {
            let version = version(&mut r)?;
            r.take(4).map_err(truncated("AssemblyRef"))?;
            index(&mut r, b)?;
            let name = string(strings, index(&mut r, s)?)?;
            index(&mut r, s)?;
            index(&mut r, b)?;
            references.push(AssemblyName { name, version });
        }
        Ok(AssemblyFile {
            identity,
            references,
        })
    }
}

/// What the tests of this module and of `helper_check.rs` share.
#[cfg(test)]
pub(crate) mod test_support {
    use super::{AssemblyName, Version};
    use alloc::string::ToString;

    /// Tiny.cs compiled by Roslyn against .NET Core 3.1's reference
    /// assemblies (tests/fixtures/coverage/README.md): it references
    /// System.Runtime 4.2.2.0, System.Diagnostics.Debug,
    /// System.Threading.Tasks and System.Console 4.1.2.0, and
    /// System.Runtime.Extensions 4.2.2.0.
    pub(crate) const TINY: &[u8] = include_bytes!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/coverage/Tiny.dll"
    ));

    pub(crate) fn name(name: &str, v: [u16; 4]) -> AssemblyName {
        AssemblyName {
            name: name.to_string(),
            version: Version(v),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::test_support::{name, TINY};
    use super::*;
    use alloc::vec;

    #[test]
    fn reads_the_identity_and_references_of_a_compiled_assembly() {
        // The same rows as ildasm's .assembly extern lines for Tiny.dll.
        let file = AssemblyFile::read(TINY).unwrap();
        assert_eq!(file.identity, Some(name("Tiny", [0, 0, 0, 0])));
        assert_eq!(
            file.references,
            vec![
                name("System.Runtime", [4, 2, 2, 0]),
                name("System.Diagnostics.Debug", [4, 1, 2, 0]),
                name("System.Threading.Tasks", [4, 1, 2, 0]),
                name("System.Console", [4, 1, 2, 0]),
                name("System.Runtime.Extensions", [4, 2, 2, 0]),
            ]
        );
    }

    #[test]
    fn versions_compare_as_the_binder_does_and_print_dotted() {
        assert!(Version([10, 0, 0, 0]) > Version([4, 2, 2, 0]));
        assert!(Version([4, 2, 2, 1]) > Version([4, 2, 2, 0]));
        assert!(Version([4, 2, 10, 0]) > Version([4, 2, 2, 0]));
        assert!(Version([8, 0, 0, 0]) < Version([8, 0, 0, 1]));
        assert_eq!(Version([4, 2, 2, 0]).to_string(), "4.2.2.0");
    }

    #[test]
    fn every_truncated_image_is_an_error_or_reads_the_same() {
        let whole = AssemblyFile::read(TINY).unwrap();
        for len in 0..TINY.len() {
            match AssemblyFile::read(&TINY[..len]) {
                Ok(file) => assert_eq!(file, whole, "read from {len} bytes"),
                Err(why) => assert!(!why.is_empty()),
            }
        }
    }

    #[test]
    fn what_is_no_assembly_is_said() {
        assert_eq!(
            AssemblyFile::read(b"not a PE file").unwrap_err(),
            "not a PE file (no MZ)"
        );
        let mut no_cli = pe_image(&[]);
        // Data directory 14 (the CLI header) zeroed.
        let directory = 0x40 + 4 + 20 + 112 + 14 * 8;
        no_cli[directory..directory + 8].fill(0);
        assert_eq!(
            AssemblyFile::read(&no_cli).unwrap_err(),
            "no CLI header: not a .NET assembly"
        );
    }

    /// A PE32+ image of one section at RVA 0x2000: a CLI header, then
    /// `metadata`.
    fn pe_image(metadata: &[u8]) -> Vec<u8> {
        const SECTION_AT: usize = 0x200;
        const RVA: u32 = 0x2000;
        let mut image = vec![0u8; SECTION_AT];
        image[..2].copy_from_slice(b"MZ");
        image[0x3C..0x40].copy_from_slice(&0x40u32.to_le_bytes());
        image[0x40..0x44].copy_from_slice(b"PE\0\0");
        let coff = 0x44;
        image[coff + 2..coff + 4].copy_from_slice(&1u16.to_le_bytes()); // sections
        image[coff + 16..coff + 18].copy_from_slice(&240u16.to_le_bytes()); // optional header
        let optional = coff + 20;
        image[optional..optional + 2].copy_from_slice(&0x20Bu16.to_le_bytes());
        image[optional + 108..optional + 112].copy_from_slice(&16u32.to_le_bytes());
        let cli = optional + 112 + 14 * 8;
        image[cli..cli + 4].copy_from_slice(&RVA.to_le_bytes());
        image[cli + 4..cli + 8].copy_from_slice(&72u32.to_le_bytes());
        let section = optional + 240;
        let size = (72 + metadata.len()) as u32;
        image[section + 8..section + 12].copy_from_slice(&size.to_le_bytes());
        image[section + 12..section + 16].copy_from_slice(&RVA.to_le_bytes());
        image[section + 16..section + 20].copy_from_slice(&size.to_le_bytes());
        image[section + 20..section + 24].copy_from_slice(&(SECTION_AT as u32).to_le_bytes());
        // The CLI header: cb, runtime 2.5, MetaData right after it.
        let mut header = vec![0u8; 72];
        header[..4].copy_from_slice(&72u32.to_le_bytes());
        header[4..6].copy_from_slice(&2u16.to_le_bytes());
        header[6..8].copy_from_slice(&5u16.to_le_bytes());
        header[8..12].copy_from_slice(&(RVA + 72).to_le_bytes());
        header[12..16].copy_from_slice(&(metadata.len() as u32).to_le_bytes());
        image.extend_from_slice(&header);
        image.extend_from_slice(metadata);
        image
    }

    /// A metadata root with a `#~` stream (`heap_sizes`, the row counts
    /// of the tables in `rows`, then `table_bytes`) and a `#Strings` heap.
    fn metadata(
        heap_sizes: u8,
        rows: &[(usize, u32)],
        table_bytes: &[u8],
        strings: &[u8],
    ) -> Vec<u8> {
        let mut tables = vec![0, 0, 0, 0, 2, 0, heap_sizes, 1];
        let valid = rows.iter().fold(0u64, |v, &(t, _)| v | 1 << t);
        tables.extend_from_slice(&valid.to_le_bytes());
        tables.extend_from_slice(&0u64.to_le_bytes());
        for &(_, count) in rows {
            tables.extend_from_slice(&count.to_le_bytes());
        }
        if heap_sizes & 0x40 != 0 {
            tables.extend_from_slice(&0xDEAD_BEEFu32.to_le_bytes());
        }
        tables.extend_from_slice(table_bytes);
        while tables.len() % 4 != 0 {
            tables.push(0);
        }
        let mut strings = strings.to_vec();
        while strings.len() % 4 != 0 {
            strings.push(0);
        }
        let version = b"v4.0.30319\0\0";
        // Root (16 + version + 4) and two stream headers (8 + "#~\0\0",
        // 8 + "#Strings\0\0\0\0").
        let headers = 16 + version.len() + 4 + 12 + 20;
        let mut md = Vec::new();
        md.extend_from_slice(&0x424A_5342u32.to_le_bytes());
        md.extend_from_slice(&[1, 0, 1, 0, 0, 0, 0, 0]);
        md.extend_from_slice(&(version.len() as u32).to_le_bytes());
        md.extend_from_slice(version);
        md.extend_from_slice(&[0, 0, 2, 0]);
        md.extend_from_slice(&(headers as u32).to_le_bytes());
        md.extend_from_slice(&(tables.len() as u32).to_le_bytes());
        md.extend_from_slice(b"#~\0\0");
        md.extend_from_slice(&((headers + tables.len()) as u32).to_le_bytes());
        md.extend_from_slice(&(strings.len() as u32).to_le_bytes());
        md.extend_from_slice(b"#Strings\0\0\0\0");
        assert_eq!(md.len(), headers);
        md.extend_from_slice(&tables);
        md.extend_from_slice(&strings);
        md
    }

    /// An AssemblyRef row with 2-byte blob indexes and `string`-byte
    /// string indexes.
    fn assembly_ref_row(version: [u16; 4], name: u32, string: usize) -> Vec<u8> {
        let mut row = Vec::new();
        for part in version {
            row.extend_from_slice(&part.to_le_bytes());
        }
        row.extend_from_slice(&[0; 4]); // Flags
        row.extend_from_slice(&[0; 2]); // PublicKeyOrToken
        row.extend_from_slice(&name.to_le_bytes()[..string]);
        row.extend_from_slice(&vec![0; string]); // Culture
        row.extend_from_slice(&[0; 2]); // HashValue
        row
    }

    #[test]
    fn a_resolution_scope_is_four_bytes_from_two_to_the_fourteen_rows() {
        // TypeRef rows are ResolutionScope (a 2-bit tag) + Name +
        // Namespace: 6 bytes below 2^14 TypeRefs, 8 from 2^14 on.
        let strings = b"\0System.Runtime\0";
        for (type_refs, row) in [(0x3FFF, 6), (0x4000, 8)] {
            let mut bytes = vec![0xEE; type_refs as usize * row];
            bytes.extend(assembly_ref_row([10, 0, 0, 0], 1, 2));
            let md = metadata(
                0,
                &[(table::TYPE_REF, type_refs), (table::ASSEMBLY_REF, 1)],
                &bytes,
                strings,
            );
            let file = AssemblyFile::read(&pe_image(&md)).unwrap();
            assert_eq!(file.identity, None);
            assert_eq!(file.references, vec![name("System.Runtime", [10, 0, 0, 0])]);
        }
    }

    #[test]
    fn wide_heaps_extra_data_and_a_wide_custom_attribute_parent_are_measured() {
        // 2^11 Params widen HasCustomAttribute (a 5-bit tag): one
        // CustomAttribute row is 4 + 2 + 2 bytes; string indexes are 4
        // bytes (HeapSizes 0x01), and CoreCLR's extra u32 follows the row
        // counts (0x40).
        let strings = b"\0Helper\0netstandard\0";
        let params = 0x800;
        let mut bytes = vec![0xEE; params * (2 + 2 + 4)];
        bytes.extend([0xEE; 8]);
        // Assembly: HashAlgId, version 1.2.3.4, Flags, PublicKey, Name, Culture.
        bytes.extend([0; 4]);
        for part in [1u16, 2, 3, 4] {
            bytes.extend(part.to_le_bytes());
        }
        bytes.extend([0; 4 + 2]);
        bytes.extend(1u32.to_le_bytes());
        bytes.extend([0; 4]);
        bytes.extend(assembly_ref_row([2, 1, 0, 0], 8, 4));
        let rows = [
            (table::PARAM, params as u32),
            (0x0C, 1),
            (table::ASSEMBLY, 1),
            (table::ASSEMBLY_REF, 1),
        ];
        let file = AssemblyFile::read(&pe_image(&metadata(0x41, &rows, &bytes, strings))).unwrap();
        assert_eq!(file.identity, Some(name("Helper", [1, 2, 3, 4])));
        assert_eq!(file.references, vec![name("netstandard", [2, 1, 0, 0])]);
    }
}
