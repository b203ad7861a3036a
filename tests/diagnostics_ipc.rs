//! The diagnostics IPC client without a runtime: the wire format against
//! byte sequences transcribed from the protocol's documentation
//! (dotnet/diagnostics `documentation/design-docs/ipc-protocol.md`) and the
//! runtime's sources, and the client against fake servers that answer
//! garbage, too little, too much, or nothing at all.

// The fake servers listen on Unix sockets; elsewhere only the wire-format
// tests run, and some imports go unused.
#![cfg_attr(not(unix), allow(unused_imports))]

use std::time::{Duration, Instant};

use corprof::diagnostics::{
    decode_environment, discovery, encode_environment, AttachProfiler, Command, DiagnosticsClient,
    Error, ProcessInfo, Provider, Rundown, SessionConfig, WireError, DEFAULT_RUNDOWN_KEYWORDS,
    DS_IPC_E_BAD_ENCODING, DS_IPC_E_UNKNOWN_COMMAND, MAX_ENVIRONMENT_BYTES,
};
use corprof::diagnostics::{
    encode_message, Header, PayloadReader, PayloadWriter, HEADER_SIZE, MAGIC, MAX_PAYLOAD_SIZE,
};
use corprof::profiling::CORPROF_E_PROFILER_ALREADY_ACTIVE;
use corprof::{GUID, HRESULT};

/// "DOTNET_IPC_V1" and its NUL, as bytes.
const MAGIC_BYTES: [u8; 14] = [
    0x44, 0x4F, 0x54, 0x4E, 0x45, 0x54, 0x5F, 0x49, 0x50, 0x43, 0x5F, 0x56, 0x31, 0x00,
];

fn utf16z(text: &str) -> Vec<u8> {
    text.encode_utf16()
        .chain(Some(0))
        .flat_map(u16::to_le_bytes)
        .collect()
}

// ---------------------------------------------------------------------------
// Wire format
// ---------------------------------------------------------------------------

#[test]
fn magic_is_the_documented_string() {
    assert_eq!(MAGIC, MAGIC_BYTES);
    assert_eq!(&MAGIC[..13], b"DOTNET_IPC_V1");
    assert_eq!(HEADER_SIZE, 14 + 2 + 1 + 1 + 2);
}

/// The documentation's generic OK message: magic, size 20, 0xFF 0x00, 0x0000.
#[test]
fn generic_ok_message_matches_the_documentation() {
    let mut expected = MAGIC_BYTES.to_vec();
    expected.extend_from_slice(&[20, 0, 0xFF, 0x00, 0x00, 0x00]);
    assert_eq!(encode_message(Command::OK, &[]).unwrap(), expected);
    let header = Header::decode(expected[..20].try_into().unwrap()).unwrap();
    assert_eq!(header.size, 20);
    assert_eq!(header.command, Command::OK);
    assert_eq!(header.payload_len(), 0);
}

/// The documentation's error example: Server/Error with payload
/// `0x80131384` (`DS_IPC_E_BAD_ENCODING`). The table there gives size 28,
/// but its payload is one `int32`: the runtime (`ds_ipc_message_send_error`,
/// 3.1's `IpcMessage::SendErrorMessage`) sends 20 + 4 = 24 bytes, which is
/// what `tests/e2e_attach.rs` receives from CoreCLR 3.1.
#[test]
fn error_message_decodes_to_its_hresult() {
    let mut bytes = MAGIC_BYTES.to_vec();
    bytes.extend_from_slice(&[24, 0, 0xFF, 0xFF, 0, 0, 0x84, 0x13, 0x13, 0x80]);
    let header = Header::decode(bytes[..20].try_into().unwrap()).unwrap();
    assert_eq!(header.command, Command::ERROR);
    assert_eq!(header.payload_len(), 4);
    let hr = PayloadReader::new(&bytes[20..]).i32().unwrap();
    assert_eq!(HRESULT(hr), DS_IPC_E_BAD_ENCODING);
    assert_eq!(hr as u32, 0x8013_1384);
}

/// The documentation's CollectTracing example: 80 bytes, command 0x0202,
/// circularBufferMB 250, format 1, one provider with keywords 100, level 2,
/// name "MyEventSource" (14 UTF-16 units with the NUL), arguments length 0.
#[test]
fn collect_tracing_example_matches_the_documentation() {
    let mut expected = MAGIC_BYTES.to_vec();
    expected.extend_from_slice(&[80, 0, 0x02, 0x02, 0, 0]);
    expected.extend_from_slice(&250u32.to_le_bytes());
    expected.extend_from_slice(&1u32.to_le_bytes());
    expected.extend_from_slice(&1u32.to_le_bytes());
    expected.extend_from_slice(&100u64.to_le_bytes());
    expected.extend_from_slice(&2u32.to_le_bytes());
    expected.extend_from_slice(&14u32.to_le_bytes());
    expected.extend_from_slice(&utf16z("MyEventSource"));
    expected.extend_from_slice(&0u32.to_le_bytes());
    assert_eq!(expected.len(), 80);

    let mut payload = PayloadWriter::new();
    payload.u32(250).u32(1).u32(1).u64(100).u32(2);
    payload.string("MyEventSource").unwrap();
    payload.u32(0);
    let message = encode_message(Command { set: 2, id: 2 }, payload.as_bytes()).unwrap();
    assert_eq!(message, expected);
}

