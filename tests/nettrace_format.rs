//! The nettrace reader on streams written by hand (tests/common/
//! nettrace_writer.rs, from the format's description): every part of the
//! format, the runtime writer's departures from the document, lost-event
//! detection, version 6 and bad input.

mod common;

use common::nettrace_writer::{
    compressed_block, metadata, sequence_point, stack_block, uncompressed_block, utf16z, Blob,
    Stream,
};
use corprof::nettrace::{ErrorKind, Event, Parser, Value, RUNDOWN_PROVIDER};

const APP: &str = "My-App";

/// The V2Params tag of one field `Values`: an array of `UInt32`.
fn v2_array_tag() -> Vec<u8> {
    let name = utf16z("Values");
    let mut field = ((4 + name.len() + 8) as u32).to_le_bytes().to_vec();
    field.extend(&name);
    field.extend(19u32.to_le_bytes());
    field.extend(10u32.to_le_bytes());
    let mut body = 1u32.to_le_bytes().to_vec();
    body.extend(field);
    let mut tag = (body.len() as u32).to_le_bytes().to_vec();
    tag.push(2);
    tag.extend(body);
    // And an OpCode tag.
    tag.extend(1u32.to_le_bytes());
    tag.extend([1, 7]);
    tag
}

/// A MethodDCEndVerbose_V2 payload (ClrEtwAll.man's
/// `MethodLoadUnloadVerbose_V2`).
fn method_payload(id: u64, namespace: &str, name: &str) -> Vec<u8> {
    let mut v = Vec::new();
    v.extend(id.to_le_bytes());
    v.extend(0x5000u64.to_le_bytes());
    v.extend(0x7000_0000u64.to_le_bytes());
    v.extend(0x40u32.to_le_bytes());
    v.extend(0x0600_0001u32.to_le_bytes());
    v.extend(0u32.to_le_bytes());
    v.extend(utf16z(namespace));
    v.extend(utf16z(name));
    v.extend(utf16z("int32  (int32)"));
    v.extend(7u16.to_le_bytes());
    v.extend(0u64.to_le_bytes());
    v
}

fn meta_blob(payload: Vec<u8>) -> Blob {
    Blob {
        payload,
        ..Blob::default()
    }
}

/// A stream with two kinds of events (one described by its metadata, one
/// the runtime's own, described by nothing), a stack, compressed and
/// uncompressed event blocks and a sequence point.
fn sample_stream(pointer_size: usize) -> Vec<u8> {
    let mut s = Stream::new();
    s.trace(pointer_size as u32);
    let metas = [
        meta_blob(metadata(
            1,
            APP,
            3,
            "Tick",
            0,
            &[(10, "Count"), (18, "Label")],
            &[],
        )),
        meta_blob(metadata(2, APP, 4, "Batch", 1, &[], &v2_array_tag())),
        meta_blob(metadata(3, RUNDOWN_PROVIDER, 144, "", 2, &[], &[])),
    ];
    s.block("MetadataBlock", &compressed_block(&metas));
    let ips: &[u64] = &[0x1111_2222, 0x3333_4444, 0x5555];
    s.block("StackBlock", &stack_block(1, &[&[], ips], pointer_size));
    let mut tick = 42u32.to_le_bytes().to_vec();
    tick.extend(utf16z("hello"));
    let mut batch = 3u16.to_le_bytes().to_vec();
    for v in [10u32, 20, 30] {
        batch.extend(v.to_le_bytes());
    }
    let events = [
        Blob {
            metadata_id: 1,
            sequence: 1,
            thread: 100,
            capture_thread: 100,
            processor: 1,
            stack_id: 2,
            timestamp: 1_000_000 + 25_000_000,
            sorted: true,
            payload: tick.clone(),
            ..Blob::default()
        },
        Blob {
            metadata_id: 2,
            sequence: 2,
            thread: 100,
            capture_thread: 100,
            processor: 1,
            stack_id: 1,
            timestamp: 1_000_000 + 26_000_000,
            activity: [9; 16],
            payload: batch,
            ..Blob::default()
        },
        Blob {
            metadata_id: 1,
            sequence: 1,
            thread: 200,
            capture_thread: 200,
            processor: 0,
            stack_id: 2,
            timestamp: 1_000_000 + 27_000_000,
            payload: tick,
            ..Blob::default()
        },
    ];
    s.block("EventBlock", &compressed_block(&events));
    s.block(
        "SPBlock",
        &sequence_point(1_000_000 + 28_000_000, &[(100, 2), (200, 1)]),
    );
    let rundown = [Blob {
        metadata_id: 3,
        sequence: 2,
        thread: 200,
        capture_thread: 200,
        processor: 0,
        stack_id: 0,
        timestamp: 1_000_000 + 29_000_000,
        sorted: true,
        payload: method_payload(0xABC, "E2E.Sampling.Program", "Hot"),
        ..Blob::default()
    }];
    s.block("EventBlock", &uncompressed_block(&rundown));
    s.end();
    s.bytes
}

