//! An OTLP profiles receiver for the tests: requests decoded by `protoc
//! --decode` (Debian's protobuf-compiler, installed by
//! scripts/install-profile-readers.sh), not by corprof, then checked
//! against the dictionary rules of opentelemetry-proto v1.11.0's
//! `profiles.proto`.
//!
//! No package reachable here ships the v1development profiles schema
//! (Debian has no opentelemetry-proto package; npm's
//! `@opentelemetry/otlp-transformer` 0.301.1 and NuGet's OpenTelemetry
//! packages carry no profiles; the Maven jar that does is not reachable),
//! so the schema below is this project's own transcription of the field
//! names, numbers and types of that tag (commit 790608c4). Decoding with
//! it proves the bytes are well-formed protobuf that a generic decoder
//! reads under those numbers, and the rules below hold; it cannot catch a
//! number mistranscribed the same way here and in `src/profile/otlp.rs`.

#![allow(dead_code)]

use std::collections::{BTreeMap, HashSet};
use std::io::Write;
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread;
use std::time::Duration;

/// The request type `protoc --decode` reads.
pub(crate) const REQUEST: &str =
    "opentelemetry.proto.collector.profiles.v1development.ExportProfilesServiceRequest";

/// The schema, file by file (paths as in opentelemetry-proto).
const SCHEMA: [(&str, &str); 4] = [
    (
        "opentelemetry/proto/common/v1/common.proto",
        r#"syntax = "proto3";
package opentelemetry.proto.common.v1;
message AnyValue {
  oneof value {
    string string_value = 1;
    bool bool_value = 2;
    int64 int_value = 3;
    double double_value = 4;
    ArrayValue array_value = 5;
    KeyValueList kvlist_value = 6;
    bytes bytes_value = 7;
    int32 string_value_strindex = 8;
  }
}
message ArrayValue { repeated AnyValue values = 1; }
message KeyValueList { repeated KeyValue values = 1; }
message KeyValue {
  string key = 1;
  AnyValue value = 2;
  int32 key_strindex = 3;
}
message InstrumentationScope {
  string name = 1;
  string version = 2;
  repeated KeyValue attributes = 3;
  uint32 dropped_attributes_count = 4;
}
message EntityRef {
  string schema_url = 1;
  string type = 2;
  repeated string id_keys = 3;
  repeated string description_keys = 4;
}
"#,
    ),
    (
        "opentelemetry/proto/resource/v1/resource.proto",
        r#"syntax = "proto3";
package opentelemetry.proto.resource.v1;
import "opentelemetry/proto/common/v1/common.proto";
message Resource {
  repeated opentelemetry.proto.common.v1.KeyValue attributes = 1;
  uint32 dropped_attributes_count = 2;
  repeated opentelemetry.proto.common.v1.EntityRef entity_refs = 3;
}
"#,
    ),
    (
        "opentelemetry/proto/profiles/v1development/profiles.proto",
        r#"syntax = "proto3";
package opentelemetry.proto.profiles.v1development;
import "opentelemetry/proto/common/v1/common.proto";
import "opentelemetry/proto/resource/v1/resource.proto";
message ProfilesDictionary {
  repeated Mapping mapping_table = 1;
  repeated Location location_table = 2;
  repeated Function function_table = 3;
  repeated Link link_table = 4;
  repeated string string_table = 5;
  repeated KeyValueAndUnit attribute_table = 6;
  repeated Stack stack_table = 7;
}
message ResourceProfiles {
  reserved 1000;
  opentelemetry.proto.resource.v1.Resource resource = 1;
  repeated ScopeProfiles scope_profiles = 2;
  string schema_url = 3;
}
message ScopeProfiles {
  opentelemetry.proto.common.v1.InstrumentationScope scope = 1;
  repeated Profile profiles = 2;
  string schema_url = 3;
}
message Profile {
  ValueType sample_type = 1;
  repeated Sample samples = 2;
  fixed64 time_unix_nano = 3;
  uint64 duration_nano = 4;
  ValueType period_type = 5;
  int64 period = 6;
  bytes profile_id = 7;
  uint32 dropped_attributes_count = 8;
  string original_payload_format = 9;
  bytes original_payload = 10;
  repeated int32 attribute_indices = 11;
}
message Link { bytes trace_id = 1; bytes span_id = 2; }
message ValueType { int32 type_strindex = 1; int32 unit_strindex = 2; }
message Sample {
  int32 stack_index = 1;
  repeated int32 attribute_indices = 2;
  int32 link_index = 3;
  repeated int64 values = 4;
  repeated fixed64 timestamps_unix_nano = 5;
}
message Mapping {
  uint64 memory_start = 1;
  uint64 memory_limit = 2;
  uint64 file_offset = 3;
  int32 filename_strindex = 4;
  repeated int32 attribute_indices = 5;
}
message Stack { repeated int32 location_indices = 1; }
message Location {
  int32 mapping_index = 1;
  uint64 address = 2;
  repeated Line lines = 3;
  repeated int32 attribute_indices = 4;
}
message Line { int32 function_index = 1; int64 line = 2; int64 column = 3; }
message Function {
  int32 name_strindex = 1;
  int32 system_name_strindex = 2;
  int32 filename_strindex = 3;
  int64 start_line = 4;
}
message KeyValueAndUnit {
  int32 key_strindex = 1;
  opentelemetry.proto.common.v1.AnyValue value = 2;
  int32 unit_strindex = 3;
}
"#,
    ),
    (
        "opentelemetry/proto/collector/profiles/v1development/profiles_service.proto",
        r#"syntax = "proto3";
package opentelemetry.proto.collector.profiles.v1development;
import "opentelemetry/proto/profiles/v1development/profiles.proto";
service ProfilesService {
  rpc Export(ExportProfilesServiceRequest) returns (ExportProfilesServiceResponse) {}
}
message ExportProfilesServiceRequest {
  repeated opentelemetry.proto.profiles.v1development.ResourceProfiles resource_profiles = 1;
  opentelemetry.proto.profiles.v1development.ProfilesDictionary dictionary = 2;
}
message ExportProfilesServiceResponse { ExportProfilesPartialSuccess partial_success = 1; }
message ExportProfilesPartialSuccess { int64 rejected_profiles = 1; string error_message = 2; }
"#,
    ),
];

