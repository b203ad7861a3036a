//! A Portable PDB reader: documents, sequence points, state machines and
//! source link, from the PDB's own metadata (zero dependencies).
//!
//! Formats transcribed from:
//! * the metadata root, stream headers, `#~` table stream, heaps and index
//!   sizes: ECMA-335 6th edition, Partition II 24.2.1-24.2.6;
//! * compressed integers: ECMA-335 II.23.2 (decoded by the crate's byte
//!   reader);
//! * the `#Pdb` stream, the debug tables 0x30-0x37, the document name blob
//!   and the sequence points blob: "Portable PDB v1.0: Format
//!   Specification", dotnet/runtime `docs/design/specs/PortablePdb-Metadata.md`.
//!
//! Every malformed input is an [`Err`] ([`PdbError`]); nothing is read out of
//! bounds and sizes are checked before anything is allocated for them.

use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::fmt;

use crate::support::bytes::{ByteReader, CompressedError, Truncated};
use crate::GUID;

/// A malformed or unsupported PDB: what was wrong, in words.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PdbError(String);

impl PdbError {
    pub(crate) fn new(what: impl Into<String>) -> PdbError {
        PdbError(what.into())
    }
}

impl fmt::Display for PdbError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(feature = "std")]
impl std::error::Error for PdbError {}

fn err<T>(what: &str) -> Result<T, PdbError> {
    Err(PdbError(what.to_string()))
}

/// ECMA-335 II.24.2.1: the metadata root's signature, "BSJB".
pub const METADATA_SIGNATURE: u32 = 0x424A_5342;
/// The hidden sequence point's line (PortablePdb-Metadata.md, "Sequence
/// Points Blob").
pub const HIDDEN_LINE: u32 = 0x00FE_EFEE;
/// Kind GUID of the Source Link custom debug information
/// (PortablePdb-Metadata.md, "Source Link").
pub const SOURCE_LINK_KIND: GUID = GUID::from_u128(0xCC110556_A091_4D38_9FEC_25AB9A351A6A);
/// The longest document name accepted (bytes).
const MAX_NAME: usize = 32 * 1024;

/// The sequence points (visible and hidden, counted once per method that
/// lists them) a PDB of `n` bytes may hold: `POINTS_PER_BYTE * n`, at
/// least [`POINTS_FLOOR`]. A point takes two bytes or more of its blob, so
/// only a PDB whose methods share blobs many times over comes near it (a
/// 68 KB PDB whose 2,000 methods share one blob of 12,000 points would
/// expand to 24,000,000); such a PDB is an error, found after at most this
/// many points were decoded.
pub const POINTS_PER_BYTE: u64 = 4;
/// See [`POINTS_PER_BYTE`].
pub const POINTS_FLOOR: u64 = 1 << 16;
/// The bytes of document names and hashes a PDB of `n` bytes may expand
/// to: `NAME_BYTES_PER_BYTE * n`, at least [`NAME_BYTES_FLOOR`] (names share
/// their parts, the directories, so they legitimately expand).
pub const NAME_BYTES_PER_BYTE: u64 = 16;
/// See [`NAME_BYTES_PER_BYTE`].
pub const NAME_BYTES_FLOOR: u64 = 1 << 20;

/// What is left of a limit proportional to the input.
struct Budget {
    left: u64,
    what: &'static str,
}

impl Budget {
    fn new(input: usize, per_byte: u64, floor: u64, what: &'static str) -> Budget {
        Budget {
            left: (input as u64).saturating_mul(per_byte).max(floor),
            what,
        }
    }
    /// Takes `n` from what is left; an error once it is spent.
    fn take(&mut self, n: u64) -> Result<(), PdbError> {
        self.left = self.left.checked_sub(n).ok_or_else(|| {
            PdbError(alloc::format!(
                "{}: more than the input's size allows (blobs shared over and over?)",
                self.what
            ))
        })?;
        Ok(())
    }
}