fn field<'a>(fields: &'a [(String, Value)], name: &str) -> &'a Value {
    &fields.iter().find(|(n, _)| n == name).unwrap().1
}

#[test]
fn reads_every_part_of_a_stream() {
    for pointer_size in [8, 4] {
        let bytes = sample_stream(pointer_size);
        let (trace, events, stats) = Parser::parse_all(&bytes).unwrap();
        assert_eq!(trace.pointer_size as usize, pointer_size);
        assert_eq!((trace.process_id, trace.processor_count), (4242, 2));
        assert_eq!(trace.qpc_frequency, 10_000_000);
        // 2024-01-02T03:04:05.006Z is 1704164645.006 s after the epoch
        // (`date -u -d 2024-01-02T03:04:05Z +%s`); the first event is
        // 2.5 s later.
        assert_eq!(
            trace.unix_nanos(events[0].timestamp),
            Some(1_704_164_647_506_000_000)
        );
        assert_eq!(trace.seconds_since_start(events[0].timestamp), 2.5);
        assert_eq!(events.len(), 4);
        assert_eq!(
            (stats.metadata, stats.stacks, stats.sequence_points),
            (3, 2, 1)
        );
        assert_eq!(stats.blocks, 5);
        assert_eq!(stats.bytes, bytes.len() as u64);
        assert_eq!(stats.lost_events, 0);

        let tick = &events[0];
        assert_eq!(
            (tick.provider(), tick.event_id(), tick.name()),
            (APP, 3, "Tick")
        );
        assert_eq!((tick.thread_id, tick.capture_thread_id), (100, 100));
        assert_eq!((tick.sequence_number, tick.processor), (1, 1));
        assert!(tick.sorted);
        assert_eq!(&tick.stack[..], &[0x1111_2222, 0x3333_4444, 0x5555]);
        let f = tick.fields().unwrap();
        assert_eq!(field(&f, "Count"), &Value::UInt(42));
        assert_eq!(field(&f, "Label").as_str(), Some("hello"));

        let batch = &events[1];
        assert_eq!((batch.event_id(), batch.version()), (4, 1));
        assert_eq!(batch.metadata.opcode, Some(7));
        assert!(!batch.sorted);
        assert!(batch.stack.is_empty());
        assert_eq!(batch.sequence_number, 2);
        assert_eq!(batch.activity_id.data4, [9; 8]);
        let f = batch.fields().unwrap();
        let values: Vec<u64> = field(&f, "Values")
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap())
            .collect();
        assert_eq!(values, [10, 20, 30]);

        // A second thread: its own sequence.
        assert_eq!((events[2].thread_id, events[2].sequence_number), (200, 1));
        assert_eq!(events[2].timestamp, 28_000_000);

        // After the sequence point, the uncompressed block: the runtime's
        // own event, no fields in its metadata, the manifest's layout.
        let method = &events[3];
        assert_eq!(
            (method.provider(), method.event_id()),
            (RUNDOWN_PROVIDER, 144)
        );
        assert!(method.metadata.fields.is_empty());
        assert!(method.sorted);
        assert_eq!(method.timestamp, 30_000_000);
        let f = method.fields().unwrap();
        assert_eq!(field(&f, "MethodID"), &Value::UInt(0xABC));
        assert_eq!(
            field(&f, "MethodNamespace").as_str(),
            Some("E2E.Sampling.Program")
        );
        assert_eq!(field(&f, "MethodName").as_str(), Some("Hot"));
        assert_eq!(field(&f, "ClrInstanceID"), &Value::UInt(7));
        assert_eq!(field(&f, "ReJITID"), &Value::UInt(0));
    }
}