/// Pyroscope's push API request, transcribed from grafana/pyroscope
/// `api/push/v1/push.proto` and `api/types/v1/types.proto` (commit
/// 3fe6a457a; the fields corprof sends, and the annotations' number).
const PUSH_SCHEMA: [(&str, &str); 2] = [
    (
        "types/v1/types.proto",
        r#"syntax = "proto3";
package types.v1;
message LabelPair { string name = 1; string value = 2; }
"#,
    ),
    (
        "push/v1/push.proto",
        r#"syntax = "proto3";
package push.v1;
import "types/v1/types.proto";
message PushRequest { repeated RawProfileSeries series = 1; }
message RawProfileSeries {
  repeated types.v1.LabelPair labels = 1;
  repeated RawSample samples = 2;
  reserved 3;
}
message RawSample { bytes raw_profile = 1; string ID = 2; }
"#,
    ),
];

/// `protoc --decode=push.v1.PushRequest` of `body`: its text format.
pub(crate) fn decode_push(body: &[u8]) -> Result<String, String> {
    protoc(PUSH_SCHEMA[1].0, "push.v1.PushRequest", body)
}

/// The schemas written out once, under the target directory.
fn schema_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("target")
            .join("otlp-schema");
        for (path, text) in SCHEMA.iter().chain(&PUSH_SCHEMA) {
            let file = dir.join(path);
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            std::fs::write(&file, text).unwrap();
        }
        dir
    })
}

/// `protoc --decode` of `body` as an `ExportProfilesServiceRequest`: its
/// text format. Panics when protoc is missing (the test needs it).
pub(crate) fn decode(body: &[u8]) -> Result<String, String> {
    protoc(SCHEMA[3].0, REQUEST, body)
}

