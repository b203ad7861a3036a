//! The streaming parser: bytes in, [`Event`]s out.

use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;

use super::error::{Error, ErrorKind};
use crate::event_format::{clr_fields, decode_fields, Field, Metadata, PayloadError, Value};
use crate::support::bytes::ByteReader;
use crate::GUID;

/// The largest block the parser buffers (16 MiB; the runtime writes blocks
/// of at most about 100 KB): a larger block size is an error, not an
/// allocation.
pub const MAX_BLOCK_SIZE: u32 = 16 << 20;

/// The most kinds of events (metadata ids) a stream may define.
const MAX_METADATA: usize = 1 << 16;
/// The most capturing threads the reader tracks between sequence points.
const MAX_THREADS: usize = 1 << 20;

/// The magic at the start of every stream.
const MAGIC: &[u8; 8] = b"Nettrace";
/// The serializer's signature after the magic (format versions 4 and 5).
const SERIALIZER: &[u8; 20] = b"!FastSerialization.1";
/// FastSerialization tags.
const TAG_NULL_REFERENCE: u8 = 1;
const TAG_BEGIN_PRIVATE_OBJECT: u8 = 5;
const TAG_END_OBJECT: u8 = 6;
/// The longest object type name the parser accepts (the longest it knows
/// is 13 bytes).
const MAX_TYPE_NAME: u32 = 64;
/// The `Trace` object's fields: `SYSTEMTIME` (16), QPC (8), QPC frequency
/// (8), pointer size, process id, processor count, sampling rate (4 each).
const TRACE_FIELDS: usize = 48;

/// A `SYSTEMTIME`: the trace's start in UTC.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[allow(missing_docs)]
pub struct SystemTime {
    pub year: u16,
    pub month: u16,
    pub day_of_week: u16,
    pub day: u16,
    pub hour: u16,
    pub minute: u16,
    pub second: u16,
    pub millisecond: u16,
}

/// The `Trace` object: what holds for the whole stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceInfo {
    /// The `Trace` object's version (4 for the runtime's streams).
    pub version: u32,
    /// When the session started, in UTC.
    pub sync_time_utc: SystemTime,
    /// The QPC timestamp at that time.
    pub sync_time_qpc: i64,
    /// QPC ticks per second.
    pub qpc_frequency: i64,
    /// The traced process's pointer size (4 or 8).
    pub pointer_size: u8,
    /// The traced process's id.
    pub process_id: u32,
    /// Its processor count.
    pub processor_count: u32,
    /// The sample profiler's expected rate (unused by the runtime).
    pub expected_cpu_sampling_rate: u32,
}

/// Days from 1970-01-01 to a proleptic Gregorian date (H. Hinnant's
/// `days_from_civil`).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

impl TraceInfo {
    /// The wall time of a QPC timestamp, in nanoseconds since the Unix
    /// epoch (UTC); `None` when the trace's clock is unusable (a frequency
    /// of 0 or less, an invalid date).
    pub fn unix_nanos(&self, qpc: i64) -> Option<i128> {
        let t = &self.sync_time_utc;
        if self.qpc_frequency <= 0 || !(1..=12).contains(&t.month) || !(1..=31).contains(&t.day) {
            return None;
        }
        let days = days_from_civil(t.year.into(), t.month.into(), t.day.into());
        let secs = i128::from(days) * 86_400
            + i128::from(t.hour) * 3600
            + i128::from(t.minute) * 60
            + i128::from(t.second);
        let start = secs * 1_000_000_000 + i128::from(t.millisecond) * 1_000_000;
        let delta = i128::from(qpc) - i128::from(self.sync_time_qpc);
        Some(start + delta * 1_000_000_000 / i128::from(self.qpc_frequency))
    }

    /// Seconds from the session's start to a QPC timestamp (0 when the
    /// frequency is unusable).
    pub fn seconds_since_start(&self, qpc: i64) -> f64 {
        if self.qpc_frequency <= 0 {
            return 0.0;
        }
        (qpc as f64 - self.sync_time_qpc as f64) / self.qpc_frequency as f64
    }
}

