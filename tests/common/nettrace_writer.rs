//! A writer of nettrace streams for the tests, written from the format's
//! description (perfview `NetTraceFormat_v5.md`) and the runtime's writer
//! (`ep-block.c`), independently of the reader under test.
#![allow(dead_code)]

pub(crate) fn utf16z(s: &str) -> Vec<u8> {
    s.encode_utf16()
        .chain(Some(0))
        .flat_map(|u| u.to_le_bytes())
        .collect()
}

fn leb(mut v: u64, out: &mut Vec<u8>) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// A stream being written.
pub(crate) struct Stream {
    pub(crate) bytes: Vec<u8>,
}

/// One event (or metadata blob: `metadata_id` 0) of a block.
#[derive(Clone, Default)]
pub(crate) struct Blob {
    pub(crate) metadata_id: u32,
    pub(crate) sequence: u32,
    pub(crate) thread: u64,
    pub(crate) capture_thread: u64,
    pub(crate) processor: u32,
    pub(crate) stack_id: u32,
    pub(crate) timestamp: i64,
    pub(crate) activity: [u8; 16],
    pub(crate) related: [u8; 16],
    pub(crate) sorted: bool,
    pub(crate) payload: Vec<u8>,
}

impl Stream {
    /// The magic and the serializer's signature.
    pub(crate) fn new() -> Stream {
        let mut bytes = b"Nettrace".to_vec();
        bytes.extend_from_slice(&20u32.to_le_bytes());
        bytes.extend_from_slice(b"!FastSerialization.1");
        Stream { bytes }
    }

    fn type_header(&mut self, name: &str, version: i32, min_reader: i32) {
        self.bytes.extend_from_slice(&[5, 5, 1]);
        self.bytes.extend_from_slice(&version.to_le_bytes());
        self.bytes.extend_from_slice(&min_reader.to_le_bytes());
        self.bytes
            .extend_from_slice(&(name.len() as u32).to_le_bytes());
        self.bytes.extend_from_slice(name.as_bytes());
        self.bytes.push(6);
    }

    /// The Trace object: 2024-01-02 03:04:05.006 UTC at QPC 1,000,000,
    /// 10 MHz, `pointer_size`, pid 4242, 2 processors, 1000 samples/s.
    pub(crate) fn trace(&mut self, pointer_size: u32) -> &mut Self {
        self.type_header("Trace", 4, 4);
        for w in [2024u16, 1, 2, 2, 3, 4, 5, 6] {
            self.bytes.extend_from_slice(&w.to_le_bytes());
        }
        self.bytes.extend_from_slice(&1_000_000i64.to_le_bytes());
        self.bytes.extend_from_slice(&10_000_000i64.to_le_bytes());
        for v in [pointer_size, 4242, 2, 1000] {
            self.bytes.extend_from_slice(&v.to_le_bytes());
        }
        self.bytes.push(6);
        self
    }

    /// A block object: size, zero padding to a 4-byte stream offset,
    /// content, end tag.
    pub(crate) fn block(&mut self, name: &str, content: &[u8]) -> &mut Self {
        self.type_header(name, 2, 2);
        self.bytes
            .extend_from_slice(&(content.len() as u32).to_le_bytes());
        while self.bytes.len() % 4 != 0 {
            self.bytes.push(0);
        }
        self.bytes.extend_from_slice(content);
        self.bytes.push(6);
        self
    }

    /// The end marker.
    pub(crate) fn end(&mut self) -> &mut Self {
        self.bytes.push(1);
        self
    }
}

/// A metadata blob's payload: id, provider, event id, name, keywords,
/// version, level, V1 fields (type code, name), then `tags` as they are.
pub(crate) fn metadata(
    id: u32,
    provider: &str,
    event_id: u32,
    name: &str,
    version: u32,
    fields: &[(u32, &str)],
    tags: &[u8],
) -> Vec<u8> {
    let mut v = id.to_le_bytes().to_vec();
    v.extend(utf16z(provider));
    v.extend(event_id.to_le_bytes());
    v.extend(utf16z(name));
    v.extend(0x10u64.to_le_bytes());
    v.extend(version.to_le_bytes());
    v.extend(4u32.to_le_bytes());
    v.extend((fields.len() as u32).to_le_bytes());
    for (code, name) in fields {
        v.extend(code.to_le_bytes());
        v.extend(utf16z(name));
    }
    v.extend_from_slice(tags);
    v
}