/// Table numbers (ECMA-335 II.22 for the type system's, the Portable PDB
/// spec for 0x30-0x37).
mod table {
    pub(super) const METHOD_DEF: usize = 0x06;
    pub(super) const DOCUMENT: usize = 0x30;
    pub(super) const METHOD_DEBUG_INFORMATION: usize = 0x31;
    pub(super) const LOCAL_SCOPE: usize = 0x32;
    pub(super) const LOCAL_VARIABLE: usize = 0x33;
    pub(super) const LOCAL_CONSTANT: usize = 0x34;
    pub(super) const IMPORT_SCOPE: usize = 0x35;
    pub(super) const STATE_MACHINE_METHOD: usize = 0x36;
    pub(super) const CUSTOM_DEBUG_INFORMATION: usize = 0x37;
    /// The tables of the HasCustomDebugInformation coded index, by tag
    /// (PortablePdb-Metadata.md, "CustomDebugInformation Table"): MethodDef,
    /// Field, TypeRef, TypeDef, Param, InterfaceImpl, MemberRef, Module,
    /// DeclSecurity, Property, Event, StandAloneSig, ModuleRef, TypeSpec,
    /// Assembly, AssemblyRef, File, ExportedType, ManifestResource,
    /// GenericParam, GenericParamConstraint, MethodSpec, Document,
    /// LocalScope, LocalVariable, LocalConstant, ImportScope.
    pub(super) const HAS_CUSTOM_DEBUG_INFORMATION: [usize; 27] = [
        0x06, 0x04, 0x01, 0x02, 0x08, 0x09, 0x0A, 0x00, 0x0E, 0x17, 0x14, 0x11, 0x1A, 0x1B, 0x20,
        0x23, 0x26, 0x27, 0x28, 0x2A, 0x2C, 0x2B, 0x30, 0x32, 0x33, 0x34, 0x35,
    ];
    /// Its tag for Module.
    pub(super) const HCDI_MODULE_TAG: u32 = 7;
}

/// The crate's byte reader ([`ByteReader`]) with this module's errors: each
/// read names what it reads, for the message.
struct Cursor<'a>(ByteReader<'a>);

fn truncated(what: &str) -> impl Fn(Truncated) -> PdbError + '_ {
    move |_| PdbError(alloc::format!("truncated {what}"))
}

fn bad_compressed(what: &str) -> impl Fn(CompressedError) -> PdbError + '_ {
    move |_| PdbError(alloc::format!("bad compressed integer in {what}"))
}

impl<'a> Cursor<'a> {
    fn new(data: &'a [u8]) -> Self {
        Cursor(ByteReader::new(data))
    }
    /// From `pos`; a position past the end reads as truncated.
    fn at(data: &'a [u8], pos: usize) -> Self {
        Cursor(ByteReader::at(data, pos))
    }
    fn bytes(&mut self, n: usize, what: &str) -> Result<&'a [u8], PdbError> {
        self.0.take(n).map_err(truncated(what))
    }
    fn u8(&mut self, what: &str) -> Result<u8, PdbError> {
        self.0.u8().map_err(truncated(what))
    }
    fn u16(&mut self, what: &str) -> Result<u16, PdbError> {
        self.0.u16().map_err(truncated(what))
    }
    fn u32(&mut self, what: &str) -> Result<u32, PdbError> {
        self.0.u32().map_err(truncated(what))
    }
    fn u64(&mut self, what: &str) -> Result<u64, PdbError> {
        self.0.u64().map_err(truncated(what))
    }
    /// A 2- or 4-byte index (ECMA-335 II.24.2.6).
    fn index(&mut self, wide: bool, what: &str) -> Result<u32, PdbError> {
        if wide {
            self.u32(what)
        } else {
            self.u16(what).map(u32::from)
        }
    }
    fn at_end(&self) -> bool {
        self.0.is_empty()
    }
    /// ECMA-335 II.23.2 unsigned compressed integer.
    fn cu32(&mut self, what: &str) -> Result<u32, PdbError> {
        self.0.compressed_u32().map_err(bad_compressed(what))
    }
    /// ECMA-335 II.23.2 signed compressed integer.
    fn ci32(&mut self, what: &str) -> Result<i32, PdbError> {
        self.0.compressed_i32().map_err(bad_compressed(what))
    }
}

/// A source document (a row of the Document table).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Document {
    /// Its name, usually the full path the compiler saw.
    pub name: String,
    /// The hash algorithm (SHA-1 `ff1816ec-…`, SHA-256 `8829d00f-…`), if any.
    pub hash_algorithm: Option<GUID>,
    /// The checksum of the file the compiler read.
    pub hash: Vec<u8>,
    /// The language (C# `3f5162f8-07c6-11d3-9053-00c04fa302a1`), if given.
    pub language: Option<GUID>,
}

