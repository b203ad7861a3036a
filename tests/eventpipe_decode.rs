//! The EventPipe decoder (`corprof::eventpipe`) on hand-built blobs: the
//! metadata format of the runtime's metadata generator, the runtime
//! provider's manifest layouts, and every truncation of each blob (an
//! error, never a panic).

use corprof::eventpipe::{
    decode_payload, gc_reason_name, runtime_fields, Error, EventMetadata, Field, FieldType, Length,
    Value,
};

fn utf16z(text: &str) -> Vec<u8> {
    text.encode_utf16()
        .chain(Some(0))
        .flat_map(u16::to_le_bytes)
        .collect()
}

/// The metadata CoreCLR 8.0.4 delivered with an `ExceptionThrown` event of
/// its own provider (bytes recorded from a real session): id 80, an empty
/// name, keywords 0x200008000 (Monitoring | Exception), version 1, level 2
/// (Error), no fields.
const RUNTIME_EXCEPTION_METADATA: [u8; 26] = [
    0x50, 0, 0, 0, 0, 0, 0x00, 0x80, 0, 0, 0x02, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0,
];

#[test]
fn runtime_provider_metadata_names_no_fields() {
    let meta = EventMetadata::parse(&RUNTIME_EXCEPTION_METADATA).unwrap();
    assert_eq!(meta.id, 80);
    assert_eq!(meta.name, "");
    assert_eq!(meta.keywords, 0x2_0000_8000);
    assert_eq!((meta.version, meta.level), (1, 2));
    assert!(meta.fields.is_empty());
}

fn exception_payload(ty: &str, message: &str) -> Vec<u8> {
    let mut data = utf16z(ty);
    data.extend(utf16z(message));
    data.extend(0x1234_5678usize.to_le_bytes()); // ExceptionEIP: a pointer
    data.extend(0x8013_1509u32.to_le_bytes()); // ExceptionHRESULT
    data.extend(0x10u16.to_le_bytes()); // ExceptionFlags
    data.extend(7u16.to_le_bytes()); // ClrInstanceID
    data
}

#[test]
fn exception_thrown_decodes_by_the_manifest_layout() {
    let fields = runtime_fields(80, 1).unwrap();
    let data = exception_payload("System.InvalidOperationException", "state is invalid");
    let values = decode_payload(&fields, &data).unwrap();
    assert_eq!(values[0].as_str(), Some("System.InvalidOperationException"));
    assert_eq!(values[1].as_str(), Some("state is invalid"));
    assert_eq!(values[2].as_u64(), Some(0x1234_5678));
    assert_eq!(values[3].as_u64(), Some(0x8013_1509));
    assert_eq!(values[4].as_u64(), Some(0x10));
    assert_eq!(values[5].as_u64(), Some(7));
    // Every truncation is an error, not a panic.
    for cut in 0..data.len() {
        assert!(
            decode_payload(&fields, &data[..cut]).is_err(),
            "cut at {cut}"
        );
    }
    // Later versions' extra bytes are ignored.
    let mut longer = data.clone();
    longer.extend([1, 2, 3]);
    assert_eq!(decode_payload(&fields, &longer).unwrap(), values);
}

#[test]
fn gc_start_and_allocation_tick_layouts_and_reasons() {
    let gc = runtime_fields(1, 2).unwrap();
    let mut data = Vec::new();
    for v in [3u32, 2, 1, 0] {
        data.extend(v.to_le_bytes());
    }
    data.extend(0u16.to_le_bytes());
    data.extend(0u64.to_le_bytes());
    let values = decode_payload(&gc, &data).unwrap();
    let reason = gc.iter().position(|f| f.name == "Reason").unwrap();
    assert_eq!(
        gc_reason_name(values[reason].as_u64().unwrap() as u32),
        "Induced"
    );
    assert_eq!(gc_reason_name(0), "AllocSmall");
    assert_eq!(gc_reason_name(99), "Reason99");
    // GCStart_V1: V2's fields but the last (ClientSequenceNumber).
    let names = |fields: &[Field]| fields.iter().map(|f| f.name.clone()).collect::<Vec<_>>();
    assert_eq!(
        names(&runtime_fields(1, 1).unwrap()),
        names(&gc[..gc.len() - 1])
    );
    assert_eq!(gc.last().unwrap().name, "ClientSequenceNumber");
    let tick = runtime_fields(10, 4).unwrap();
    assert_eq!(tick.iter().position(|f| f.name == "TypeName"), Some(5));
    assert_eq!(tick[5].ty, FieldType::String);
    assert!(runtime_fields(12345, 1).is_none());
}

/// GCAllocationTick by version, as ClrEtwAll.man's templates list them: V2
/// ends at HeapIndex, V3 appends Address, V4 ObjectSize.
#[test]
fn allocation_tick_versions_append_address_and_object_size() {
    let names = |v| -> Vec<String> {
        runtime_fields(10, v)
            .unwrap()
            .into_iter()
            .map(|f| f.name)
            .collect()
    };
    let v2 = [
        "AllocationAmount",
        "AllocationKind",
        "ClrInstanceID",
        "AllocationAmount64",
        "TypeID",
        "TypeName",
        "HeapIndex",
    ];
    assert_eq!(names(2), v2);
    assert_eq!(names(3)[..7], v2);
    assert_eq!(names(3)[7..], ["Address"]);
    assert_eq!(names(4)[8..], ["ObjectSize"]);
    assert!(runtime_fields(10, 1).is_none());
    // A V4 payload as the runtime writes it: every field read, the object
    // size last.
    let mut data = Vec::new();
    data.extend(102_400u32.to_le_bytes());
    data.extend(0u32.to_le_bytes());
    data.extend(8u16.to_le_bytes());
    data.extend(102_400u64.to_le_bytes());
    data.extend(0x7f00_1234u64.to_le_bytes());
    data.extend(utf16z("System.Byte[]"));
    data.extend(0u32.to_le_bytes());
    data.extend(0x7e00_0000u64.to_le_bytes());
    data.extend(3024u64.to_le_bytes());
    let values = decode_payload(&runtime_fields(10, 4).unwrap(), &data).unwrap();
    assert_eq!(values[5].as_str(), Some("System.Byte[]"));
    assert_eq!(values[8].as_u64(), Some(3024));
    // Cut short inside ObjectSize: an error, not a read past the end.
    assert!(decode_payload(&runtime_fields(10, 4).unwrap(), &data[..data.len() - 3]).is_err());
}