#[test]
fn byte_by_byte_reads_the_same_events() {
    let bytes = sample_stream(8);
    let (_, all, _) = Parser::parse_all(&bytes).unwrap();
    let mut parser = Parser::new();
    let mut events: Vec<Event> = Vec::new();
    for b in &bytes {
        assert!(parser.finish().is_err(), "done before the end marker");
        parser.feed(std::slice::from_ref(b));
        while let Some(e) = parser.next_event().unwrap() {
            events.push(e);
        }
    }
    parser.finish().unwrap();
    assert!(parser.is_done());
    assert_eq!(events, all);
}

#[test]
fn every_truncation_is_an_error_at_the_end() {
    let bytes = sample_stream(8);
    for n in 0..bytes.len() {
        let err = Parser::parse_all(&bytes[..n]).unwrap_err();
        assert!(
            matches!(err.kind, ErrorKind::Truncated { needed } if needed > 0),
            "{n}: {err}"
        );
        assert!(err.offset <= n as u64, "{n}: {err}");
    }
}

/// The sequence numbers of thread 7, and a sequence point saying the
/// thread had reached `at_point`.
fn lossy_stream(seqs: &[u32], at_point: u32) -> Vec<u8> {
    let mut s = Stream::new();
    s.trace(8);
    s.block(
        "MetadataBlock",
        &compressed_block(&[meta_blob(metadata(1, APP, 1, "E", 0, &[], &[]))]),
    );
    let blobs: Vec<Blob> = seqs
        .iter()
        .enumerate()
        .map(|(i, &sequence)| Blob {
            metadata_id: 1,
            sequence,
            thread: 7,
            capture_thread: 7,
            timestamp: i as i64,
            ..Blob::default()
        })
        .collect();
    s.block("EventBlock", &compressed_block(&blobs));
    s.block("SPBlock", &sequence_point(100, &[(7, at_point)]));
    s.end();
    s.bytes
}

#[test]
fn gaps_in_sequence_numbers_and_sequence_points_ahead_are_lost_events() {
    let (_, events, stats) = Parser::parse_all(&lossy_stream(&[1, 2, 3], 3)).unwrap();
    assert_eq!(events.len(), 3);
    assert_eq!(stats.lost_events, 0);
    // 3 and 4 missing between 2 and 5.
    let (_, events, stats) = Parser::parse_all(&lossy_stream(&[1, 2, 5], 5)).unwrap();
    assert_eq!(
        events.iter().map(|e| e.sequence_number).collect::<Vec<_>>(),
        [1, 2, 5]
    );
    assert_eq!(stats.lost_events, 2);
    // The thread logged 9 but the stream holds up to 5.
    let (_, _, stats) = Parser::parse_all(&lossy_stream(&[1, 2, 5], 9)).unwrap();
    assert_eq!(stats.lost_events, 2 + 4);
}

#[test]
fn a_sequence_point_forgets_the_stacks() {
    let mut s = Stream::new();
    s.trace(8);
    s.block(
        "MetadataBlock",
        &compressed_block(&[meta_blob(metadata(1, APP, 1, "E", 0, &[], &[]))]),
    );
    s.block("StackBlock", &stack_block(5, &[&[0xAA]], 8));
    let event = |sequence| Blob {
        metadata_id: 1,
        sequence,
        thread: 1,
        capture_thread: 1,
        stack_id: 5,
        ..Blob::default()
    };
    s.block("EventBlock", &compressed_block(&[event(1)]));
    s.block("SPBlock", &sequence_point(0, &[(1, 1)]));
    s.block("EventBlock", &compressed_block(&[event(2)]));
    s.end();
    let (_, events, stats) = Parser::parse_all(&s.bytes).unwrap();
    assert_eq!(&events[0].stack[..], &[0xAA]);
    assert!(events[1].stack.is_empty());
    assert_eq!(stats.unresolved_stacks, 1);
}