/// One event.
#[derive(Clone, Debug, PartialEq)]
pub struct Event {
    /// What kind of event this is (shared by every event of the kind).
    pub metadata: Arc<Metadata>,
    /// The capturing thread's sequence number for it.
    pub sequence_number: u32,
    /// The thread the event is about.
    pub thread_id: u64,
    /// The thread that logged it.
    pub capture_thread_id: u64,
    /// The processor it was logged on.
    pub processor: u32,
    /// When, in QPC ticks ([`TraceInfo::unix_nanos`] turns it into wall time).
    pub timestamp: i64,
    /// Its activity id.
    pub activity_id: GUID,
    /// Its related activity id.
    pub related_activity_id: GUID,
    /// The id of its stack in the stream.
    pub stack_id: u32,
    /// Its stack: instruction pointers, innermost first (empty when none
    /// was captured).
    pub stack: Arc<[u64]>,
    /// Its payload.
    pub payload: Vec<u8>,
    /// Whether the writer marked it sorted (every later event is at least
    /// as late).
    pub sorted: bool,
    /// The trace's pointer size, for decoding the payload.
    pub pointer_size: u8,
}

impl Event {
    /// Its provider's name.
    pub fn provider(&self) -> &str {
        &self.metadata.provider
    }

    /// Its event id.
    pub fn event_id(&self) -> u32 {
        self.metadata.event_id
    }

    /// Its version.
    pub fn version(&self) -> u32 {
        self.metadata.version
    }

    /// Its name (empty for the runtime's own events).
    pub fn name(&self) -> &str {
        &self.metadata.name
    }

    /// The layout of its payload: the stream's metadata, or for the
    /// runtime's events, whose metadata names no fields, [`clr_fields`].
    /// `None` when neither knows it.
    pub fn layout(&self) -> Option<Vec<Field>> {
        if !self.metadata.fields.is_empty() {
            return Some(self.metadata.fields.clone());
        }
        clr_fields(self.provider(), self.event_id(), self.version())
    }

    /// Its payload, decoded by [`layout`](Self::layout).
    pub fn fields(&self) -> Result<Vec<(String, Value)>, PayloadError> {
        if !self.metadata.fields.is_empty() {
            return decode_fields(&self.metadata.fields, &self.payload, self.pointer_size);
        }
        let layout =
            clr_fields(self.provider(), self.event_id(), self.version()).ok_or(PayloadError {
                offset: 0,
                what: "no field layout is known for this event",
            })?;
        decode_fields(&layout, &self.payload, self.pointer_size)
    }
}

/// What the parser has read so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Bytes consumed.
    pub bytes: u64,
    /// Blocks read (event, metadata, stack and sequence-point blocks).
    pub blocks: u64,
    /// Events decoded.
    pub events: u64,
    /// Metadata blobs read.
    pub metadata: u64,
    /// Stacks read.
    pub stacks: u64,
    /// Sequence points read.
    pub sequence_points: u64,
    /// Events the writer dropped, from gaps in the sequence numbers of a
    /// thread and from sequence points ahead of a thread's last event.
    pub lost_events: u64,
    /// Events that referred to a stack the stream did not hold (given an
    /// empty stack).
    pub unresolved_stacks: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Header,
    Objects,
    Done,
}

/// The streaming parser: [`feed`](Parser::feed) it bytes as they come and
/// take the events with [`next_event`](Parser::next_event).
///
/// ```
/// use corprof::nettrace::Parser;
///
/// let mut parser = Parser::new();
/// parser.feed(b"Nettrace");
/// assert_eq!(parser.next_event(), Ok(None)); // needs more bytes
/// assert!(parser.finish().is_err()); // the stream ended too soon
/// ```
#[derive(Debug)]
pub struct Parser {
    buf: Vec<u8>,
    /// The first unconsumed byte of `buf`.
    start: usize,
    /// The stream offset of `buf[0]`.
    base: u64,
    /// How many bytes (from `start`) the next part needs, when known.
    need: usize,
    state: State,
    trace: Option<TraceInfo>,
    metadata: BTreeMap<u32, Arc<Metadata>>,
    stacks: BTreeMap<u32, Arc<[u64]>>,
    /// Each capturing thread's last sequence number.
    threads: BTreeMap<u64, u32>,
    /// The event block being read.
    cursor: Option<BlockCursor>,
    empty_stack: Arc<[u64]>,
    stats: Stats,
    error: Option<Error>,
}