fn protoc(file: &str, message: &str, body: &[u8]) -> Result<String, String> {
    let mut child = Command::new("protoc")
        .arg(format!("-I{}", schema_dir().display()))
        .arg(format!("--decode={message}"))
        .arg(file)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("protoc (Debian's protobuf-compiler: scripts/install-profile-readers.sh)");
    let mut stdin = child.stdin.take().unwrap();
    let body = body.to_vec();
    let writer = thread::spawn(move || stdin.write_all(&body));
    let out = child.wait_with_output().unwrap();
    let _ = writer.join();
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// A decoded message: its fields in order, scalars as protoc prints them.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub(crate) struct Node(Vec<(String, Value)>);

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Value {
    Scalar(String),
    Message(Node),
}

/// Parses protoc's text format (`name: value`, `name {`, `}` lines).
pub(crate) fn parse(text: &str) -> Result<Node, String> {
    let mut stack = vec![(String::new(), Node::default())];
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        if line == "}" {
            let (name, node) = stack.pop().unwrap();
            let parent = stack.last_mut().ok_or("an unbalanced }")?;
            parent.1 .0.push((name, Value::Message(node)));
        } else if let Some(name) = line.strip_suffix(" {") {
            stack.push((String::from(name), Node::default()));
        } else if let Some((name, value)) = line.split_once(": ") {
            stack
                .last_mut()
                .unwrap()
                .1
                 .0
                .push((String::from(name), Value::Scalar(String::from(value))));
        } else {
            return Err(format!("a line protoc would not print: {line:?}"));
        }
    }
    if stack.len() != 1 {
        return Err(String::from("an unclosed message"));
    }
    let node = stack.pop().unwrap().1;
    if let Some(name) = node.unknown() {
        return Err(format!("a field the schema does not name: {name}"));
    }
    Ok(node)
}

impl Node {
    /// A field name that is a number: one the schema lacks.
    fn unknown(&self) -> Option<String> {
        self.0.iter().find_map(|(name, value)| {
            if name.starts_with(|c: char| c.is_ascii_digit()) {
                return Some(name.clone());
            }
            match value {
                Value::Message(node) => node.unknown(),
                Value::Scalar(_) => None,
            }
        })
    }

    fn all(&self, name: &str) -> Vec<&Value> {
        self.0
            .iter()
            .filter(|(n, _)| n == name)
            .map(|(_, v)| v)
            .collect()
    }

    pub(crate) fn messages(&self, name: &str) -> Vec<&Node> {
        self.all(name)
            .into_iter()
            .filter_map(|v| match v {
                Value::Message(node) => Some(node),
                Value::Scalar(_) => None,
            })
            .collect()
    }

    fn message(&self, name: &str) -> Option<&Node> {
        self.messages(name).into_iter().next()
    }

    pub(crate) fn scalars(&self, name: &str) -> Vec<&str> {
        self.all(name)
            .into_iter()
            .filter_map(|v| match v {
                Value::Scalar(s) => Some(s.as_str()),
                Value::Message(_) => None,
            })
            .collect()
    }

    /// An integer field (0 when absent, as proto3 leaves zeros out).
    fn int(&self, name: &str) -> i64 {
        self.scalars(name).first().map_or(0, |s| s.parse().unwrap())
    }

    fn ints(&self, name: &str) -> Vec<i64> {
        self.scalars(name)
            .iter()
            .map(|s| s.parse().unwrap())
            .collect()
    }

    /// A string or bytes field, unescaped ("" when absent).
    pub(crate) fn bytes(&self, name: &str) -> Vec<u8> {
        self.scalars(name)
            .first()
            .map_or(Vec::new(), |s| unquote(s))
    }

    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// A C-escaped, double-quoted string as protoc prints it.
fn unquote(text: &str) -> Vec<u8> {
    let inner = text
        .strip_prefix('"')
        .and_then(|t| t.strip_suffix('"'))
        .unwrap_or(text)
        .as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < inner.len() {
        if inner[i] != b'\\' {
            out.push(inner[i]);
            i += 1;
            continue;
        }
        let c = inner[i + 1];
        i += 2;
        match c {
            b'n' => out.push(b'\n'),
            b'r' => out.push(b'\r'),
            b't' => out.push(b'\t'),
            b'0'..=b'7' => {
                let mut v = u32::from(c - b'0');
                for _ in 0..2 {
                    if i < inner.len() && (b'0'..=b'7').contains(&inner[i]) {
                        v = v * 8 + u32::from(inner[i] - b'0');
                        i += 1;
                    }
                }
                out.push(v as u8);
            }
            b'x' => {
                let hex = std::str::from_utf8(&inner[i..i + 2]).unwrap();
                out.push(u8::from_str_radix(hex, 16).unwrap());
                i += 2;
            }
            other => out.push(other),
        }
    }
    out
}

/// One sample, resolved through the dictionary.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Sample {
    /// Function names, leaf first.
    pub(crate) stack: Vec<String>,
    pub(crate) attributes: BTreeMap<String, String>,
    pub(crate) link: usize,
    pub(crate) values: Vec<i64>,
}