#[test]
fn version_6_is_recognised_and_refused() {
    let mut bytes = b"Nettrace".to_vec();
    for v in [0u32, 6, 0] {
        bytes.extend(v.to_le_bytes());
    }
    let err = Parser::parse_all(&bytes).unwrap_err();
    assert_eq!(
        err.kind,
        ErrorKind::UnsupportedVersion {
            what: "stream",
            version: 6
        }
    );
    assert_eq!(err.offset, 12);
    assert!(err.to_string().contains("versions 4 and 5"), "{err}");
}

#[test]
fn bad_input_is_an_error_with_its_offset() {
    let good = sample_stream(8);
    // Not a trace.
    let err = Parser::parse_all(b"NotATrace...............").unwrap_err();
    assert_eq!((err.offset, err.kind), (0, ErrorKind::BadMagic));
    // The Trace object's begin tag replaced.
    let mut bad = good.clone();
    bad[32] = 9;
    let err = Parser::parse_all(&bad).unwrap_err();
    assert_eq!(err.offset, 32);
    assert_eq!(
        err.kind,
        ErrorKind::BadTag {
            expected: 5,
            found: 9
        }
    );
    // A huge block size.
    let mut s = Stream::new();
    s.trace(8);
    let at = s.bytes.len();
    s.block("EventBlock", &[]);
    let size_at = at + 3 + 8 + 4 + "EventBlock".len() + 1;
    s.bytes[size_at..size_at + 4].copy_from_slice(&u32::MAX.to_le_bytes());
    let err = Parser::parse_all(&s.bytes).unwrap_err();
    assert_eq!(err.kind, ErrorKind::BlockTooLarge(u32::MAX.into()));
    assert_eq!(err.offset, size_at as u64);
    // An event whose metadata was never sent: the error is at its blob,
    // just after the block's 20-byte header.
    let mut s = Stream::new();
    s.trace(8);
    let content = compressed_block(&[Blob {
        metadata_id: 9,
        sequence: 1,
        ..Blob::default()
    }]);
    s.block("EventBlock", &content);
    let err = Parser::parse_all(&s.bytes).unwrap_err();
    assert_eq!(err.kind, ErrorKind::UnknownMetadata(9));
    let block_at = s.bytes.len() - 1 - content.len();
    assert_eq!(block_at % 4, 0, "blocks start at a 4-byte stream offset");
    assert_eq!(err.offset, (block_at + 20) as u64);
    // An unknown object.
    let mut s = Stream::new();
    s.trace(8);
    s.block("Mystery", &[1, 2, 3]);
    let err = Parser::parse_all(&s.bytes).unwrap_err();
    assert_eq!(err.kind, ErrorKind::UnknownObject("Mystery".into()));
}

