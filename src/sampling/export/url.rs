//! The `http://` URL of a push target ([`Url`]) and the query encoding
//! of its values ([`percent_encode`]).

use alloc::format;
use alloc::string::String;
use core::fmt;

/// An `http://` URL: host, port and path prefix.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Url {
    /// The host (a name, an IPv4 address, or an IPv6 one in brackets).
    pub host: String,
    /// The port (default 80).
    pub port: u16,
    /// The path before the endpoint's, without its final `/` (often empty).
    pub prefix: String,
}

impl Url {
    /// Parses `http://host[:port][/prefix]`. `https://` is refused (this
    /// client has no TLS), as are user info, queries and fragments.
    pub fn parse(text: &str) -> Result<Url, String> {
        let Some(rest) = text.strip_prefix("http://") else {
            if text.starts_with("https://") {
                return Err(String::from(
                    "https is not supported (corprof speaks plain HTTP, with no TLS library): \
                     run a local agent such as Grafana Alloy (pyroscope.receive_http) and push \
                     to it over http://127.0.0.1, and let it forward over https",
                ));
            }
            return Err(String::from("not an http:// URL"));
        };
        let (authority, path) = match rest.find('/') {
            Some(i) => rest.split_at(i),
            None => (rest, ""),
        };
        if authority.contains('@') || path.contains('?') || path.contains('#') {
            return Err(String::from(
                "user info, queries and fragments are not supported",
            ));
        }
        let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
            let end = v6.find(']').ok_or("an IPv6 host lacks its `]`")?;
            let host = &authority[..end + 2];
            (host, &v6[end + 1..])
        } else {
            match authority.find(':') {
                Some(i) => authority.split_at(i),
                None => (authority, ""),
            }
        };
        let port = match port {
            "" => 80,
            p => p
                .strip_prefix(':')
                .and_then(|p| p.parse::<u16>().ok())
                .filter(|&p| p != 0)
                .ok_or_else(|| format!("bad port {p:?}"))?,
        };
        let valid_host = !host.is_empty()
            && host
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-._:[]".contains(&b));
        if !valid_host {
            return Err(format!("bad host {host:?}"));
        }
        if !path
            .bytes()
            .all(|b| b.is_ascii_graphic() && b != b'%' && b != b'\\')
        {
            return Err(format!("bad path {path:?}"));
        }
        Ok(Url {
            host: String::from(host),
            port,
            prefix: String::from(path.trim_end_matches('/')),
        })
    }

    /// `host:port` as a `Host` header says it.
    pub fn authority(&self) -> String {
        format!("{}:{}", self.host, self.port)
    }
}

impl fmt::Display for Url {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "http://{}:{}{}", self.host, self.port, self.prefix)
    }
}

/// Percent-encodes `text` for a query value (everything but RFC 3986's
/// unreserved characters).
pub fn percent_encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls() {
        let url = Url::parse("http://127.0.0.1:4040").unwrap();
        assert_eq!(
            (url.host.as_str(), url.port, url.prefix.as_str()),
            ("127.0.0.1", 4040, "")
        );
        let url = Url::parse("http://pyro.local/api/").unwrap();
        assert_eq!((url.port, url.prefix.as_str()), (80, "/api"));
        let url = Url::parse("http://[::1]:9").unwrap();
        assert_eq!((url.host.as_str(), url.port), ("[::1]", 9));
        let https = Url::parse("https://profiles.example").unwrap_err();
        assert!(https.contains("Alloy"), "{https}");
        for bad in [
            "ftp://x",
            "http://",
            "http://h:0",
            "http://h:99999",
            "http://h:x",
            "http://u@h",
            "http://h/?q",
            "http://h h",
            "http://[::1",
        ] {
            assert!(Url::parse(bad).is_err(), "{bad}");
        }
        assert_eq!(percent_encode("app{a=b}"), "app%7Ba%3Db%7D");
    }
}