impl Default for Parser {
    fn default() -> Parser {
        Parser::new()
    }
}

/// A LEB128 unsigned integer of at most `bits` bits.
fn varuint(r: &mut ByteReader<'_>, bits: u32) -> Result<u64, (usize, &'static str)> {
    let start = r.pos();
    let mut value = 0u64;
    let mut shift = 0u32;
    loop {
        let byte = r.u8().map_err(|_| (start, "varint truncated"))?;
        let part = u64::from(byte & 0x7F);
        // Past the last byte that can hold bits, or bits beyond the width.
        if shift >= bits || (bits - shift < 7 && part >> (bits - shift) != 0) {
            return Err((start, "varint too large"));
        }
        value |= part << shift;
        if byte & 0x80 == 0 {
            return Ok(value);
        }
        shift += 7;
    }
}

/// The previous blob's header in a block (compressed headers are deltas
/// from it).
#[derive(Debug, Default)]
struct Header {
    metadata_id: u32,
    sequence: u32,
    thread: u64,
    capture_thread: u64,
    processor: u32,
    stack_id: u32,
    timestamp: i64,
    activity: GUID,
    related: GUID,
    payload_size: u32,
}

impl Parser {
    /// A parser at the start of a stream.
    pub fn new() -> Parser {
        Parser {
            buf: Vec::new(),
            start: 0,
            base: 0,
            need: 8,
            state: State::Header,
            trace: None,
            metadata: BTreeMap::new(),
            stacks: BTreeMap::new(),
            threads: BTreeMap::new(),
            cursor: None,
            empty_stack: Arc::from(Vec::new()),
            stats: Stats::default(),
            error: None,
        }
    }

    /// Reads a whole stream held in memory: its `Trace` object and every
    /// event.
    pub fn parse_all(bytes: &[u8]) -> Result<(TraceInfo, Vec<Event>, Stats), Error> {
        let mut parser = Parser::new();
        parser.feed(bytes);
        let mut events = Vec::new();
        while let Some(event) = parser.next_event()? {
            events.push(event);
        }
        parser.finish()?;
        let trace = parser
            .trace
            .clone()
            .ok_or_else(|| Error::new(0, ErrorKind::Malformed("the stream has no Trace object")))?;
        Ok((trace, events, parser.stats))
    }

    /// Appends bytes of the stream.
    pub fn feed(&mut self, bytes: &[u8]) {
        if self.start > 0 && self.start >= self.buf.len() / 2 {
            self.buf.drain(..self.start);
            self.base += self.start as u64;
            self.start = 0;
        }
        self.buf.extend_from_slice(bytes);
    }

    /// The next event: `Ok(None)` when the parser needs more bytes (or the
    /// stream has ended: see [`is_done`](Self::is_done)). After an error,
    /// every call returns it again.
    pub fn next_event(&mut self) -> Result<Option<Event>, Error> {
        loop {
            if let Some(error) = &self.error {
                return Err(error.clone());
            }
            if self.cursor.is_some() {
                match self.next_in_block() {
                    Ok(Some(event)) => return Ok(Some(event)),
                    Ok(None) => continue,
                    Err(error) => {
                        self.error = Some(error.clone());
                        return Err(error);
                    }
                }
            }
            match self.step() {
                Ok(true) => {}
                Ok(false) => return Ok(None),
                Err(error) => {
                    self.error = Some(error.clone());
                    return Err(error);
                }
            }
        }
    }

    /// Whether the stream's end marker has been read.
    pub fn is_done(&self) -> bool {
        self.state == State::Done
    }

    /// At the end of the input: `Ok` when the stream ended with its end
    /// marker, [`ErrorKind::Truncated`] (at the offset of the unfinished
    /// part) when it did not, or the error the parser stopped at.
    pub fn finish(&self) -> Result<(), Error> {
        if let Some(error) = &self.error {
            return Err(error.clone());
        }
        if self.state == State::Done {
            return Ok(());
        }
        Err(Error::new(
            self.offset(0),
            ErrorKind::Truncated {
                needed: self.need as u64,
            },
        ))
    }

    /// The `Trace` object, once read.
    pub fn trace(&self) -> Option<&TraceInfo> {
        self.trace.as_ref()
    }

    /// What has been read so far.
    pub fn stats(&self) -> Stats {
        self.stats
    }