/// A visible sequence point (hidden points, line 0xFEEFEE, are left out).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SequencePoint {
    /// The IL offset the point starts at.
    pub il_offset: u32,
    /// Its document: an index into [`PortablePdb::documents`].
    pub document: usize,
    /// First line (1-based).
    pub start_line: u32,
    /// First column (1-based).
    pub start_column: u16,
    /// Last line.
    pub end_line: u32,
    /// Column after the last character.
    pub end_column: u16,
}

/// The debug information of one method (a MethodDebugInformation row).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MethodDebugInfo {
    /// The visible sequence points, by IL offset.
    pub sequence_points: Vec<SequencePoint>,
    /// The IL offsets of the hidden sequence points.
    pub hidden_offsets: Vec<u32>,
}

/// A parsed Portable PDB.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PortablePdb {
    /// The PDB id (the `#Pdb` stream's first 20 bytes: the MVID-like GUID
    /// and the stamp the assembly's CodeView entry repeats).
    pub id: [u8; 20],
    /// The entry point's MethodDef token (0 if none).
    pub entry_point: u32,
    /// The Document table.
    pub documents: Vec<Document>,
    /// The MethodDebugInformation table, indexed by MethodDef row - 1.
    pub methods: Vec<MethodDebugInfo>,
    /// The StateMachineMethod table: (MoveNext row, kickoff row), sorted
    /// by MoveNext row (as the spec orders the table; [`parse`](Self::parse)
    /// sorts it, and [`kickoff_method`](Self::kickoff_method) searches it
    /// by halves).
    pub state_machines: Vec<(u32, u32)>,
    /// The module's Source Link JSON, if the PDB carries one.
    pub source_link: Option<String>,
}

/// The heaps of the PDB's metadata.
struct Heaps<'a> {
    strings: &'a [u8],
    blob: &'a [u8],
    guid: &'a [u8],
}

impl<'a> Heaps<'a> {
    /// ECMA-335 II.24.2.4: a blob is its compressed length, then its bytes.
    fn blob(&self, index: u32) -> Result<&'a [u8], PdbError> {
        let index = index as usize;
        if index >= self.blob.len() {
            return if index == 0 {
                Ok(&[])
            } else {
                err("blob index out of range")
            };
        }
        let mut c = Cursor::at(self.blob, index);
        let len = c.cu32("a blob's length")? as usize;
        c.bytes(len, "blob")
    }
    /// ECMA-335 II.24.2.5: 1-based 16-byte GUIDs; 0 is nil.
    fn guid(&self, index: u32) -> Result<Option<GUID>, PdbError> {
        if index == 0 {
            return Ok(None);
        }
        // The heap stores GUIDs in their in-memory (little-endian fields) layout.
        let guid = (index as usize - 1)
            .checked_mul(16)
            .and_then(|start| ByteReader::at(self.guid, start).guid().ok())
            .ok_or_else(|| PdbError::new("GUID index out of range"))?;
        Ok(Some(guid))
    }
}