/// AttachProfiler (0x0301): `uint32 attachTimeout`, `CLSID` (16 bytes:
/// `u32`, `u16`, `u16`, `u8[8]`, as the runtime's `TryParse<CLSID>` copies
/// it), `string profilerPath`, `uint32 clientDataSize`, the bytes.
#[test]
fn attach_profiler_request_bytes() {
    let request = AttachProfiler {
        attach_timeout: Duration::from_millis(5000),
        clsid: GUID::parse("C5E5A2F1-3B7D-4C59-9E1A-2F0B6D8C4A17"),
        profiler_path: "/p.so",
        client_data: b"hi",
    };
    let mut expected = MAGIC_BYTES.to_vec();
    let payload_len = 4 + 16 + 4 + 12 + 4 + 2;
    expected.extend_from_slice(&((20 + payload_len) as u16).to_le_bytes());
    expected.extend_from_slice(&[0x03, 0x01, 0, 0]);
    expected.extend_from_slice(&[0x88, 0x13, 0, 0]); // 5000
    expected.extend_from_slice(&[0xF1, 0xA2, 0xE5, 0xC5, 0x7D, 0x3B, 0x59, 0x4C]);
    expected.extend_from_slice(&[0x9E, 0x1A, 0x2F, 0x0B, 0x6D, 0x8C, 0x4A, 0x17]);
    expected.extend_from_slice(&[6, 0, 0, 0]);
    expected.extend_from_slice(&[b'/', 0, b'p', 0, b'.', 0, b's', 0, b'o', 0, 0, 0]);
    expected.extend_from_slice(&[2, 0, 0, 0, b'h', b'i']);
    let message = encode_message(Command::ATTACH_PROFILER, &request.encode().unwrap()).unwrap();
    assert_eq!(message, expected);
}

/// ProcessInfo's answer, in the order `ds-process-protocol.c` writes it:
/// `u64` pid, GUID cookie, then command line, OS and arch strings.
#[test]
fn process_info_response_decodes() {
    let mut payload = Vec::new();
    payload.extend_from_slice(&4242u64.to_le_bytes());
    payload.extend_from_slice(&[1, 0, 0, 0, 2, 0, 3, 0, 4, 5, 6, 7, 8, 9, 10, 11]);
    for text in ["/usr/bin/dotnet app.dll", "Linux", "x64"] {
        payload.extend_from_slice(&((text.len() + 1) as u32).to_le_bytes());
        payload.extend_from_slice(&utf16z(text));
    }
    let info = ProcessInfo::decode(&payload).unwrap();
    assert_eq!(info.process_id, 4242);
    assert_eq!(
        info.runtime_cookie,
        GUID::parse("00000001-0002-0003-0405-060708090A0B")
    );
    assert_eq!(info.command_line, "/usr/bin/dotnet app.dll");
    assert_eq!(info.os, "Linux");
    assert_eq!(info.arch, "x64");
    assert_eq!(info.encode().unwrap(), payload);
}

#[test]
fn strings_are_checked_against_the_payload() {
    // A count of 0 is a null string.
    assert_eq!(PayloadReader::new(&[0, 0, 0, 0]).string(), Ok(None));
    // A count past the end: truncated, no allocation of 2^32 units.
    let huge = [0xFF, 0xFF, 0xFF, 0xFF, b'a', 0];
    assert!(matches!(
        PayloadReader::new(&huge).string(),
        Err(WireError::Truncated { available: 2, .. })
    ));
    // Without the final NUL.
    assert_eq!(
        PayloadReader::new(&[1, 0, 0, 0, b'a', 0]).string(),
        Err(WireError::MissingNul { offset: 0 })
    );
    // An unpaired surrogate.
    assert_eq!(
        PayloadReader::new(&[2, 0, 0, 0, 0x00, 0xD8, 0, 0]).string(),
        Err(WireError::InvalidUtf16 { offset: 0 })
    );
    // Fixed-size fields past the end.
    assert!(matches!(
        PayloadReader::new(&[1, 2, 3]).u32(),
        Err(WireError::Truncated {
            needed: 4,
            available: 3,
            ..
        })
    ));
    // Byte arrays too.
    assert!(matches!(
        PayloadReader::new(&[9, 0, 0, 0, 1]).byte_array(),
        Err(WireError::Truncated {
            needed: 9,
            available: 1,
            ..
        })
    ));
    // A NUL inside a string to send would cut it short.
    assert_eq!(
        PayloadWriter::new().string("a\0b").map(|_| ()),
        Err(WireError::NulInString)
    );
}