#[test]
fn hostile_counts_are_errors_not_allocations() {
    use corprof::nettrace::{clr_fields, decode_fields, RUNTIME_PROVIDER};
    // GCBulkType claiming 4 billion types in a 6-byte payload.
    let layout = clr_fields(RUNTIME_PROVIDER, 15, 0).unwrap();
    let mut payload = u32::MAX.to_le_bytes().to_vec();
    payload.extend(0u16.to_le_bytes());
    let err = decode_fields(&layout, &payload, 8).unwrap_err();
    assert_eq!(err.offset, 6);
    // A sequence point claiming more threads than it holds.
    let mut s = Stream::new();
    s.trace(8);
    let mut sp = 0i64.to_le_bytes().to_vec();
    sp.extend(u32::MAX.to_le_bytes());
    s.block("SPBlock", &sp);
    let err = Parser::parse_all(&s.bytes).unwrap_err();
    assert_eq!(
        err.kind,
        ErrorKind::Malformed("more threads than the sequence point holds")
    );
    // A stack block claiming 4 billion stacks.
    let mut s = Stream::new();
    s.trace(8);
    let mut stacks = 1u32.to_le_bytes().to_vec();
    stacks.extend(u32::MAX.to_le_bytes());
    s.block("StackBlock", &stacks);
    let err = Parser::parse_all(&s.bytes).unwrap_err();
    assert_eq!(err.kind, ErrorKind::Malformed("stack truncated"));
    // A pointer size of 3.
    let mut s = Stream::new();
    s.trace(3);
    s.end();
    let err = Parser::parse_all(&s.bytes).unwrap_err();
    assert_eq!(err.kind, ErrorKind::Malformed("pointer size is not 4 or 8"));
    // Objects nested without end in a V1 description.
    let mut fields = Vec::new();
    for _ in 0..20 {
        fields.extend(1u32.to_le_bytes()); // Object
        fields.extend(1u32.to_le_bytes()); // one field
    }
    let mut blob = metadata(1, APP, 1, "Deep", 0, &[], &[]);
    blob.truncate(blob.len() - 4); // drop the empty field count
    blob.extend(1u32.to_le_bytes());
    blob.extend(fields);
    let mut s = Stream::new();
    s.trace(8);
    s.block("MetadataBlock", &compressed_block(&[meta_blob(blob)]));
    let err = Parser::parse_all(&s.bytes).unwrap_err();
    assert_eq!(err.kind, ErrorKind::Malformed("fields nest too deep"));
}

#[test]
fn a_metadata_blob_must_not_name_a_metadata_id() {
    let mut s = Stream::new();
    s.trace(8);
    let mut blob = meta_blob(metadata(1, APP, 1, "E", 0, &[], &[]));
    blob.metadata_id = 5;
    s.block("MetadataBlock", &compressed_block(&[blob]));
    let err = Parser::parse_all(&s.bytes).unwrap_err();
    assert_eq!(
        err.kind,
        ErrorKind::Malformed("a metadata blob with a metadata id")
    );
}

/// EventSource's self-describing events describe their payload as one
/// unnamed `Object` (TypeCode 1) whose fields are the event's; a named
/// one stays a struct.
#[test]
fn one_unnamed_struct_is_the_events_fields() {
    fn object_field(name: &str) -> Vec<u8> {
        let mut v = 1u32.to_le_bytes().to_vec(); // one field
        v.extend(1u32.to_le_bytes()); // Object
        v.extend(2u32.to_le_bytes()); // of two fields
        v.extend(18u32.to_le_bytes());
        v.extend(utf16z("Name"));
        v.extend(14u32.to_le_bytes());
        v.extend(utf16z("Mean"));
        v.extend(utf16z(name));
        v
    }
    let mut payload = utf16z("cpu-usage");
    payload.extend(2.5f64.to_le_bytes());
    for (name, flattened) in [("", true), ("Payload", false)] {
        let mut blob = metadata(1, "System.Runtime", 4, "EventCounters", 0, &[], &[]);
        blob.truncate(blob.len() - 4); // the empty field count
        blob.extend(object_field(name));
        let mut s = Stream::new();
        s.trace(8);
        s.block("MetadataBlock", &compressed_block(&[meta_blob(blob)]));
        s.block(
            "EventBlock",
            &compressed_block(&[Blob {
                metadata_id: 1,
                sequence: 1,
                payload: payload.clone(),
                ..Blob::default()
            }]),
        );
        s.end();
        let (_, events, _) = Parser::parse_all(&s.bytes).unwrap();
        let fields = events[0].fields().unwrap();
        if flattened {
            assert_eq!(field(&fields, "Name").as_str(), Some("cpu-usage"));
            assert_eq!(field(&fields, "Mean"), &Value::Float(2.5));
        } else {
            let inner = field(&fields, "Payload");
            assert_eq!(
                inner.field("Name").and_then(Value::as_str),
                Some("cpu-usage")
            );
        }
    }
}