impl PortablePdb {
    /// Parses a Portable PDB (the content of a `.pdb` file, or the inflated
    /// content of an embedded one).
    pub fn parse(data: &[u8]) -> Result<PortablePdb, PdbError> {
        if data.starts_with(b"Microsoft C/C++ MSF 7.00") {
            return err("a Windows (MSF) PDB, not a Portable PDB: compile with -debug:portable");
        }
        // ECMA-335 II.24.2.1: the metadata root.
        let mut c = Cursor::new(data);
        if c.u32("metadata root")? != METADATA_SIGNATURE {
            return err("no metadata root (signature BSJB): not a Portable PDB");
        }
        let _major = c.u16("metadata root")?;
        let _minor = c.u16("metadata root")?;
        let _reserved = c.u32("metadata root")?;
        let version_len = c.u32("metadata root")? as usize;
        if version_len > 255 {
            return err("metadata version string longer than 255 bytes");
        }
        c.bytes(version_len, "metadata version string")?;
        let _flags = c.u16("metadata root")?;
        let stream_count = c.u16("metadata root")?;
        let (mut pdb, mut tables, mut strings, mut blob, mut guid) = (None, None, None, None, None);
        for _ in 0..stream_count {
            let offset = c.u32("stream header")? as usize;
            let size = c.u32("stream header")? as usize;
            // The name: ASCII, NUL-terminated, padded to 4 bytes, at most 32.
            let rest = c.0.rest();
            let len = rest
                .iter()
                .take(32)
                .position(|&b| b == 0)
                .ok_or_else(|| PdbError::new("stream name not terminated within 32 bytes"))?;
            let name = &rest[..len];
            c.bytes((len + 4) & !3, "stream name")?;
            let body = offset
                .checked_add(size)
                .and_then(|end| data.get(offset..end))
                .ok_or_else(|| PdbError::new("stream out of the file's bounds"))?;
            match name {
                b"#Pdb" => pdb = Some(body),
                b"#~" => tables = Some(body),
                b"#-" => return err("uncompressed metadata tables (#-) are not supported"),
                b"#Strings" => strings = Some(body),
                b"#Blob" => blob = Some(body),
                b"#GUID" => guid = Some(body),
                _ => {}
            }
        }
        let pdb_stream = pdb.ok_or_else(|| PdbError::new("no #Pdb stream: not a Portable PDB"))?;
        let tables = tables.ok_or_else(|| PdbError::new("no #~ stream"))?;
        let heaps = Heaps {
            strings: strings.unwrap_or(&[]),
            blob: blob.unwrap_or(&[]),
            guid: guid.unwrap_or(&[]),
        };
        let _ = heaps.strings;

        // The #Pdb stream (PortablePdb-Metadata.md, "#Pdb stream").
        let mut p = Cursor::new(pdb_stream);
        let mut out = PortablePdb::default();
        out.id.copy_from_slice(p.bytes(20, "#Pdb id")?);
        out.entry_point = p.u32("#Pdb entry point")?;
        let referenced = p.u64("#Pdb referenced tables")?;
        let mut rows = [0u32; 64];
        for (t, count) in rows.iter_mut().enumerate() {
            if referenced >> t & 1 == 1 {
                if t >= table::DOCUMENT {
                    return err("#Pdb refers to a debug table as a type-system table");
                }
                *count = p.u32("#Pdb TypeSystemTableRows")?;
            }
        }

        // The #~ stream (ECMA-335 II.24.2.6).
        let mut t = Cursor::new(tables);
        let _reserved = t.u32("#~ header")?;
        let _major = t.u8("#~ header")?;
        let _minor = t.u8("#~ header")?;
        let heap_sizes = t.u8("#~ header")?;
        let _reserved = t.u8("#~ header")?;
        let valid = t.u64("#~ header")?;
        let _sorted = t.u64("#~ header")?;
        for (n, count) in rows.iter_mut().enumerate() {
            if valid >> n & 1 == 1 {
                if !(table::DOCUMENT..=table::CUSTOM_DEBUG_INFORMATION).contains(&n) {
                    return err(
                        "a PDB's #~ stream holds a table other than the debug tables 0x30-0x37",
                    );
                }
                *count = t.u32("#~ row counts")?;
            }
        }
        let wide_string = heap_sizes & 0x01 != 0;
        let wide_guid = heap_sizes & 0x02 != 0;
        let wide_blob = heap_sizes & 0x04 != 0;
        let wide = |t: usize| rows[t] >= 1 << 16;
        let hcdi_max = table::HAS_CUSTOM_DEBUG_INFORMATION
            .iter()
            .map(|&t| rows[t])
            .max()
            .unwrap_or(0);
        // Coded index with a 5-bit tag: 2 bytes while rows < 2^(16-5).
        let wide_hcdi = hcdi_max >= 1 << 11;
        let size = |w: bool| if w { 4u64 } else { 2 };
        let (s, g, b) = (size(wide_string), size(wide_guid), size(wide_blob));
        let idx = |t: usize| size(wide(t));
        // Row sizes from the columns of PortablePdb-Metadata.md.
        let row_size = |n: usize| -> u64 {
            match n {
                table::DOCUMENT => b + g + b + g,
                table::METHOD_DEBUG_INFORMATION => idx(table::DOCUMENT) + b,
                table::LOCAL_SCOPE => {
                    idx(table::METHOD_DEF)
                        + idx(table::IMPORT_SCOPE)
                        + idx(table::LOCAL_VARIABLE)
                        + idx(table::LOCAL_CONSTANT)
                        + 8
                }
                table::LOCAL_VARIABLE => 4 + s,
                table::LOCAL_CONSTANT => s + b,
                table::IMPORT_SCOPE => idx(table::IMPORT_SCOPE) + b,
                table::STATE_MACHINE_METHOD => 2 * idx(table::METHOD_DEF),
                _ => size(wide_hcdi) + g + b,
            }
        };
        let mut starts = [0usize; 8];
        let mut at = t.0.pos() as u64;
        for n in table::DOCUMENT..=table::CUSTOM_DEBUG_INFORMATION {
            starts[n - table::DOCUMENT] = at as usize;
            at += u64::from(rows[n]) * row_size(n);
            if at > tables.len() as u64 {
                return err("#~ tables extend past the end of the stream");
            }
        }
        let table_cursor = |n: usize| Cursor::at(tables, starts[n - table::DOCUMENT]);

        // Document table.
        let mut names = Budget::new(
            data.len(),
            NAME_BYTES_PER_BYTE,
            NAME_BYTES_FLOOR,
            "document names and hashes",
        );
        let mut c = table_cursor(table::DOCUMENT);
        for _ in 0..rows[table::DOCUMENT] {
            let name = c.index(wide_blob, "Document")?;
            let hash_algorithm = heaps.guid(c.index(wide_guid, "Document")?)?;
            let hash = heaps.blob(c.index(wide_blob, "Document")?)?;
            names.take(hash.len() as u64)?;
            let hash = hash.to_vec();
            let language = heaps.guid(c.index(wide_guid, "Document")?)?;
            out.documents.push(Document {
                name: document_name(&heaps, name, &mut names)?,
                hash_algorithm,
                hash,
                language,
            });
        }

        // MethodDebugInformation table.
        let mut c = table_cursor(table::METHOD_DEBUG_INFORMATION);
        let wide_document = wide(table::DOCUMENT);
        let mut points = Budget::new(data.len(), POINTS_PER_BYTE, POINTS_FLOOR, "sequence points");
        for _ in 0..rows[table::METHOD_DEBUG_INFORMATION] {
            let document = c.index(wide_document, "MethodDebugInformation")?;
            let blob = c.index(wide_blob, "MethodDebugInformation")?;
            let info = if blob == 0 {
                MethodDebugInfo::default()
            } else {
                sequence_points(
                    heaps.blob(blob)?,
                    document,
                    out.documents.len(),
                    &mut points,
                )?
            };
            out.methods.push(info);
        }

        // StateMachineMethod table.
        let mut c = table_cursor(table::STATE_MACHINE_METHOD);
        let wide_method = wide(table::METHOD_DEF);
        for _ in 0..rows[table::STATE_MACHINE_METHOD] {
            let move_next = c.index(wide_method, "StateMachineMethod")?;
            let kickoff = c.index(wide_method, "StateMachineMethod")?;
            out.state_machines.push((move_next, kickoff));
        }
        out.state_machines.sort_by_key(|&(move_next, _)| move_next);

        // CustomDebugInformation table: the module's Source Link (the last
        // row's, decoded once).
        let mut c = table_cursor(table::CUSTOM_DEBUG_INFORMATION);
        let mut source_link = None;
        for _ in 0..rows[table::CUSTOM_DEBUG_INFORMATION] {
            let parent = c.index(wide_hcdi, "CustomDebugInformation")?;
            let kind = heaps.guid(c.index(wide_guid, "CustomDebugInformation")?)?;
            let value = c.index(wide_blob, "CustomDebugInformation")?;
            if parent & 0x1F == table::HCDI_MODULE_TAG && kind == Some(SOURCE_LINK_KIND) {
                source_link = Some(value);
            }
        }
        if let Some(value) = source_link {
            let text = core::str::from_utf8(heaps.blob(value)?)
                .map_err(|_| PdbError::new("Source Link is not UTF-8"))?;
            out.source_link = Some(text.to_string());
        }
        Ok(out)
    }

