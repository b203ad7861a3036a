//! The web server of the e2e suite (tests/e2e/roslyn/WebApp, ASP.NET Core
//! 3.1.2 on the chosen runtime): it serves every endpoint under load and
//! exits 0 on SIGTERM, with no profiler. The profiler tests that run it
//! under load rely on each of these.
#![cfg(unix)]

mod common;

use common::dotnet::runtime;
use common::web::{wrk, WebServer};

#[test]
fn the_web_app_serves_every_endpoint_under_load_and_stops_on_sigterm() {
    let rt = runtime();
    let server = WebServer::start(&rt, None);
    assert_eq!(
        server.get("/json"),
        r#"{"Id":1,"Name":"item1","Tags":["a","b"]}"#
    );
    assert_eq!(
        server.get("/throw"),
        "1",
        "the handler catches its own exception"
    );
    assert!(server.get("/cpu").parse::<i64>().is_ok());
    assert!(server.get("/lock").parse::<i64>().is_ok());
    assert_eq!(server.get("/stats"), "json=1 cpu=1 throw=1 lock=1");

    let load = wrk(&server.url("/json"), 2, 16, 2);
    assert!(load.requests > 1000, "{load:?}");
    assert_eq!((load.non_2xx, load.socket_errors), (0, 0), "{load:?}");
    let stats = server.get("/stats");
    let json: u64 = stats
        .split_whitespace()
        .find_map(|kv| kv.strip_prefix("json="))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no json count in {stats:?}"));
    // wrk counts the requests it completed; a few may be in flight at its end.
    assert!(json > load.requests, "{json} handled, {load:?}");

    let stopped = server.stop();
    assert_eq!(stopped.status.code(), Some(0), "{stopped:?}");
}