/// A profiler-defined event's metadata: fields described, decoded by them.
#[test]
fn described_fields_are_decoded_by_the_metadata() {
    let mut blob = Vec::new();
    blob.extend(7u32.to_le_bytes());
    blob.extend(utf16z("Checkout"));
    blob.extend(0x10u64.to_le_bytes());
    blob.extend(1u32.to_le_bytes());
    blob.extend(4u32.to_le_bytes());
    blob.extend(3u32.to_le_bytes()); // three fields
    for (code, name) in [(9u32, "Count"), (18, "Customer"), (3, "Paid")] {
        blob.extend(code.to_le_bytes());
        blob.extend(utf16z(name));
    }
    let meta = EventMetadata::parse(&blob).unwrap();
    assert_eq!(meta.name, "Checkout");
    let names: Vec<&str> = meta.fields.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["Count", "Customer", "Paid"]);
    let mut data = (-5i32).to_le_bytes().to_vec();
    data.extend(utf16z("Ada"));
    data.extend(1u32.to_le_bytes());
    let values = decode_payload(&meta.fields, &data).unwrap();
    assert_eq!(
        values,
        [
            Value::Int(-5),
            Value::String("Ada".into()),
            Value::Bool(true)
        ]
    );
    // A blob that ends right after the level is a field-less event; every
    // other cut is an error.
    let header_end = 4 + utf16z("Checkout").len() + 8 + 4 + 4;
    for cut in 0..header_end {
        assert!(EventMetadata::parse(&blob[..cut]).is_err(), "cut at {cut}");
    }
    for cut in header_end + 1..blob.len() {
        assert!(EventMetadata::parse(&blob[..cut]).is_err(), "cut at {cut}");
    }
}

#[test]
fn bad_metadata_is_an_error() {
    let mut head = Vec::new();
    head.extend(1u32.to_le_bytes());
    head.extend(utf16z("E"));
    head.extend(0u64.to_le_bytes());
    head.extend(0u32.to_le_bytes());
    head.extend(0u32.to_le_bytes());
    // An impossible field count: refused before anything is allocated,
    // at the byte after the count.
    let mut huge = head.clone();
    huge.extend(u32::MAX.to_le_bytes());
    assert_eq!(
        EventMetadata::parse(&huge),
        Err(Error {
            offset: head.len() + 4,
            what: "too many fields"
        })
    );
    // An array field (type code 19, then the element's): decoded, its
    // elements after a u16 count.
    let mut array = head.clone();
    array.extend(1u32.to_le_bytes());
    array.extend(19u32.to_le_bytes());
    array.extend(9u32.to_le_bytes());
    array.extend(utf16z("Values"));
    let meta = EventMetadata::parse(&array).unwrap();
    assert_eq!(
        meta.fields,
        [Field {
            name: "Values".into(),
            ty: FieldType::Array {
                element: Box::new(FieldType::Int32),
                length: Length::Prefixed
            }
        }]
    );
    let mut payload = 2u16.to_le_bytes().to_vec();
    payload.extend(10i32.to_le_bytes());
    payload.extend((-20i32).to_le_bytes());
    assert_eq!(
        decode_payload(&meta.fields, &payload),
        Ok(vec![Value::Array(vec![Value::Int(10), Value::Int(-20)])])
    );
    // A count larger than the elements that follow: an error, not a read
    // past the payload.
    assert!(decode_payload(&meta.fields, &payload[..9]).is_err());
    // An array of an unknown element type: refused where the code is.
    let mut unknown = head.clone();
    unknown.extend(1u32.to_le_bytes());
    unknown.extend(19u32.to_le_bytes());
    unknown.extend(99u32.to_le_bytes());
    unknown.extend(utf16z("Values"));
    assert_eq!(
        EventMetadata::parse(&unknown),
        Err(Error {
            offset: head.len() + 8,
            what: "unknown array element type code"
        })
    );
    // A name that is not UTF-16.
    let mut bad = 1u32.to_le_bytes().to_vec();
    bad.extend(0xD800u16.to_le_bytes());
    bad.extend(0u16.to_le_bytes());
    assert_eq!(
        EventMetadata::parse(&bad),
        Err(Error {
            offset: 4,
            what: "string is not valid UTF-16"
        })
    );
    let text = EventMetadata::parse(&huge).unwrap_err().to_string();
    assert!(text.contains("too many fields"), "{text}");
}

#[test]
fn integer_values_convert_only_when_they_fit() {
    use corprof::eventpipe::Value;
    assert_eq!(Value::Int(-5).as_i64(), Some(-5));
    assert_eq!(Value::Int(-5).as_u64(), None);
    assert_eq!(Value::UInt(7).as_i64(), Some(7));
    assert_eq!(Value::UInt(u64::MAX).as_i64(), None);
    assert_eq!(Value::Int(9).as_u64(), Some(9));
    assert_eq!(Value::Bool(true).as_i64(), None);
    assert_eq!(Value::String("1".into()).as_i64(), None);
}