    /// The debug information of the method with this MethodDef token
    /// (`0x06xxxxxx`), if the PDB has any.
    pub fn method(&self, method_def: u32) -> Option<&MethodDebugInfo> {
        if method_def >> 24 != 0x06 {
            return None;
        }
        let row = (method_def & 0x00FF_FFFF) as usize;
        self.methods.get(row.checked_sub(1)?)
    }

    /// The kickoff method (the user's `async` or iterator method) of a
    /// state machine's `MoveNext`, both as MethodDef tokens.
    pub fn kickoff_method(&self, move_next: u32) -> Option<u32> {
        let row = move_next & 0x00FF_FFFF;
        let at = self
            .state_machines
            .binary_search_by_key(&row, |&(m, _)| m)
            .ok()?;
        self.state_machines
            .get(at)
            .map(|&(_, kickoff)| 0x0600_0000 | kickoff)
    }
}

/// PortablePdb-Metadata.md, "Document Name Blob": a separator (a UTF-8
/// character, or 0 for none) then parts, each a compressed #Blob index of a
/// UTF-8 string.
fn document_name(heaps: &Heaps<'_>, index: u32, budget: &mut Budget) -> Result<String, PdbError> {
    let blob = heaps.blob(index)?;
    let Some(&lead) = blob.first() else {
        return err("empty document name blob");
    };
    let sep_len = match lead {
        0x00..=0x7F => 1,
        0xC0..=0xDF => 2,
        0xE0..=0xEF => 3,
        0xF0..=0xF7 => 4,
        _ => return err("document name separator is not UTF-8"),
    };
    let sep = blob
        .get(..sep_len)
        .and_then(|s| core::str::from_utf8(s).ok())
        .ok_or_else(|| PdbError::new("document name separator is not UTF-8"))?;
    let sep = if lead == 0 { "" } else { sep };
    let mut c = Cursor::at(blob, sep_len);
    let mut name = String::new();
    let mut first = true;
    while !c.at_end() {
        let part = c.cu32("document name")?;
        let part = core::str::from_utf8(heaps.blob(part)?)
            .map_err(|_| PdbError::new("document name part is not UTF-8"))?;
        if !first {
            name.push_str(sep);
        }
        first = false;
        if name.len() + part.len() > MAX_NAME {
            return err("document name longer than 32 KiB");
        }
        // Each part counts one at least (an empty part too).
        budget.take(1 + (sep.len() + part.len()) as u64)?;
        name.push_str(part);
    }
    Ok(name)
}