    /// The metadata read so far, by metadata id.
    pub fn metadata(&self) -> impl Iterator<Item = &Metadata> {
        self.metadata.values().map(|m| &**m)
    }

    /// The stream offset of byte `at` of the unconsumed input.
    fn offset(&self, at: usize) -> u64 {
        self.base + (self.start + at) as u64
    }

    fn err(&self, at: usize, kind: ErrorKind) -> Error {
        Error::new(self.offset(at), kind)
    }

    fn consume(&mut self, n: usize) {
        self.start += n;
        self.stats.bytes += n as u64;
    }

    /// Reads one part if its bytes are all there: `Ok(true)` when it did,
    /// `Ok(false)` when it needs more (or the stream is done).
    fn step(&mut self) -> Result<bool, Error> {
        let avail = self.buf.len() - self.start;
        match self.state {
            State::Done => Ok(false),
            State::Header => {
                if avail < 12 {
                    self.need = 12;
                    return Ok(false);
                }
                let head = &self.buf[self.start..];
                if &head[..8] != MAGIC {
                    return Err(self.err(0, ErrorKind::BadMagic));
                }
                let n = u32::from_le_bytes([head[8], head[9], head[10], head[11]]);
                match n {
                    // Version 6: `u32` 0, then major and minor versions.
                    0 => {
                        if avail < 20 {
                            self.need = 20;
                            return Ok(false);
                        }
                        let major = u32::from_le_bytes([head[12], head[13], head[14], head[15]]);
                        Err(self.err(
                            12,
                            ErrorKind::UnsupportedVersion {
                                what: "stream",
                                version: major,
                            },
                        ))
                    }
                    20 => {
                        if avail < 32 {
                            self.need = 32;
                            return Ok(false);
                        }
                        if &head[12..32] != SERIALIZER {
                            return Err(self.err(12, ErrorKind::Malformed("unknown serializer")));
                        }
                        self.consume(32);
                        self.state = State::Objects;
                        Ok(true)
                    }
                    _ => Err(self.err(8, ErrorKind::Malformed("unknown serializer"))),
                }
            }
            State::Objects => self.object(),
        }
    }