/// The header of an event or metadata block.
fn block_header(flags: u16) -> Vec<u8> {
    let mut v = 20u16.to_le_bytes().to_vec();
    v.extend(flags.to_le_bytes());
    v.extend(0i64.to_le_bytes());
    v.extend(0i64.to_le_bytes());
    v
}

/// A block of blobs with compressed headers (flags 1), each field written
/// only when it differs from the previous blob's, as `ep-block.c` does.
pub(crate) fn compressed_block(blobs: &[Blob]) -> Vec<u8> {
    let mut out = block_header(1);
    let mut last = Blob::default();
    let mut last_size = 0u32;
    for b in blobs {
        let mut flags = 0u8;
        let mut h = Vec::new();
        if b.metadata_id != last.metadata_id {
            leb(b.metadata_id.into(), &mut h);
            flags |= 1;
        }
        let step = u32::from(b.metadata_id != 0);
        if last.sequence.wrapping_add(step) != b.sequence
            || last.capture_thread != b.capture_thread
            || last.processor != b.processor
        {
            leb(
                b.sequence
                    .wrapping_sub(last.sequence)
                    .wrapping_sub(1)
                    .into(),
                &mut h,
            );
            leb(b.capture_thread, &mut h);
            leb(b.processor.into(), &mut h);
            flags |= 2;
        }
        if b.thread != last.thread {
            leb(b.thread, &mut h);
            flags |= 4;
        }
        if b.stack_id != last.stack_id {
            leb(b.stack_id.into(), &mut h);
            flags |= 8;
        }
        leb(b.timestamp.wrapping_sub(last.timestamp) as u64, &mut h);
        if b.activity != last.activity {
            h.extend_from_slice(&b.activity);
            flags |= 16;
        }
        if b.related != last.related {
            h.extend_from_slice(&b.related);
            flags |= 32;
        }
        if b.sorted {
            flags |= 64;
        }
        if b.payload.len() as u32 != last_size {
            leb(b.payload.len() as u64, &mut h);
            flags |= 128;
        }
        out.push(flags);
        out.extend(h);
        out.extend_from_slice(&b.payload);
        last = b.clone();
        last_size = b.payload.len() as u32;
    }
    out
}

/// A block of uncompressed blobs (flags 0), each padded to 4 bytes; the
/// metadata id's high bit set when the event is not sorted.
pub(crate) fn uncompressed_block(blobs: &[Blob]) -> Vec<u8> {
    let mut out = block_header(0);
    for b in blobs {
        let mut e = Vec::new();
        let id = b.metadata_id | if b.sorted { 0 } else { 1 << 31 };
        e.extend(id.to_le_bytes());
        e.extend(b.sequence.to_le_bytes());
        e.extend(b.thread.to_le_bytes());
        e.extend(b.capture_thread.to_le_bytes());
        e.extend(b.processor.to_le_bytes());
        e.extend(b.stack_id.to_le_bytes());
        e.extend(b.timestamp.to_le_bytes());
        e.extend(b.activity);
        e.extend(b.related);
        e.extend((b.payload.len() as u32).to_le_bytes());
        e.extend_from_slice(&b.payload);
        while (e.len() + 4) % 4 != 0 {
            e.push(0);
        }
        out.extend((e.len() as u32).to_le_bytes());
        out.extend(e);
    }
    out
}

/// A stack block: first id, count, then each stack's size and IPs.
pub(crate) fn stack_block(first: u32, stacks: &[&[u64]], pointer_size: usize) -> Vec<u8> {
    let mut out = first.to_le_bytes().to_vec();
    out.extend((stacks.len() as u32).to_le_bytes());
    for stack in stacks {
        out.extend(((stack.len() * pointer_size) as u32).to_le_bytes());
        for ip in *stack {
            out.extend_from_slice(&ip.to_le_bytes()[..pointer_size]);
        }
    }
    out
}

/// A sequence point: timestamp, then each thread's id and last sequence
/// number.
pub(crate) fn sequence_point(timestamp: i64, threads: &[(u64, u32)]) -> Vec<u8> {
    let mut out = timestamp.to_le_bytes().to_vec();
    out.extend((threads.len() as u32).to_le_bytes());
    for (thread, seq) in threads {
        out.extend(thread.to_le_bytes());
        out.extend(seq.to_le_bytes());
    }
    out
}