#[test]
fn headers_are_validated() {
    let mut bytes = [0u8; 20];
    bytes[..14].copy_from_slice(b"DOTNET_IPC_V2\0");
    bytes[14] = 20;
    assert!(matches!(
        Header::decode(&bytes),
        Err(WireError::BadMagic(_))
    ));
    bytes[..14].copy_from_slice(&MAGIC);
    bytes[14] = 19;
    assert_eq!(Header::decode(&bytes), Err(WireError::SizeTooSmall(19)));
    // The largest payload fits, one more byte does not.
    assert!(encode_message(Command::OK, &vec![0; MAX_PAYLOAD_SIZE]).is_ok());
    assert_eq!(
        encode_message(Command::OK, &vec![0; MAX_PAYLOAD_SIZE + 1]),
        Err(WireError::PayloadTooLarge(MAX_PAYLOAD_SIZE + 1))
    );
    let request = AttachProfiler {
        attach_timeout: Duration::ZERO,
        clsid: GUID::default(),
        profiler_path: "/p.so",
        client_data: &vec![0; MAX_PAYLOAD_SIZE],
    };
    assert!(matches!(
        request.encode(),
        Err(WireError::PayloadTooLarge(_))
    ));
}

#[test]
fn endpoint_names_parse() {
    assert_eq!(
        discovery::parse_name("dotnet-diagnostic-4242-123456-socket"),
        Some((4242, Some(123456)))
    );
    assert_eq!(
        discovery::parse_name("dotnet-diagnostic-4242"),
        Some((4242, None))
    );
    for bad in [
        "dotnet-diagnostic-x-1-socket",
        "dotnet-diagnostic-1-x-socket",
        "dotnet-diagnostic--socket",
        "dotnet-diagnostic-",
        "clr-debug-pipe-4242-123-in",
        "dotnet-diagnostic-99999999999-1-socket",
    ] {
        assert_eq!(discovery::parse_name(bad), None, "{bad}");
    }
}

// ---------------------------------------------------------------------------
// Fake servers
// ---------------------------------------------------------------------------

#[cfg(unix)]
mod fake {
    use super::*;
    use std::io::{Read, Write};
    use std::os::unix::net::UnixListener;
    use std::path::PathBuf;
    use std::sync::atomic::{AtomicU32, Ordering};
    use std::thread::{self, JoinHandle};

