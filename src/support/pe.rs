//! The one reader of PE image headers: the data directories and the
//! sections that map an RVA to a file offset. Coverage reads the debug
//! directory through it (`coverage/pe.rs`), instrumentation the CLI header
//! (`instrument/assembly_file.rs`).
//!
//! Transcribed from the Microsoft PE/COFF specification (ECMA-335 II.25.2
//! repeats the parts a CLI image uses):
//! * the DOS header's `e_lfanew` at 0x3C, then the signature `PE\0\0`;
//! * the COFF file header (20 bytes): `NumberOfSections` at +2,
//!   `SizeOfOptionalHeader` at +16;
//! * the optional header's magic (0x10B PE32, 0x20B PE32+), whose data
//!   directories (8 bytes each: RVA, size) start at 96 (PE32) or 112
//!   (PE32+), `NumberOfRvaAndSizes` in the 4 bytes before them;
//! * the section table after the optional header, 40 bytes a section:
//!   `VirtualSize` at +8, `VirtualAddress` at +12, `SizeOfRawData` at +16,
//!   `PointerToRawData` at +20.

use alloc::format;
use alloc::string::String;

use super::bytes::ByteReader;

/// Why an image's headers could not be read; the message says what.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct PeError(pub(crate) String);

impl core::fmt::Display for PeError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(&self.0)
    }
}

/// A PE image whose headers were read: the bytes, where its data
/// directories and section table are.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PeImage<'a> {
    image: &'a [u8],
    directories: usize,
    directory_count: u32,
    section_table: usize,
    sections: usize,
}

fn u16_at(data: &[u8], at: usize, what: &str) -> Result<u16, PeError> {
    ByteReader::at(data, at)
        .u16()
        .map_err(|_| PeError(format!("truncated {what}")))
}

fn u32_at(data: &[u8], at: usize, what: &str) -> Result<u32, PeError> {
    ByteReader::at(data, at)
        .u32()
        .map_err(|_| PeError(format!("truncated {what}")))
}