    /// One object (or the end marker).
    fn object(&mut self) -> Result<bool, Error> {
        let avail = &self.buf[self.start..];
        let Some(&tag) = avail.first() else {
            self.need = 1;
            return Ok(false);
        };
        if tag == TAG_NULL_REFERENCE {
            if self.trace.is_none() {
                return Err(self.err(
                    0,
                    ErrorKind::Malformed("the stream ends before its Trace object"),
                ));
            }
            self.consume(1);
            self.state = State::Done;
            return Ok(true);
        }
        if tag != TAG_BEGIN_PRIVATE_OBJECT {
            return Err(self.err(
                0,
                ErrorKind::BadTag {
                    expected: TAG_BEGIN_PRIVATE_OBJECT,
                    found: tag,
                },
            ));
        }
        // The type: 5, 1, version, minimum reader version, name, 6.
        const FIXED: usize = 1 + 1 + 1 + 4 + 4 + 4;
        if avail.len() < FIXED {
            self.need = FIXED;
            return Ok(false);
        }
        for (at, expected) in [(1, TAG_BEGIN_PRIVATE_OBJECT), (2, TAG_NULL_REFERENCE)] {
            if avail[at] != expected {
                let found = avail[at];
                return Err(self.err(at, ErrorKind::BadTag { expected, found }));
            }
        }
        let word = |at: usize| {
            u32::from_le_bytes([avail[at], avail[at + 1], avail[at + 2], avail[at + 3]])
        };
        let version = word(3);
        let min_reader = word(7);
        let name_len = word(11);
        if name_len > MAX_TYPE_NAME {
            return Err(self.err(11, ErrorKind::Malformed("object type name too long")));
        }
        let header = FIXED + name_len as usize + 1;
        if avail.len() < header {
            self.need = header;
            return Ok(false);
        }
        let name = &avail[FIXED..FIXED + name_len as usize];
        if avail[header - 1] != TAG_END_OBJECT {
            let found = avail[header - 1];
            return Err(self.err(
                header - 1,
                ErrorKind::BadTag {
                    expected: TAG_END_OBJECT,
                    found,
                },
            ));
        }
        let kind = match name {
            b"Trace" => None,
            b"EventBlock" => Some(Block::Event),
            b"MetadataBlock" => Some(Block::Metadata),
            b"StackBlock" => Some(Block::Stack),
            b"SPBlock" => Some(Block::SequencePoint),
            _ => {
                let name = String::from_utf8_lossy(name).into_owned();
                return Err(self.err(FIXED, ErrorKind::UnknownObject(name)));
            }
        };
        let Some(kind) = kind else {
            if !(4..=5).contains(&version) || min_reader > 5 {
                return Err(self.err(
                    3,
                    ErrorKind::UnsupportedVersion {
                        what: "Trace",
                        version,
                    },
                ));
            }
            let total = header + TRACE_FIELDS + 1;
            if avail.len() < total {
                self.need = total;
                return Ok(false);
            }
            if self.trace.is_some() {
                return Err(self.err(0, ErrorKind::Malformed("a second Trace object")));
            }
            self.check_end(total - 1)?;
            let trace = self.trace_fields(header, version)?;
            self.trace = Some(trace);
            self.consume(total);
            return Ok(true);
        };
        if min_reader > 2 {
            return Err(self.err(
                3,
                ErrorKind::UnsupportedVersion {
                    what: kind.name(),
                    version,
                },
            ));
        }
        let Some(pointer_size) = self.trace.as_ref().map(|t| t.pointer_size) else {
            return Err(self.err(0, ErrorKind::Malformed("a block before the Trace object")));
        };
        // `u32` size, padding to a 4-byte stream offset, the block, 6.
        if avail.len() < header + 4 {
            self.need = header + 4;
            return Ok(false);
        }
        let size = word(header);
        if size > MAX_BLOCK_SIZE {
            return Err(self.err(header, ErrorKind::BlockTooLarge(size.into())));
        }
        let content = header + 4;
        let padding = ((4 - self.offset(content) % 4) % 4) as usize;
        let begin = content + padding;
        let end = begin + size as usize;
        if avail.len() < end + 1 {
            self.need = end + 1;
            return Ok(false);
        }
        if avail[content..begin].iter().any(|&b| b != 0) {
            return Err(self.err(content, ErrorKind::Malformed("non-zero alignment padding")));
        }
        self.check_end(end)?;
        let at = self.offset(begin);
        // The block is copied out so that `self` can be updated while it
        // is read; it is at most MAX_BLOCK_SIZE bytes.
        let block: Vec<u8> = self.buf[self.start + begin..self.start + end].to_vec();
        match kind {
            Block::Event => {
                self.cursor = Some(Parser::open_block(block, at, false, pointer_size)?);
            }
            Block::Metadata => {
                let cursor = Parser::open_block(block, at, true, pointer_size)?;
                self.metadata_block(cursor)?;
            }
            Block::Stack => self.stack_block(&block, at, pointer_size)?,
            Block::SequencePoint => self.sequence_point(&block, at)?,
        }
        self.stats.blocks += 1;
        self.consume(end + 1);
        Ok(true)
    }

    fn check_end(&self, at: usize) -> Result<(), Error> {
        let found = self.buf[self.start + at];
        if found != TAG_END_OBJECT {
            return Err(self.err(
                at,
                ErrorKind::BadTag {
                    expected: TAG_END_OBJECT,
                    found,
                },
            ));
        }
        Ok(())
    }

    fn trace_fields(&self, at: usize, version: u32) -> Result<TraceInfo, Error> {
        let bytes = &self.buf[self.start + at..self.start + at + TRACE_FIELDS];
        let mut r = ByteReader::new(bytes);
        // The length was checked: these reads cannot fail.
        let mut w = [0u16; 8];
        for slot in &mut w {
            *slot = r.u16().unwrap_or(0);
        }
        let sync_time_qpc = r.u64().unwrap_or(0) as i64;
        let qpc_frequency = r.u64().unwrap_or(0) as i64;
        let pointer_size = r.u32().unwrap_or(0);
        if pointer_size != 4 && pointer_size != 8 {
            return Err(self.err(at + 32, ErrorKind::Malformed("pointer size is not 4 or 8")));
        }
        Ok(TraceInfo {
            version,
            sync_time_utc: SystemTime {
                year: w[0],
                month: w[1],
                day_of_week: w[2],
                day: w[3],
                hour: w[4],
                minute: w[5],
                second: w[6],
                millisecond: w[7],
            },
            sync_time_qpc,
            qpc_frequency,
            pointer_size: pointer_size as u8,
            process_id: r.u32().unwrap_or(0),
            processor_count: r.u32().unwrap_or(0),
            expected_cpu_sampling_rate: r.u32().unwrap_or(0),
        })
    }

