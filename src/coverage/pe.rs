//! Finding an assembly's Portable PDB: the debug directory of its PE file.
//!
//! The headers (the debug directory is data directory 6) are read by the
//! crate's one PE reader, `support::pe`. Formats transcribed from:
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
use crate::support::pe::{PeError, PeImage};

/// `IMAGE_DEBUG_TYPE_CODEVIEW`.
pub const DEBUG_TYPE_CODEVIEW: u32 = 2;
/// Data directory 6: the debug directory (PE/COFF specification 2.4.1).
const DEBUG_DIRECTORY: usize = 6;
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

fn pe_error(e: PeError) -> PdbError {
    PdbError::new(e.0)
}

/// Reads the debug directory of a PE image (the bytes of an assembly file).
/// An image without a debug directory has an empty one; a malformed image
/// or embedded PDB is an error.
pub fn debug_directory(image: &[u8]) -> Result<DebugDirectory, PdbError> {
    let pe = PeImage::parse(image).map_err(pe_error)?;
    let mut out = DebugDirectory::default();
    let Some((debug_rva, debug_size)) = pe.directory(DEBUG_DIRECTORY).map_err(pe_error)? else {
        return Ok(out);
    };
    let entries = pe
        .slice(debug_rva, debug_size as usize, "the debug directory")
        .map_err(pe_error)?;
    for entry in entries.chunks_exact(28) {
        let stamp = read_u32(entry, 4)?;
        let minor = read_u16(entry, 10)?;
        let kind = read_u32(entry, 12)?;
        let size = read_u32(entry, 16)? as usize;
        let pointer = read_u32(entry, 24)? as usize;
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