/// PortablePdb-Metadata.md, "Sequence Points Blob": a header (local
/// signature, initial document when the method spans several), then
/// sequence-point, hidden-sequence-point and document records, deltas
/// against the previous (non-hidden) point.
fn sequence_points(
    blob: &[u8],
    document: u32,
    documents: usize,
    budget: &mut Budget,
) -> Result<MethodDebugInfo, PdbError> {
    const WHAT: &str = "sequence points";
    let check_document = |d: u32| -> Result<usize, PdbError> {
        if d == 0 || d as usize > documents {
            return err("sequence points name a document that does not exist");
        }
        Ok(d as usize - 1)
    };
    let mut c = Cursor::new(blob);
    let _local_signature = c.cu32(WHAT)?;
    let mut doc = if document == 0 {
        check_document(c.cu32(WHAT)?)?
    } else {
        check_document(document)?
    };
    let mut out = MethodDebugInfo::default();
    let mut il: Option<u32> = None;
    let mut previous: Option<(u32, u32)> = None; // (start line, start column)
    while !c.at_end() {
        // Each record (point, hidden point, document change) counts.
        budget.take(1)?;
        let delta_il = c.cu32(WHAT)?;
        if delta_il == 0 && il.is_some() {
            doc = check_document(c.cu32(WHAT)?)?;
            continue;
        }
        let offset = match il {
            None => delta_il,
            Some(prev) => prev
                .checked_add(delta_il)
                .ok_or_else(|| PdbError::new("sequence point IL offset overflows"))?,
        };
        if offset >= 0x2000_0000 {
            return err("sequence point IL offset out of range");
        }
        il = Some(offset);
        let delta_lines = c.cu32(WHAT)?;
        let delta_columns = if delta_lines == 0 {
            i64::from(c.cu32(WHAT)?)
        } else {
            i64::from(c.ci32(WHAT)?)
        };
        if delta_lines == 0 && delta_columns == 0 {
            out.hidden_offsets.push(offset);
            continue;
        }
        let (start_line, start_column) = match previous {
            None => (i64::from(c.cu32(WHAT)?), i64::from(c.cu32(WHAT)?)),
            Some((line, column)) => (
                i64::from(line) + i64::from(c.ci32(WHAT)?),
                i64::from(column) + i64::from(c.ci32(WHAT)?),
            ),
        };
        let end_line = start_line + i64::from(delta_lines);
        let end_column = start_column + delta_columns;
        let line_ok = |l: i64| (0..0x2000_0000).contains(&l) && l != i64::from(HIDDEN_LINE);
        let column_ok = |col: i64| (0..0x1_0000).contains(&col);
        if !line_ok(start_line) || !line_ok(end_line) {
            return err("sequence point line out of range");
        }
        if !column_ok(start_column) || !column_ok(end_column) {
            return err("sequence point column out of range");
        }
        previous = Some((start_line as u32, start_column as u32));
        out.sequence_points.push(SequencePoint {
            il_offset: offset,
            document: doc,
            start_line: start_line as u32,
            start_column: start_column as u16,
            end_line: end_line as u32,
            end_column: end_column as u16,
        });
    }
    Ok(out)
}