    /// Starts reading an event or metadata block: checks its header and
    /// returns a cursor at its first blob.
    fn open_block(
        block: Vec<u8>,
        at: u64,
        is_metadata: bool,
        pointer_size: u8,
    ) -> Result<BlockCursor, Error> {
        let fail = |pos: usize, what: &'static str| {
            Error::new(at + pos as u64, ErrorKind::Malformed(what))
        };
        let mut r = ByteReader::new(&block);
        let header_size = r.u16().map_err(|_| fail(0, "block header truncated"))? as usize;
        let flags = r.u16().map_err(|_| fail(2, "block header truncated"))?;
        if header_size < 20 || header_size > block.len() {
            return Err(fail(0, "bad block header size"));
        }
        Ok(BlockCursor {
            data: block,
            pos: header_size,
            at,
            compressed: flags & 1 != 0,
            is_metadata,
            pointer_size,
            h: Header::default(),
        })
    }

    /// Reads every metadata blob of a block into the metadata table.
    fn metadata_block(&mut self, mut cursor: BlockCursor) -> Result<(), Error> {
        while let Some(blob) = cursor.next_blob()? {
            let payload = &cursor.data[blob.payload.clone()];
            let meta = Metadata::parse(payload).map_err(|(pos, what)| {
                Error::new(
                    cursor.at + (blob.payload.start + pos) as u64,
                    ErrorKind::Malformed(what),
                )
            })?;
            if self.metadata.len() >= MAX_METADATA && !self.metadata.contains_key(&meta.metadata_id)
            {
                return Err(Error::new(
                    cursor.at + blob.start as u64,
                    ErrorKind::Malformed("more kinds of events than the reader keeps (65,536)"),
                ));
            }
            self.stats.metadata += 1;
            self.metadata.insert(meta.metadata_id, Arc::new(meta));
        }
        Ok(())
    }

    /// The next event of the event block being read, `None` at its end.
    fn next_in_block(&mut self) -> Result<Option<Event>, Error> {
        let Some(cursor) = self.cursor.as_mut() else {
            return Ok(None);
        };
        let Some(blob) = cursor.next_blob()? else {
            self.cursor = None;
            return Ok(None);
        };
        let h = &cursor.h;
        let blob_at = cursor.at + blob.start as u64;
        let metadata = self
            .metadata
            .get(&h.metadata_id)
            .cloned()
            .ok_or_else(|| Error::new(blob_at, ErrorKind::UnknownMetadata(h.metadata_id)))?;
        let stack = match self.stacks.get(&h.stack_id) {
            Some(stack) => stack.clone(),
            None => {
                if h.stack_id != 0 {
                    self.stats.unresolved_stacks += 1;
                }
                self.empty_stack.clone()
            }
        };
        let event = Event {
            metadata,
            sequence_number: h.sequence,
            thread_id: h.thread,
            capture_thread_id: h.capture_thread,
            processor: h.processor,
            timestamp: h.timestamp,
            activity_id: h.activity,
            related_activity_id: h.related,
            stack_id: h.stack_id,
            stack,
            payload: cursor.data[blob.payload].to_vec(),
            sorted: blob.sorted,
            pointer_size: cursor.pointer_size,
        };
        self.check_sequence(event.capture_thread_id, event.sequence_number, blob_at)?;
        self.stats.events += 1;
        Ok(Some(event))
    }

    /// Counts the events missing between a thread's last sequence number
    /// and `sequence`.
    fn check_sequence(&mut self, thread: u64, sequence: u32, at: u64) -> Result<(), Error> {
        if self.threads.len() >= MAX_THREADS && !self.threads.contains_key(&thread) {
            return Err(Error::new(
                at,
                ErrorKind::Malformed("more threads than the reader keeps (1,048,576)"),
            ));
        }
        if let Some(last) = self.threads.insert(thread, sequence) {
            let gap = sequence.wrapping_sub(last).wrapping_sub(1);
            // A gap "backwards" (the thread id reused, its count restarted
            // at 1) is not a loss.
            if gap < 1 << 31 && sequence != 1 {
                self.stats.lost_events += u64::from(gap);
            }
        }
        Ok(())
    }

    /// A stack block: `u32` first id, `u32` count, then per stack a `u32`
    /// size and that many bytes of instruction pointers.
    fn stack_block(&mut self, block: &[u8], at: u64, pointer_size: u8) -> Result<(), Error> {
        let fail = |pos: usize, what: &'static str| {
            Error::new(at + pos as u64, ErrorKind::Malformed(what))
        };
        let mut r = ByteReader::new(block);
        let first = r.u32().map_err(|_| fail(0, "stack block truncated"))?;
        let count = r.u32().map_err(|_| fail(4, "stack block truncated"))?;
        for i in 0..count {
            let pos = r.pos();
            let size = r.u32().map_err(|_| fail(pos, "stack truncated"))? as usize;
            let bytes = r
                .take(size)
                .map_err(|_| fail(pos, "stack runs past the block"))?;
            let ps = usize::from(pointer_size);
            if size % ps != 0 {
                return Err(fail(
                    pos,
                    "stack size is not a multiple of the pointer size",
                ));
            }
            let ips: Vec<u64> = bytes
                .chunks_exact(ps)
                .map(|c| {
                    let mut v = [0u8; 8];
                    v[..ps].copy_from_slice(c);
                    u64::from_le_bytes(v)
                })
                .collect();
            let id = first
                .checked_add(i)
                .ok_or_else(|| fail(0, "stack ids overflow"))?;
            self.stacks.insert(id, Arc::from(ips));
            self.stats.stacks += 1;
        }
        if !r.is_empty() {
            return Err(fail(r.pos(), "bytes after the last stack"));
        }
        Ok(())
    }

    /// A sequence point: `i64` timestamp, `u32` thread count, then per
    /// thread `u64` id and `u32` sequence number. Stacks before it are
    /// forgotten, and each thread's number checked against its last event.
    fn sequence_point(&mut self, block: &[u8], at: u64) -> Result<(), Error> {
        let fail = |pos: usize, what: &'static str| {
            Error::new(at + pos as u64, ErrorKind::Malformed(what))
        };
        let mut r = ByteReader::new(block);
        let _timestamp = r.u64().map_err(|_| fail(0, "sequence point truncated"))?;
        let count = r.u32().map_err(|_| fail(8, "sequence point truncated"))?;
        if count as usize > r.remaining() / 12 {
            return Err(fail(8, "more threads than the sequence point holds"));
        }
        let mut threads = BTreeMap::new();
        for _ in 0..count {
            // The count was checked against the bytes: these reads succeed.
            let thread = r.u64().unwrap_or(0);
            let sequence = r.u32().unwrap_or(0);
            if let Some(&last) = self.threads.get(&thread) {
                let ahead = sequence.wrapping_sub(last);
                if ahead < 1 << 31 {
                    self.stats.lost_events += u64::from(ahead);
                }
            }
            threads.insert(thread, sequence);
        }
        if !r.is_empty() {
            return Err(fail(r.pos(), "bytes after the last thread"));
        }
        self.threads = threads;
        self.stacks.clear();
        self.stats.sequence_points += 1;
        Ok(())
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Block {
    Event,
    Metadata,
    Stack,
    SequencePoint,
}