    /// A fresh short directory (socket paths are limited to 108 bytes).
    pub(super) fn temp_dir() -> PathBuf {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let dir = std::env::temp_dir().join(format!(
            "cpdiag-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// What the fake server does after reading the request.
    pub(super) enum Reply {
        /// Writes these bytes and closes.
        Bytes(Vec<u8>),
        /// Writes these bytes and keeps the connection open for this long.
        BytesThenHold(Vec<u8>, Duration),
    }

    /// Serves one connection at `dir/s`: reads one request (header and
    /// payload), answers, and returns the request it read.
    pub(super) fn serve(reply: Reply) -> (PathBuf, JoinHandle<Vec<u8>>) {
        let path = temp_dir().join("s");
        let listener = UnixListener::bind(&path).unwrap();
        let handle = thread::spawn(move || {
            let (mut stream, _) = listener.accept().unwrap();
            let mut header = [0u8; 20];
            stream.read_exact(&mut header).unwrap();
            let size = u16::from_le_bytes([header[14], header[15]]) as usize;
            let mut request = header.to_vec();
            request.resize(size.max(20), 0);
            stream.read_exact(&mut request[20..]).unwrap();
            match reply {
                Reply::Bytes(bytes) => {
                    let _ = stream.write_all(&bytes);
                }
                Reply::BytesThenHold(bytes, hold) => {
                    let _ = stream.write_all(&bytes);
                    thread::sleep(hold);
                }
            }
            request
        });
        (path, handle)
    }

    pub(super) fn message(command: Command, payload: &[u8]) -> Vec<u8> {
        encode_message(command, payload).unwrap()
    }
}

#[cfg(unix)]
fn client(path: &std::path::Path) -> DiagnosticsClient {
    DiagnosticsClient::at(path).with_timeout(Duration::from_millis(500))
}

#[cfg(unix)]
#[test]
fn process_info_round_trip_with_a_fake_server() {
    let info = ProcessInfo {
        process_id: 77,
        runtime_cookie: GUID::parse("C5E5A2F1-3B7D-4C59-9E1A-2F0B6D8C4A17"),
        command_line: "/bin/app --flag".into(),
        os: "Linux".into(),
        arch: "x64".into(),
    };
    let reply = fake::message(Command::OK, &info.encode().unwrap());
    let (path, server) = fake::serve(fake::Reply::Bytes(reply));
    assert_eq!(client(&path).process_info().unwrap(), info);
    // What the client sent: a bare ProcessInfo header.
    let mut expected = MAGIC_BYTES.to_vec();
    expected.extend_from_slice(&[20, 0, 0x04, 0x00, 0, 0]);
    assert_eq!(server.join().unwrap(), expected);
}

#[cfg(unix)]
#[test]
fn attach_profiler_answers_with_a_fake_server() {
    let request = AttachProfiler {
        attach_timeout: Duration::from_millis(100),
        clsid: GUID::parse("C5E5A2F1-3B7D-4C59-9E1A-2F0B6D8C4A17"),
        profiler_path: "/nonexistent/libx.so",
        client_data: b"data",
    };
    // Success: OK with S_OK.
    let (path, server) = fake::serve(fake::Reply::Bytes(fake::message(Command::OK, &[0; 4])));
    assert_eq!(client(&path).attach_profiler(&request).unwrap(), HRESULT(0));
    let sent = server.join().unwrap();
    assert_eq!(sent[20..], request.encode().unwrap()[..]);
    assert_eq!(&sent[16..18], &[0x03, 0x01]);

    // Refusal: an Error response carries the HRESULT.
    let hr = CORPROF_E_PROFILER_ALREADY_ACTIVE.0.to_le_bytes();
    let (path, _server) = fake::serve(fake::Reply::Bytes(fake::message(Command::ERROR, &hr)));
    let error = client(&path).attach_profiler(&request).unwrap_err();
    assert_eq!(error.hresult(), Some(CORPROF_E_PROFILER_ALREADY_ACTIVE));
    assert!(error.to_string().contains("already loaded"), "{error}");

    // A failing HRESULT inside an OK response is a failure too.
    let (path, _server) = fake::serve(fake::Reply::Bytes(fake::message(Command::OK, &hr)));
    let error = client(&path).attach_profiler(&request).unwrap_err();
    assert_eq!(error.hresult(), Some(CORPROF_E_PROFILER_ALREADY_ACTIVE));

    // ResumeRuntime: a bare request, an empty OK.
    let (path, server) = fake::serve(fake::Reply::Bytes(fake::message(Command::OK, &[])));
    client(&path).resume_runtime().unwrap();
    assert_eq!(&server.join().unwrap()[14..], &[20, 0, 0x04, 0x01, 0, 0]);

    // An unknown command.
    let unknown = DS_IPC_E_UNKNOWN_COMMAND.0.to_le_bytes();
    let (path, _server) = fake::serve(fake::Reply::Bytes(fake::message(Command::ERROR, &unknown)));
    let error = client(&path).resume_runtime().unwrap_err();
    assert_eq!(error.hresult(), Some(DS_IPC_E_UNKNOWN_COMMAND));
    assert!(error.to_string().contains(".NET 5"), "{error}");
}

/// Runs `call` against a server answering `reply`; checks it fails within
/// the client's limit (plus slack) and returns the error.
#[cfg(unix)]
fn fails_quickly(reply: fake::Reply, call: fn(&DiagnosticsClient) -> Result<(), Error>) -> Error {
    let (path, _server) = fake::serve(reply);
    let started = Instant::now();
    let error = call(&client(&path)).unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "took {:?}: {error}",
        started.elapsed()
    );
    error
}

#[cfg(unix)]
fn info(client: &DiagnosticsClient) -> Result<(), Error> {
    client.process_info().map(|_| ())
}

#[cfg(unix)]
#[test]
fn malformed_headers_are_errors() {
    let mut bad_magic = fake::message(Command::OK, &[]);
    bad_magic[0] = b'X';
    let error = fails_quickly(fake::Reply::Bytes(bad_magic), info);
    assert!(
        matches!(error, Error::Wire(WireError::BadMagic(_))),
        "{error}"
    );

    let mut too_small = fake::message(Command::OK, &[]);
    too_small[14] = 3;
    let error = fails_quickly(fake::Reply::Bytes(too_small), info);
    assert!(
        matches!(error, Error::Wire(WireError::SizeTooSmall(3))),
        "{error}"
    );

    // Pure garbage, as long as a header.
    let error = fails_quickly(fake::Reply::Bytes((0..20).map(|i| i * 13).collect()), info);
    assert!(matches!(error, Error::Wire(_)), "{error}");

    // An answer the command does not expect.
    let reply = fake::message(
        Command {
            set: 0x02,
            id: 0x07,
        },
        &[],
    );
    let error = fails_quickly(fake::Reply::Bytes(reply), info);
    assert!(matches!(error, Error::UnexpectedResponse(_)), "{error}");

    // An Error response too short to hold its HRESULT.
    let reply = fake::message(Command::ERROR, &[1, 2]);
    let error = fails_quickly(fake::Reply::Bytes(reply), info);
    assert!(
        matches!(error, Error::Wire(WireError::Truncated { .. })),
        "{error}"
    );
}

#[cfg(unix)]
#[test]
fn short_reads_are_errors() {
    // Half a header, then the connection closes.
    let error = fails_quickly(fake::Reply::Bytes(MAGIC_BYTES[..10].to_vec()), info);
    assert!(
        matches!(error, Error::Closed { received: 10, .. }),
        "{error}"
    );

    // A header promising 100 payload bytes, 10 of them sent, then closed.
    let mut reply = fake::message(Command::OK, &[0; 100]);
    reply.truncate(30);
    let error = fails_quickly(fake::Reply::Bytes(reply), info);
    assert!(
        matches!(error, Error::Closed { received: 10, .. }),
        "{error}"
    );

    // Nothing at all.
    let error = fails_quickly(fake::Reply::Bytes(Vec::new()), info);
    assert!(
        matches!(error, Error::Closed { received: 0, .. }),
        "{error}"
    );
}

#[cfg(unix)]
#[test]
fn oversized_lengths_are_errors() {
    // A ProcessInfo whose command-line count claims 2^31 units.
    let mut payload = Vec::new();
    payload.extend_from_slice(&1u64.to_le_bytes());
    payload.extend_from_slice(&[0; 16]);
    payload.extend_from_slice(&0x8000_0000u32.to_le_bytes());
    payload.extend_from_slice(&utf16z("x"));
    let reply = fake::message(Command::OK, &payload);
    let error = fails_quickly(fake::Reply::Bytes(reply), info);
    assert!(
        matches!(error, Error::Wire(WireError::Truncated { .. })),
        "{error}"
    );

    // The header's largest size: the client reads all 65 515 payload bytes
    // (of a response it does not expect) and no more.
    let mut reply = MAGIC_BYTES.to_vec();
    reply.extend_from_slice(&[0xFF, 0xFF, 0x02, 0x00, 0, 0]);
    reply.resize(65535, 0);
    let error = fails_quickly(fake::Reply::Bytes(reply), info);
    assert!(matches!(error, Error::UnexpectedResponse(_)), "{error}");
}

#[cfg(unix)]
#[test]
fn silent_servers_time_out() {
    // Answers nothing and holds the connection.
    let error = fails_quickly(
        fake::Reply::BytesThenHold(Vec::new(), Duration::from_secs(5)),
        info,
    );
    assert!(error.is_timeout(), "{error}");

    // Sends half a header and holds.
    let error = fails_quickly(
        fake::Reply::BytesThenHold(MAGIC_BYTES[..7].to_vec(), Duration::from_secs(5)),
        info,
    );
    assert!(error.is_timeout(), "{error}");

    // A listener that never accepts: the connection waits in its backlog.
    let path = fake::temp_dir().join("s");
    let _listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
    let started = Instant::now();
    let error = client(&path).process_info().unwrap_err();
    assert!(error.is_timeout(), "{error}");
    assert!(started.elapsed() < Duration::from_secs(3));
}

#[cfg(unix)]
#[test]
fn missing_and_stale_endpoints_are_connect_errors() {
    let dir = fake::temp_dir();
    let error = client(&dir.join("none")).process_info().unwrap_err();
    assert!(matches!(error, Error::Connect { .. }), "{error}");

    // A socket file whose listener is gone (a runtime that died).
    let path = dir.join("stale");
    drop(std::os::unix::net::UnixListener::bind(&path).unwrap());
    let error = client(&path).process_info().unwrap_err();
    match &error {
        Error::Connect { source, .. } => {
            assert_eq!(source.kind(), std::io::ErrorKind::ConnectionRefused)
        }
        other => panic!("{other}"),
    }
    assert!(error.to_string().contains("runtime has exited"), "{error}");
}

#[cfg(target_os = "linux")]
#[test]
fn discovery_keeps_live_processes_with_their_own_key() {
    let dir = fake::temp_dir();
    let me = std::process::id();
    let key = discovery::start_key(me).expect("/proc/self/stat has a start time");
    // Precondition: the key is what /proc says, field 22.
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap();
    let after = &stat[stat.rfind(')').unwrap() + 2..];
    assert_eq!(after.split(' ').nth(19).unwrap(), key.to_string());

    let mine = dir.join(format!("dotnet-diagnostic-{me}-{key}-socket"));
    std::fs::write(&mine, b"").unwrap();
    // A leftover of an earlier process with the same pid.
    std::fs::write(
        dir.join(format!("dotnet-diagnostic-{me}-{}-socket", key + 1)),
        b"",
    )
    .unwrap();
    // A process that does not exist (pids stay below 2^22 on Linux).
    std::fs::write(dir.join("dotnet-diagnostic-4194305-1-socket"), b"").unwrap();
    std::fs::write(dir.join("unrelated"), b"").unwrap();

    let listed = discovery::list_in(&dir).unwrap();
    assert_eq!(
        listed,
        vec![discovery::DotnetProcess {
            pid: me,
            endpoint: mine.clone()
        }]
    );
    assert_eq!(discovery::endpoint_in(&dir, me).unwrap(), mine);
    assert!(matches!(
        discovery::endpoint_in(&dir, 4194305),
        Err(Error::NoSuchProcess(4194305))
    ));
    // pid 1 exists but has no endpoint here.
    let error = discovery::endpoint_in(&dir, 1).unwrap_err();
    assert!(matches!(error, Error::NoRuntime { pid: 1, .. }), "{error}");
    assert!(error.to_string().contains("no .NET runtime"), "{error}");
}

// ---------------------------------------------------------------------------
// The Process commands of .NET 5 to 8 (ds-process-protocol.c)
// ---------------------------------------------------------------------------

/// The header bytes of a request with no payload: magic, size 20, command.
#[cfg(unix)]
fn bare_request(set: u8, id: u8) -> Vec<u8> {
    let mut expected = MAGIC_BYTES.to_vec();
    expected.extend_from_slice(&[20, 0, set, id, 0, 0]);
    expected
}

/// ProcessInfo2's answer: ProcessInfo's five fields, then the entry point's
/// assembly name and the product version, each a string.
#[cfg(unix)]
#[test]
fn process_info_2_decodes_the_two_extra_strings() {
    let mut payload = Vec::new();
    payload.extend_from_slice(&4242u64.to_le_bytes());
    payload.extend_from_slice(&[1, 0, 0, 0, 2, 0, 3, 0, 4, 5, 6, 7, 8, 9, 10, 11]);
    for text in [
        "/usr/bin/dotnet app.dll",
        "Linux",
        "x64",
        "app",
        "8.0.4+2d7eea25",
    ] {
        payload.extend_from_slice(&((text.encode_utf16().count() + 1) as u32).to_le_bytes());
        payload.extend_from_slice(&utf16z(text));
    }
    let reply = fake::message(Command::OK, &payload);
    let (path, server) = fake::serve(fake::Reply::Bytes(reply));
    let info = client(&path).process_info_2().unwrap();
    assert_eq!(info.info.process_id, 4242);
    assert_eq!(info.info.command_line, "/usr/bin/dotnet app.dll");
    assert_eq!(info.entrypoint_assembly, "app");
    assert_eq!(info.runtime_version, "8.0.4+2d7eea25");
    assert_eq!(info.encode().unwrap(), payload);
    assert_eq!(server.join().unwrap(), bare_request(0x04, 0x04));
    // Cut short: an error, not a crash.
    let reply = fake::message(Command::OK, &payload[..payload.len() - 3]);
    let (path, _server) = fake::serve(fake::Reply::Bytes(reply));
    assert!(matches!(
        client(&path).process_info_2(),
        Err(Error::Wire(_))
    ));
}

/// ProcessEnvironment: an OK response whose payload is the byte count of
/// the block (uint) and a reserved ushort, then the block itself on the
/// same connection: a uint count and that many NAME=VALUE strings.
#[cfg(unix)]
#[test]
fn process_environment_reads_the_block_streamed_after_the_response() {
    let mut block = Vec::new();
    block.extend_from_slice(&3u32.to_le_bytes());
    for text in ["PATH=/usr/bin", "EMPTY=", "A=b=c"] {
        block.extend_from_slice(&((text.len() + 1) as u32).to_le_bytes());
        block.extend_from_slice(&utf16z(text));
    }
    assert_eq!(
        encode_environment(&[("PATH", "/usr/bin"), ("EMPTY", ""), ("A", "b=c")]).unwrap(),
        block
    );
    let mut head = (block.len() as u32).to_le_bytes().to_vec();
    head.extend_from_slice(&[0, 0]);
    let mut reply = fake::message(Command::OK, &head);
    reply.extend_from_slice(&block);
    let (path, server) = fake::serve(fake::Reply::Bytes(reply));
    let env = client(&path).process_environment().unwrap();
    assert_eq!(
        env,
        [
            ("PATH".to_string(), "/usr/bin".to_string()),
            ("EMPTY".to_string(), String::new()),
            ("A".to_string(), "b=c".to_string()),
        ]
    );
    assert_eq!(server.join().unwrap(), bare_request(0x04, 0x02));

    // A block shorter than announced: the read times out or fails, never hangs.
    let mut short = fake::message(Command::OK, &head);
    short.extend_from_slice(&block[..block.len() - 4]);
    let error = fails_quickly(
        fake::Reply::BytesThenHold(short, Duration::from_secs(3)),
        |c| c.process_environment().map(|_| ()),
    );
    assert!(
        matches!(error, Error::TimedOut { .. } | Error::Closed { .. }),
        "{error:?}"
    );
    // An announced size past the limit: refused before anything is allocated.
    let mut huge = ((MAX_ENVIRONMENT_BYTES + 1) as u32).to_le_bytes().to_vec();
    huge.extend_from_slice(&[0, 0]);
    let error = fails_quickly(fake::Reply::Bytes(fake::message(Command::OK, &huge)), |c| {
        c.process_environment().map(|_| ())
    });
    assert!(
        matches!(error, Error::Wire(WireError::PayloadTooLarge(_))),
        "{error:?}"
    );
    // A count larger than the block could hold.
    let mut lying = 1_000_000u32.to_le_bytes().to_vec();
    lying.extend_from_slice(&[0; 8]);
    assert!(decode_environment(&lying).is_err());
}

/// SetEnvironmentVariable's request: two strings; ApplyStartupHook's: one.
#[cfg(unix)]
#[test]
fn set_environment_variable_and_apply_startup_hook_send_their_strings() {
    let (path, server) = fake::serve(fake::Reply::Bytes(fake::message(Command::OK, &[])));
    client(&path).set_environment_variable("NAME", "v").unwrap();
    let mut expected = MAGIC_BYTES.to_vec();
    let payload: Vec<u8> = [
        &5u32.to_le_bytes()[..],
        &utf16z("NAME"),
        &2u32.to_le_bytes(),
        &utf16z("v"),
    ]
    .concat();
    expected.extend_from_slice(&((20 + payload.len()) as u16).to_le_bytes());
    expected.extend_from_slice(&[0x04, 0x03, 0, 0]);
    expected.extend_from_slice(&payload);
    assert_eq!(server.join().unwrap(), expected);

    let (path, server) = fake::serve(fake::Reply::Bytes(fake::message(Command::OK, &[])));
    client(&path).apply_startup_hook("/h/Hook.dll").unwrap();
    let mut expected = MAGIC_BYTES.to_vec();
    let payload: Vec<u8> = [&12u32.to_le_bytes()[..], &utf16z("/h/Hook.dll")].concat();
    expected.extend_from_slice(&((20 + payload.len()) as u16).to_le_bytes());
    expected.extend_from_slice(&[0x04, 0x07, 0, 0]);
    expected.extend_from_slice(&payload);
    assert_eq!(server.join().unwrap(), expected);

    // A NUL inside a string is refused before anything is sent.
    let path = fake::temp_dir().join("none");
    assert!(matches!(
        client(&path).set_environment_variable("A\0B", "v"),
        Err(Error::Wire(WireError::NulInString))
    ));
}

// ---------------------------------------------------------------------------
// EventPipe sessions
// ---------------------------------------------------------------------------

/// The providers' part of every CollectTracing payload: count, then
/// keywords, level, name, filter data (`ds-eventpipe-protocol.c`,
/// `eventpipe_collect_tracing_command_try_parse_config`).
fn providers_bytes() -> Vec<u8> {
    let mut v = 2u32.to_le_bytes().to_vec();
    v.extend(0x1Fu64.to_le_bytes());
    v.extend(4u32.to_le_bytes());
    v.extend(3u32.to_le_bytes()); // "P1" and its NUL
    v.extend(utf16z("P1"));
    v.extend(8u32.to_le_bytes()); // "a=1;b=2" and its NUL
    v.extend(utf16z("a=1;b=2"));
    v.extend(u64::MAX.to_le_bytes());
    v.extend(5u32.to_le_bytes());
    v.extend(3u32.to_le_bytes());
    v.extend(utf16z("P2"));
    v.extend(0u32.to_le_bytes()); // a null string: no arguments
    v
}

fn two_providers() -> Vec<Provider> {
    vec![
        Provider::new("P1")
            .keywords(0x1F)
            .level(4)
            .argument("a", "1")
            .argument("b", "2"),
        Provider::new("P2"),
    ]
}

/// Each command's payload in the order the runtime's parsers read it:
/// `u32` buffer MB, `u32` format (1 nettrace), then CollectTracing2's
/// `bool` rundown, CollectTracing3's `bool` rundown and `bool` stacks,
/// CollectTracing4's `u64` rundown keywords and `bool` stacks; providers.
#[test]
fn collect_tracing_payloads_follow_the_runtime_parsers() {
    let mut config = SessionConfig::new(two_providers());
    config.buffer_size_mb = 64;
    let head = |extra: &[u8]| {
        let mut v = 64u32.to_le_bytes().to_vec();
        v.extend(1u32.to_le_bytes());
        v.extend_from_slice(extra);
        v.extend(providers_bytes());
        v
    };
    assert_eq!(config.command(), Command::COLLECT_TRACING_2);
    assert_eq!(config.encode(Command::COLLECT_TRACING).unwrap(), head(&[]));
    assert_eq!(
        config.encode(Command::COLLECT_TRACING_2).unwrap(),
        head(&[1])
    );
    config.rundown = Rundown::None;
    config.stacks = false;
    assert_eq!(config.command(), Command::COLLECT_TRACING_3);
    assert_eq!(
        config.encode(Command::COLLECT_TRACING_3).unwrap(),
        head(&[0, 0])
    );
    config.rundown = Rundown::Keywords(0x118);
    assert_eq!(config.command(), Command::COLLECT_TRACING_4);
    let mut ct4 = 0x118u64.to_le_bytes().to_vec();
    ct4.push(0);
    assert_eq!(
        config.encode(Command::COLLECT_TRACING_4).unwrap(),
        head(&ct4)
    );
    // CollectTracing5: the output format first, and each provider's event
    // filter after its filter data.
    let mut config5 = SessionConfig::new(vec![
        Provider::new("P1")
            .keywords(0x1F)
            .level(4)
            .only_events(&[9, 10]),
        Provider::new("P2"),
    ]);
    config5.buffer_size_mb = 64;
    assert_eq!(config5.command(), Command::COLLECT_TRACING_5);
    let mut ct5 = 0u32.to_le_bytes().to_vec();
    ct5.extend(64u32.to_le_bytes());
    ct5.extend(1u32.to_le_bytes());
    ct5.extend(DEFAULT_RUNDOWN_KEYWORDS.to_le_bytes());
    ct5.push(1);
    ct5.extend(2u32.to_le_bytes());
    ct5.extend(0x1Fu64.to_le_bytes());
    ct5.extend(4u32.to_le_bytes());
    ct5.extend(3u32.to_le_bytes());
    ct5.extend(utf16z("P1"));
    ct5.extend(0u32.to_le_bytes());
    ct5.push(1); // enable only
    ct5.extend(2u32.to_le_bytes());
    ct5.extend(9u32.to_le_bytes());
    ct5.extend(10u32.to_le_bytes());
    ct5.extend(u64::MAX.to_le_bytes());
    ct5.extend(5u32.to_le_bytes());
    ct5.extend(3u32.to_le_bytes());
    ct5.extend(utf16z("P2"));
    ct5.extend(0u32.to_le_bytes());
    ct5.push(0); // disable none
    ct5.extend(0u32.to_le_bytes());
    assert_eq!(config5.encode(Command::COLLECT_TRACING_5).unwrap(), ct5);
    // The default keywords are what Microsoft's client sends.
    assert_eq!(DEFAULT_RUNDOWN_KEYWORDS, 0x8002_0139);
    config.rundown = Rundown::Keywords(DEFAULT_RUNDOWN_KEYWORDS);
    config.stacks = true;
    assert_eq!(config.command(), Command::COLLECT_TRACING_2);
}

#[test]
fn provider_specs_parse_as_dotnet_trace_writes_them() {
    let p = Provider::parse("Microsoft-Windows-DotNETRuntime:0x8001:4").unwrap();
    assert_eq!(
        (p.name.as_str(), p.keywords, p.level),
        ("Microsoft-Windows-DotNETRuntime", 0x8001, 4)
    );
    let p = Provider::parse("My-Source:FF:Verbose:EventCounterIntervalSec=1;x=y").unwrap();
    assert_eq!((p.keywords, p.level), (0xFF, 5));
    assert_eq!(
        p.filter_data().as_deref(),
        Some("EventCounterIntervalSec=1;x=y")
    );
    let p = Provider::parse("Only-Name").unwrap();
    assert_eq!((p.keywords, p.level, p.filter_data()), (u64::MAX, 5, None));
    let p = Provider::parse("N:*:warning").unwrap();
    assert_eq!((p.keywords, p.level), (u64::MAX, 3));
    for bad in ["", ":1", "N:xyz", "N:1:9", "N:1:4:novalue"] {
        assert!(Provider::parse(bad).is_err(), "{bad:?}");
    }
}

/// A fake runtime: answers CollectTracing2 with `DS_IPC_E_UNKNOWN_COMMAND`,
/// CollectTracing with session 7 and a few stream bytes, then StopTracing.
#[cfg(unix)]
#[test]
fn a_session_falls_back_to_collect_tracing_and_streams() {
    use std::io::{Read, Write};
    use std::os::unix::net::UnixListener;
    let path = fake::temp_dir().join("s");
    let listener = UnixListener::bind(&path).unwrap();
    let server = std::thread::spawn(move || {
        let mut commands = Vec::new();
        let mut streams = Vec::new();
        for _ in 0..3 {
            let (mut stream, _) = listener.accept().unwrap();
            let mut header = [0u8; 20];
            stream.read_exact(&mut header).unwrap();
            let size = u16::from_le_bytes([header[14], header[15]]) as usize;
            let mut payload = vec![0u8; size - 20];
            stream.read_exact(&mut payload).unwrap();
            let command = Command {
                set: header[16],
                id: header[17],
            };
            commands.push((command, payload));
            match command {
                Command::COLLECT_TRACING_2 => {
                    let error = DS_IPC_E_UNKNOWN_COMMAND.0.to_le_bytes();
                    stream
                        .write_all(&fake::message(Command::ERROR, &error))
                        .unwrap();
                }
                Command::COLLECT_TRACING => {
                    stream
                        .write_all(&fake::message(Command::OK, &7u64.to_le_bytes()))
                        .unwrap();
                    stream.write_all(b"Nettrace").unwrap();
                    streams.push(stream); // closed after the stop
                }
                _ => {
                    stream
                        .write_all(&fake::message(Command::OK, &7u64.to_le_bytes()))
                        .unwrap();
                    streams.clear();
                }
            }
        }
        commands
    });
    let mut session = client(&path)
        .start_session(&SessionConfig::new(two_providers()))
        .unwrap();
    assert_eq!(session.command(), Command::COLLECT_TRACING);
    assert_eq!(session.session_id(), 7);
    let mut magic = [0u8; 8];
    session.read_exact(&mut magic).unwrap();
    assert_eq!(&magic, b"Nettrace");
    session.stop().unwrap();
    let mut rest = Vec::new();
    session.read_to_end(&mut rest).unwrap();
    assert!(rest.is_empty());
    let commands = server.join().unwrap();
    let ids: Vec<Command> = commands.iter().map(|(c, _)| *c).collect();
    assert_eq!(
        ids,
        [
            Command::COLLECT_TRACING_2,
            Command::COLLECT_TRACING,
            Command::STOP_TRACING
        ]
    );
    assert_eq!(commands[2].1, 7u64.to_le_bytes());
    // Without the default rundown there is no falling back.
    let path = fake::temp_dir().join("s");
    let listener = UnixListener::bind(&path).unwrap();
    let server = std::thread::spawn(move || {
        let (mut stream, _) = listener.accept().unwrap();
        let mut request = [0u8; 256];
        let _ = stream.read(&mut request).unwrap();
        let error = DS_IPC_E_UNKNOWN_COMMAND.0.to_le_bytes();
        stream
            .write_all(&fake::message(Command::ERROR, &error))
            .unwrap();
    });
    let mut config = SessionConfig::new(two_providers());
    config.rundown = Rundown::None;
    let err = client(&path).start_session(&config).unwrap_err();
    assert_eq!(err.hresult(), Some(DS_IPC_E_UNKNOWN_COMMAND));
    server.join().unwrap();
}