impl<'a> PeImage<'a> {
    /// Reads the headers of `image` (the bytes of a PE file).
    pub(crate) fn parse(image: &'a [u8]) -> Result<PeImage<'a>, PeError> {
        if image.get(..2) != Some(b"MZ") {
            return Err(PeError("not a PE file (no MZ)".into()));
        }
        let pe = u32_at(image, 0x3C, "DOS header")? as usize;
        if image.get(pe..pe.saturating_add(4)) != Some(b"PE\0\0") {
            return Err(PeError("not a PE file (no PE signature)".into()));
        }
        let coff = pe + 4;
        let sections = u16_at(image, coff + 2, "COFF header")? as usize;
        let optional_size = u16_at(image, coff + 16, "COFF header")? as usize;
        let optional = coff + 20;
        let magic = u16_at(image, optional, "optional header")?;
        let directories = match magic {
            0x10B => optional + 96,
            0x20B => optional + 112,
            _ => {
                return Err(PeError(format!(
                    "unknown PE optional header magic {magic:#x}"
                )))
            }
        };
        let directory_count = u32_at(image, directories - 4, "optional header")?;
        Ok(PeImage {
            image,
            directories,
            directory_count,
            section_table: optional + optional_size,
            sections,
        })
    }

    /// Data directory `index` as (RVA, size); `None` when the image has
    /// fewer directories or this one is empty (RVA or size 0).
    pub(crate) fn directory(&self, index: usize) -> Result<Option<(u32, u32)>, PeError> {
        if index >= self.directory_count as usize {
            return Ok(None);
        }
        let at = self.directories + index * 8;
        let rva = u32_at(self.image, at, "data directories")?;
        let size = u32_at(self.image, at + 4, "data directories")?;
        Ok((rva != 0 && size != 0).then_some((rva, size)))
    }

    /// The file offset of `rva`: in the section whose file data
    /// (`SizeOfRawData` bytes from its `VirtualAddress`) holds it.
    pub(crate) fn offset_of(&self, rva: u32) -> Result<usize, PeError> {
        for n in 0..self.sections {
            let h = self.section_table.saturating_add(n * 40);
            let virtual_address = u32_at(self.image, h.saturating_add(12), "section table")?;
            let raw_size = u32_at(self.image, h.saturating_add(16), "section table")?;
            let raw_at = u32_at(self.image, h.saturating_add(20), "section table")?;
            let within = rva.wrapping_sub(virtual_address);
            if rva >= virtual_address && within < raw_size {
                return usize::try_from(u64::from(raw_at) + u64::from(within))
                    .map_err(|_| PeError(format!("RVA {rva:#x} is beyond the address space")));
            }
        }
        Err(PeError(format!("RVA {rva:#x} is in no section")))
    }

    /// The `size` bytes at `rva`, which must lie in the file.
    pub(crate) fn slice(&self, rva: u32, size: usize, what: &str) -> Result<&'a [u8], PeError> {
        let at = self.offset_of(rva)?;
        at.checked_add(size)
            .and_then(|end| self.image.get(at..end))
            .ok_or_else(|| PeError(format!("{what} extends past the end of the file")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DEBUG_DIRECTORY: usize = 6;
    const CLI_HEADER: usize = 14;
    use alloc::vec;
    use alloc::vec::Vec;

    /// A PE32+ image with one section (RVA 0x2000, file offset 0x200,
    /// `raw` bytes) and directory `index` naming (rva, size).
    fn image(index: usize, rva: u32, size: u32, raw: u32) -> Vec<u8> {
        let mut v = vec![0u8; 0x200 + raw as usize];
        v[..2].copy_from_slice(b"MZ");
        v[0x3C..0x40].copy_from_slice(&0x40u32.to_le_bytes());
        v[0x40..0x44].copy_from_slice(b"PE\0\0");
        let coff = 0x44;
        v[coff + 2..coff + 4].copy_from_slice(&1u16.to_le_bytes());
        v[coff + 16..coff + 18].copy_from_slice(&240u16.to_le_bytes());
        let optional = coff + 20;
        v[optional..optional + 2].copy_from_slice(&0x20Bu16.to_le_bytes());
        let directories = optional + 112;
        v[directories - 4..directories].copy_from_slice(&16u32.to_le_bytes());
        let d = directories + index * 8;
        v[d..d + 4].copy_from_slice(&rva.to_le_bytes());
        v[d + 4..d + 8].copy_from_slice(&size.to_le_bytes());
        let s = optional + 240;
        v[s + 8..s + 12].copy_from_slice(&raw.to_le_bytes());
        v[s + 12..s + 16].copy_from_slice(&0x2000u32.to_le_bytes());
        v[s + 16..s + 20].copy_from_slice(&raw.to_le_bytes());
        v[s + 20..s + 24].copy_from_slice(&0x200u32.to_le_bytes());
        v
    }

    #[test]
    fn a_directory_maps_through_its_section_to_the_file() {
        let v = image(CLI_HEADER, 0x2010, 8, 0x40);
        let pe = PeImage::parse(&v).unwrap();
        assert_eq!(pe.directory(CLI_HEADER).unwrap(), Some((0x2010, 8)));
        assert_eq!(pe.directory(DEBUG_DIRECTORY).unwrap(), None);
        assert_eq!(pe.directory(16).unwrap(), None);
        assert_eq!(pe.offset_of(0x2010).unwrap(), 0x210);
        assert_eq!(pe.slice(0x2010, 8, "x").unwrap().len(), 8);
        // The section's file data ends at RVA 0x2040.
        assert_eq!(
            pe.offset_of(0x2040).unwrap_err().0,
            "RVA 0x2040 is in no section"
        );
        assert_eq!(
            pe.slice(0x2038, 16, "the CLI header").unwrap_err().0,
            "the CLI header extends past the end of the file"
        );
    }

    #[test]
    fn every_truncation_is_an_error_and_never_a_panic() {
        let v = image(DEBUG_DIRECTORY, 0x2000, 28, 0x40);
        for len in 0..v.len() {
            if let Ok(pe) = PeImage::parse(&v[..len]) {
                let _ = pe.directory(DEBUG_DIRECTORY);
                let _ = pe.slice(0x2000, 28, "x");
            }
        }
        assert_eq!(PeImage::parse(b"MZ").unwrap_err().0, "truncated DOS header");
        assert_eq!(
            PeImage::parse(b"nope").unwrap_err().0,
            "not a PE file (no MZ)"
        );
    }
}