impl Block {
    fn name(self) -> &'static str {
        match self {
            Block::Event => "EventBlock",
            Block::Metadata => "MetadataBlock",
            Block::Stack => "StackBlock",
            Block::SequencePoint => "SPBlock",
        }
    }
}

/// Where one blob of a block is.
struct Blob {
    /// Its first byte, in the block.
    start: usize,
    /// Its payload, in the block.
    payload: core::ops::Range<usize>,
    /// Whether the writer marked it sorted.
    sorted: bool,
}

/// An event or metadata block being read blob by blob (events are decoded
/// as they are asked for, so a block of many tiny events never becomes
/// many `Event`s at once).
#[derive(Debug)]
struct BlockCursor {
    data: Vec<u8>,
    /// The next blob.
    pos: usize,
    /// The block's offset in the stream.
    at: u64,
    compressed: bool,
    is_metadata: bool,
    pointer_size: u8,
    /// The last blob's header.
    h: Header,
}

impl BlockCursor {
    /// Decodes the next blob's header into `h`: where its payload is, or
    /// `None` at the end of the block.
    fn next_blob(&mut self) -> Result<Option<Blob>, Error> {
        let at = self.at;
        let fail = |pos: usize, what: &'static str| {
            Error::new(at + pos as u64, ErrorKind::Malformed(what))
        };
        let block = &self.data[..];
        let mut r = ByteReader::at(block, self.pos);
        if r.is_empty() {
            return Ok(None);
        }
        let h = &mut self.h;
        let start = r.pos();
        let sorted;
        let payload_at;
        if self.compressed {
            let v = |r: &mut ByteReader<'_>, bits| {
                varuint(r, bits).map_err(|(pos, what)| fail(pos, what))
            };
            let flags = r.u8().map_err(|_| fail(start, "blob truncated"))?;
            if flags & 1 != 0 {
                h.metadata_id = v(&mut r, 32)? as u32;
            }
            if flags & 2 != 0 {
                h.sequence = h.sequence.wrapping_add(v(&mut r, 32)? as u32);
                h.capture_thread = v(&mut r, 64)?;
                h.processor = v(&mut r, 32)? as u32;
            }
            // The writer stores the delta minus one for events, and never
            // advances it for metadata blobs (id 0).
            if h.metadata_id != 0 {
                h.sequence = h.sequence.wrapping_add(1);
            }
            if flags & 4 != 0 {
                h.thread = v(&mut r, 64)?;
            }
            if flags & 8 != 0 {
                h.stack_id = v(&mut r, 32)? as u32;
            }
            h.timestamp = h.timestamp.wrapping_add(v(&mut r, 64)? as i64);
            if flags & 16 != 0 {
                h.activity = r.guid().map_err(|t| fail(t.offset, "blob truncated"))?;
            }
            if flags & 32 != 0 {
                h.related = r.guid().map_err(|t| fail(t.offset, "blob truncated"))?;
            }
            sorted = flags & 64 != 0;
            if flags & 128 != 0 {
                h.payload_size = v(&mut r, 32)? as u32;
            }
            payload_at = r.pos();
            r.take(h.payload_size as usize)
                .map_err(|t| fail(t.offset, "payload runs past the block"))?;
            self.pos = r.pos();
        } else {
            let short = |t: crate::support::bytes::Truncated| fail(t.offset, "blob truncated");
            let size = r.u32().map_err(short)? as usize;
            let end = (start + 4)
                .checked_add(size)
                .filter(|&e| e <= block.len())
                .ok_or_else(|| fail(start, "blob runs past the block"))?;
            let mut b = ByteReader::at(&block[..end], start + 4);
            let short =
                |t: crate::support::bytes::Truncated| fail(t.offset, "blob header truncated");
            let id = b.u32().map_err(short)?;
            // The writer sets the high bit for events that are *not* sorted
            // (ep-block.c), the reverse of the document.
            sorted = id & 0x8000_0000 == 0;
            h.metadata_id = id & 0x7FFF_FFFF;
            h.sequence = b.u32().map_err(short)?;
            h.thread = b.u64().map_err(short)?;
            h.capture_thread = b.u64().map_err(short)?;
            h.processor = b.u32().map_err(short)?;
            h.stack_id = b.u32().map_err(short)?;
            h.timestamp = b.u64().map_err(short)? as i64;
            h.activity = b.guid().map_err(short)?;
            h.related = b.guid().map_err(short)?;
            h.payload_size = b.u32().map_err(short)?;
            payload_at = b.pos();
            b.take(h.payload_size as usize)
                .map_err(|t| fail(t.offset, "payload runs past the blob"))?;
            // What is left up to `end` is alignment padding.
            self.pos = end;
        }
        if self.is_metadata && h.metadata_id != 0 {
            return Err(fail(start, "a metadata blob with a metadata id"));
        }
        Ok(Some(Blob {
            start,
            payload: payload_at..payload_at + h.payload_size as usize,
            sorted,
        }))
    }
}