/// One profile, resolved.
#[derive(Clone, Debug)]
pub(crate) struct Profile {
    pub(crate) sample_type: (String, String),
    pub(crate) period_type: Option<(String, String)>,
    pub(crate) period: i64,
    pub(crate) time_unix_nano: u64,
    pub(crate) duration_nano: u64,
    pub(crate) samples: Vec<Sample>,
}

/// A request, resolved.
#[derive(Clone, Debug)]
pub(crate) struct Request {
    pub(crate) resource: BTreeMap<String, String>,
    pub(crate) scope: (String, String),
    pub(crate) profiles: Vec<Profile>,
    /// The link table: (trace id, span id), each as its bytes.
    pub(crate) links: Vec<(Vec<u8>, Vec<u8>)>,
}

/// A value of an `AnyValue` as text (ints as decimals).
fn any_value(value: Option<&Node>) -> String {
    let Some(value) = value else {
        return String::new();
    };
    if let Some(s) = value.scalars("string_value").first() {
        return String::from_utf8(unquote(s)).unwrap();
    }
    value.int("int_value").to_string()
}

/// Checks the request's text against the rules of `profiles.proto` and
/// resolves it: one resource and one scope; every dictionary table
/// present with its zero value at index 0 (the link's with a 16-byte and
/// an 8-byte zero id), no duplicate entries, no unreferenced ones; every
/// index in range; attribute keys unique within a sample; sample
/// identities (stack, attributes, link) unique within a profile.
pub(crate) fn check(text: &str) -> Result<Request, String> {
    let top = parse(text)?;
    let [resource_profiles] = top.messages("resource_profiles")[..] else {
        return Err(String::from("not one resource_profiles"));
    };
    let dictionary = top.message("dictionary").ok_or("no dictionary")?;
    let strings: Vec<String> = dictionary
        .scalars("string_table")
        .iter()
        .map(|s| String::from_utf8(unquote(s)).map_err(|e| e.to_string()))
        .collect::<Result<_, _>>()?;
    let tables = [
        "mapping_table",
        "location_table",
        "function_table",
        "link_table",
        "attribute_table",
        "stack_table",
    ];
    let table = |name: &str| dictionary.messages(name);
    if strings.first().map(String::as_str) != Some("") {
        return Err(String::from("string_table[0] is not \"\""));
    }
    if strings.iter().collect::<HashSet<_>>().len() != strings.len() {
        return Err(String::from("a string twice in string_table"));
    }
    for name in tables {
        let entries = table(name);
        let zero = entries.first().ok_or(format!("{name} has no entry 0"))?;
        let zero_ok = if name == "link_table" {
            zero.bytes("trace_id") == [0; 16] && zero.bytes("span_id") == [0; 8]
        } else {
            zero.is_empty()
        };
        if !zero_ok {
            return Err(format!("{name}[0] is not the zero value: {zero:?}"));
        }
        if entries.iter().collect::<HashSet<_>>().len() != entries.len() {
            return Err(format!("an entry twice in {name}"));
        }
    }
    let (locations, functions, links, attributes, stacks, mappings) = (
        table("location_table"),
        table("function_table"),
        table("link_table"),
        table("attribute_table"),
        table("stack_table"),
        table("mapping_table"),
    );
    // What is referenced, to find orphans.
    let mut used: BTreeMap<&str, HashSet<i64>> = BTreeMap::new();
    let mut refer = |table: &'static str, index: i64, len: usize| -> Result<(), String> {
        if index < 0 || index as usize >= len {
            return Err(format!("index {index} out of {table} ({len} entries)"));
        }
        used.entry(table).or_default().insert(index);
        Ok(())
    };
    let text_of = |index: i64| strings[index as usize].clone();
    for function in &functions {
        for field in ["name_strindex", "system_name_strindex", "filename_strindex"] {
            refer("string_table", function.int(field), strings.len())?;
        }
    }
    for location in &locations {
        refer(
            "mapping_table",
            location.int("mapping_index"),
            mappings.len(),
        )?;
        for line in location.messages("lines") {
            refer(
                "function_table",
                line.int("function_index"),
                functions.len(),
            )?;
        }
    }
    for stack in &stacks {
        for index in stack.ints("location_indices") {
            refer("location_table", index, locations.len())?;
        }
    }
    for attribute in &attributes {
        refer("string_table", attribute.int("key_strindex"), strings.len())?;
        refer(
            "string_table",
            attribute.int("unit_strindex"),
            strings.len(),
        )?;
    }
    let resolve_stack = |index: i64| -> Vec<String> {
        stacks[index as usize]
            .ints("location_indices")
            .iter()
            .map(|&l| {
                let line = locations[l as usize].messages("lines");
                let function = &functions[line[0].int("function_index") as usize];
                text_of(function.int("name_strindex"))
            })
            .collect()
    };
    let resource = resource_profiles
        .message("resource")
        .map(|r| {
            r.messages("attributes")
                .iter()
                .map(|kv| {
                    let key = String::from_utf8(kv.bytes("key")).unwrap();
                    (key, any_value(kv.message("value")))
                })
                .collect()
        })
        .unwrap_or_default();
    let [scope_profiles] = resource_profiles.messages("scope_profiles")[..] else {
        return Err(String::from("not one scope_profiles"));
    };
    let scope = scope_profiles.message("scope").ok_or("no scope")?;
    let scope = (
        String::from_utf8(scope.bytes("name")).unwrap(),
        String::from_utf8(scope.bytes("version")).unwrap(),
    );
    let mut profiles = Vec::new();
    for profile in scope_profiles.messages("profiles") {
        let value_type = |node: Option<&Node>, refer: &mut dyn FnMut(i64) -> Result<(), String>| {
            node.map(|t| -> Result<(String, String), String> {
                refer(t.int("type_strindex"))?;
                refer(t.int("unit_strindex"))?;
                Ok((
                    text_of(t.int("type_strindex")),
                    text_of(t.int("unit_strindex")),
                ))
            })
            .transpose()
        };
        let mut string_ref = |i| refer("string_table", i, strings.len());
        let sample_type = value_type(profile.message("sample_type"), &mut string_ref)?
            .ok_or("a profile without sample_type")?;
        let period_type = value_type(profile.message("period_type"), &mut string_ref)?;
        let mut samples = Vec::new();
        let mut identities = HashSet::new();
        for sample in profile.messages("samples") {
            let stack = sample.int("stack_index");
            refer("stack_table", stack, stacks.len())?;
            let link = sample.int("link_index");
            refer("link_table", link, links.len())?;
            let mut indices = sample.ints("attribute_indices");
            let mut resolved = BTreeMap::new();
            for &index in &indices {
                refer("attribute_table", index, attributes.len())?;
                let attribute = attributes[index as usize];
                let key = text_of(attribute.int("key_strindex"));
                let value = any_value(attribute.message("value"));
                if resolved.insert(key.clone(), value).is_some() {
                    return Err(format!("the key {key} twice in a sample"));
                }
            }
            indices.sort_unstable();
            if !identities.insert((stack, indices, link)) {
                return Err(format!("two samples of one identity in {sample_type:?}"));
            }
            let values = sample.ints("values");
            if values.is_empty() {
                return Err(String::from("a sample without values"));
            }
            samples.push(Sample {
                stack: resolve_stack(stack),
                attributes: resolved,
                link: link as usize,
                values,
            });
        }
        profiles.push(Profile {
            sample_type,
            period_type,
            period: profile.int("period"),
            time_unix_nano: profile.int("time_unix_nano") as u64,
            duration_nano: profile.int("duration_nano") as u64,
            samples,
        });
    }
    used.entry("string_table").or_default().extend([0]);
    let lens = [
        ("link_table", links.len()),
        ("location_table", locations.len()),
        ("function_table", functions.len()),
        ("attribute_table", attributes.len()),
        ("stack_table", stacks.len()),
        ("string_table", strings.len()),
    ];
    for (name, len) in lens {
        let seen = used.get(name).cloned().unwrap_or_default();
        if let Some(orphan) = (1..len as i64).find(|i| !seen.contains(i)) {
            return Err(format!("{name}[{orphan}] is referenced by nothing"));
        }
    }
    Ok(Request {
        resource,
        scope,
        profiles,
        links: links
            .iter()
            .map(|l| (l.bytes("trace_id"), l.bytes("span_id")))
            .collect(),
    })
}

