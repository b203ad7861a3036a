//! Finding an assembly's Portable PDB: the debug directory of its PE file.
//!
//! Formats transcribed from:
//! * the DOS stub's `e_lfanew`, the COFF header, the optional header's data
//!   directories (the debug directory is entry 6) and the section table:
//!   Microsoft PE/COFF specification, sections 2-4 and 6.1 (ECMA-335
//!   II.25.2 repeats the parts a CLI image uses);
//! * `IMAGE_DEBUG_DIRECTORY` (28 bytes): PE/COFF specification 6.1.1;
//! * the CodeView entry (type 2: "RSDS", GUID, age, UTF-8 path) and the
//!   Embedded Portable PDB entry (type 17: "MPDB", uncompressed size,
//!   DEFLATE data): dotnet/runtime (formerly dotnet/corefx)
//!   `src/System.Reflection.Metadata/specs/PE-COFF.md`.

use alloc::string::String;
use alloc::vec::Vec;

use super::inflate::inflate;
use super::pdb::PdbError;
use crate::support::bytes::ByteReader;

/// `IMAGE_DEBUG_TYPE_CODEVIEW`.
pub const DEBUG_TYPE_CODEVIEW: u32 = 2;
/// Embedded Portable PDB (PE-COFF.md).
pub const DEBUG_TYPE_EMBEDDED_PORTABLE_PDB: u32 = 17;
/// "MPDB", little-endian.
const MPDB: u32 = 0x4244_504D;
/// The minor version of a CodeView entry that names a Portable PDB
/// (PE-COFF.md, "Version Major=any, Minor=0x504d").
pub const PORTABLE_CODEVIEW_MINOR: u16 = 0x504D;
/// The largest embedded PDB inflated (bytes).
pub const MAX_EMBEDDED_PDB: usize = 256 << 20;

/// What an assembly's debug directory says about its PDB.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DebugDirectory {
    /// The PDB path of the CodeView entry, if any.
    pub codeview_path: Option<String>,
    /// The PDB id a Portable CodeView entry (minor version 0x504D) names:
    /// its GUID followed by the entry's `TimeDateStamp` (PE-COFF.md); a
    /// `.pdb` file whose `#Pdb` id differs was not built with this image.
    pub portable_pdb_id: Option<[u8; 20]>,
    /// The inflated embedded Portable PDB, if any.
    pub embedded_pdb: Option<Vec<u8>>,
}

fn read_u16(data: &[u8], at: usize) -> Result<u16, PdbError> {
    ByteReader::at(data, at)
        .u16()
        .map_err(|_| PdbError::new("truncated PE file"))
}

fn read_u32(data: &[u8], at: usize) -> Result<u32, PdbError> {
    ByteReader::at(data, at)
        .u32()
        .map_err(|_| PdbError::new("truncated PE file"))
}

/// Reads the debug directory of a PE image (the bytes of an assembly file).
/// An image without a debug directory has an empty one; a malformed image
/// or embedded PDB is an error.
pub fn debug_directory(image: &[u8]) -> Result<DebugDirectory, PdbError> {
    if image.get(..2) != Some(b"MZ") {
        return Err(PdbError::new("not a PE file (no MZ)"));
    }
    let pe = read_u32(image, 0x3C)? as usize;
    if image.get(pe..pe.saturating_add(4)) != Some(b"PE\0\0") {
        return Err(PdbError::new("not a PE file (no PE signature)"));
    }
    let coff = pe + 4;
    let sections = read_u16(image, coff + 2)? as usize;
    let optional_size = read_u16(image, coff + 16)? as usize;
    let optional = coff + 20;
    // Data directories start at 96 (PE32) or 112 (PE32+) in the optional
    // header; NumberOfRvaAndSizes precedes them.
    let directories = match read_u16(image, optional)? {
        0x10B => optional + 96,
        0x20B => optional + 112,
        _ => return Err(PdbError::new("unknown PE optional header magic")),
    };
    let count = read_u32(image, directories - 4)?;
    let mut out = DebugDirectory::default();
    if count <= 6 {
        return Ok(out);
    }
    let debug_rva = read_u32(image, directories + 6 * 8)?;
    let debug_size = read_u32(image, directories + 6 * 8 + 4)? as usize;
    if debug_rva == 0 || debug_size == 0 {
        return Ok(out);
    }
    let section_table = optional + optional_size;
    let to_offset = |rva: u32| -> Result<usize, PdbError> {
        for s in 0..sections {
            let h = section_table + s * 40;
            let va = read_u32(image, h + 12)?;
            let raw_size = read_u32(image, h + 16)?;
            let raw = read_u32(image, h + 20)?;
            if rva >= va && rva - va < raw_size {
                return usize::try_from(u64::from(raw) + u64::from(rva - va))
                    .map_err(|_| PdbError::new("debug directory beyond the address space"));
            }
        }
        Err(PdbError::new("debug directory RVA outside every section"))
    };
    let start = to_offset(debug_rva)?;
    for entry in 0..debug_size / 28 {
        let e = start
            .checked_add(entry * 28)
            .ok_or_else(|| PdbError::new("debug directory beyond the address space"))?;
        let stamp = read_u32(image, e + 4)?;
        let minor = read_u16(image, e + 10)?;
        let kind = read_u32(image, e + 12)?;
        let size = read_u32(image, e + 16)? as usize;
        let pointer = read_u32(image, e + 24)? as usize;
        let data = image
            .get(pointer..pointer.saturating_add(size))
            .ok_or_else(|| PdbError::new("debug directory entry outside the file"))?;
        match kind {
            DEBUG_TYPE_CODEVIEW if data.starts_with(b"RSDS") && data.len() > 24 => {
                let path = &data[24..];
                let end = path.iter().position(|&b| b == 0).unwrap_or(path.len());
                out.codeview_path = Some(String::from_utf8_lossy(&path[..end]).into_owned());
                if minor == PORTABLE_CODEVIEW_MINOR {
                    let mut id = [0u8; 20];
                    id[..16].copy_from_slice(&data[4..20]);
                    id[16..].copy_from_slice(&stamp.to_le_bytes());
                    out.portable_pdb_id = Some(id);
                }
            }
            DEBUG_TYPE_EMBEDDED_PORTABLE_PDB => {
                out.embedded_pdb = Some(embedded_pdb(data)?);
            }
            _ => {}
        }
    }
    Ok(out)
}

/// The data of an Embedded Portable PDB entry: "MPDB", the uncompressed
/// size, then the DEFLATE-compressed PDB.
pub fn embedded_pdb(data: &[u8]) -> Result<Vec<u8>, PdbError> {
    if read_u32(data, 0)? != MPDB {
        return Err(PdbError::new(
            "embedded PDB entry without the MPDB signature",
        ));
    }
    let size = read_u32(data, 4)? as usize;
    if size > MAX_EMBEDDED_PDB {
        return Err(PdbError::new("embedded PDB larger than 256 MiB"));
    }
    let pdb = inflate(&data[8..], size)
        .map_err(|e| PdbError::new(alloc::format!("embedded PDB: {e}")))?;
    if pdb.len() != size {
        return Err(PdbError::new(
            "embedded PDB inflates to another size than its header says",
        ));
    }
    Ok(pdb)
}