/// One request the receiver got.
#[derive(Clone, Debug)]
pub(crate) struct Received {
    pub(crate) path: String,
    pub(crate) headers: BTreeMap<String, String>,
    /// The body, gunzipped when it came with `Content-Encoding: gzip`.
    pub(crate) body: Vec<u8>,
}

/// How the receiver answers: `200` with an empty response, `200` with a
/// partial success (1 rejected), `400` and `503` with a `Status`, or no
/// answer at all (the connection held).
pub(crate) const OK: u8 = 0;
pub(crate) const PARTIAL: u8 = 1;
pub(crate) const BAD_REQUEST: u8 = 2;
pub(crate) const UNAVAILABLE: u8 = 3;
pub(crate) const HANG: u8 = 4;

/// An OTLP/HTTP receiver on 127.0.0.1.
pub(crate) struct Receiver {
    pub(crate) port: u16,
    pub(crate) mode: Arc<AtomicU8>,
    received: Arc<Mutex<Vec<Received>>>,
    errors: Arc<Mutex<Vec<String>>>,
}

impl Receiver {
    pub(crate) fn start(listener: TcpListener) -> Receiver {
        let port = listener.local_addr().unwrap().port();
        let (mode, received, errors) = (
            Arc::new(AtomicU8::new(OK)),
            Arc::new(Mutex::new(Vec::new())),
            Arc::new(Mutex::new(Vec::new())),
        );
        let (m, r, e) = (
            Arc::clone(&mode),
            Arc::clone(&received),
            Arc::clone(&errors),
        );
        thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let (m, r, e) = (Arc::clone(&m), Arc::clone(&r), Arc::clone(&e));
                thread::spawn(move || serve(stream, &m, &r, &e));
            }
        });
        Receiver {
            port,
            mode,
            received,
            errors,
        }
    }

    pub(crate) fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    pub(crate) fn received(&self) -> Vec<Received> {
        self.received.lock().unwrap().clone()
    }

    pub(crate) fn errors(&self) -> Vec<String> {
        self.errors.lock().unwrap().clone()
    }
}

fn serve(
    mut stream: TcpStream,
    mode: &AtomicU8,
    received: &Mutex<Vec<Received>>,
    errors: &Mutex<Vec<String>>,
) {
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mode = mode.load(Ordering::SeqCst);
    let request = match read_request(&mut stream) {
        Ok(request) => request,
        Err(error) => return errors.lock().unwrap().push(error),
    };
    if mode == HANG {
        thread::sleep(Duration::from_secs(60));
        return;
    }
    let (status, body): (&str, &[u8]) = match mode {
        // partial_success { rejected_profiles: 1, error_message: "one" }
        PARTIAL => ("200 OK", b"\x0a\x07\x08\x01\x12\x03one"),
        // Status { code: 3, message: "bad" }
        BAD_REQUEST => ("400 Bad Request", b"\x08\x03\x12\x03bad"),
        // Status { code: 14, message: "busy" }
        UNAVAILABLE => ("503 Service Unavailable", b"\x08\x0e\x12\x04busy"),
        _ => ("200 OK", b""),
    };
    if mode != BAD_REQUEST && mode != UNAVAILABLE {
        received.lock().unwrap().push(request);
    }
    let _ = write!(
        stream,
        "HTTP/1.1 {status}\r\nContent-Type: application/x-protobuf\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    let _ = stream.write_all(body);
}

/// Reads one `POST` whole (`Content-Length` delimited,
/// [`read_post`](super::web::read_post)), gunzipping a gzip body with
/// Debian's gzip.
fn read_request(stream: &mut TcpStream) -> Result<Received, String> {
    let super::web::Post {
        target,
        headers,
        mut body,
    } = super::web::read_post(stream)?;
    if headers.get("content-encoding").map(String::as_str) == Some("gzip") {
        body = gunzip(&body)?;
    }
    Ok(Received {
        path: target,
        headers,
        body,
    })
}

pub(crate) fn gunzip(data: &[u8]) -> Result<Vec<u8>, String> {
    let mut child = Command::new("gzip")
        .arg("-dc")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("gzip: {e}"))?;
    let mut stdin = child.stdin.take().unwrap();
    let data = data.to_vec();
    let writer = thread::spawn(move || stdin.write_all(&data));
    let out = child.wait_with_output().map_err(|e| e.to_string())?;
    let _ = writer.join();
    if !out.status.success() {
        return Err(String::from("gzip -dc failed"));
    }
    Ok(out.stdout)
}
