//! Reading a stream from any `std::io::Read`.

use alloc::format;
use alloc::vec;
use alloc::vec::Vec;
use std::io::{self, Read};

use super::error::{Error, ErrorKind};
use super::parser::{Event, Parser, Stats, TraceInfo};

/// Iterates over the events of a stream read from `R` (a file, the
/// diagnostics connection of a session), reading as it goes.
///
/// ```no_run
/// use corprof::nettrace::NettraceReader;
///
/// let file = std::fs::File::open("trace.nettrace")?;
/// let mut reader = NettraceReader::new(file);
/// for event in &mut reader {
///     let event = event?;
///     println!("{} {} {}", event.provider(), event.event_id(), event.stack.len());
/// }
/// println!("{} events lost", reader.stats().lost_events);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct NettraceReader<R> {
    source: R,
    parser: Parser,
    chunk: Vec<u8>,
    ended: bool,
    /// The iterator has returned its last item.
    finished: bool,
}

impl<R: Read> NettraceReader<R> {
    /// A reader of the stream `source` holds.
    pub fn new(source: R) -> NettraceReader<R> {
        NettraceReader {
            source,
            parser: Parser::new(),
            chunk: vec![0; 64 << 10],
            ended: false,
            finished: false,
        }
    }

    /// The `Trace` object, once read.
    pub fn trace(&self) -> Option<&TraceInfo> {
        self.parser.trace()
    }

    /// What has been read so far.
    pub fn stats(&self) -> Stats {
        self.parser.stats()
    }

    /// The parser (for its metadata).
    pub fn parser(&self) -> &Parser {
        &self.parser
    }

    /// The source, back.
    pub fn into_inner(self) -> R {
        self.source
    }

    /// The next event: `Ok(None)` at the stream's end marker; an error for
    /// a malformed stream, or one that ends (the source reaching its end)
    /// before its end marker.
    pub fn next_event(&mut self) -> Result<Option<Event>, Error> {
        loop {
            if let Some(event) = self.parser.next_event()? {
                return Ok(Some(event));
            }
            if self.parser.is_done() {
                return Ok(None);
            }
            if self.ended {
                self.parser.finish()?;
                return Ok(None);
            }
            let n = loop {
                match self.source.read(&mut self.chunk) {
                    Ok(n) => break n,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => {
                        self.ended = true;
                        return Err(Error::new(
                            self.parser.stats().bytes,
                            ErrorKind::Io(format!("{e}")),
                        ));
                    }
                }
            };
            if n == 0 {
                self.ended = true;
            } else {
                self.parser.feed(&self.chunk[..n]);
            }
        }
    }
}

impl<R: Read> Iterator for NettraceReader<R> {
    type Item = Result<Event, Error>;

    fn next(&mut self) -> Option<Result<Event, Error>> {
        if self.finished {
            return None;
        }
        let item = self.next_event().transpose();
        if !matches!(item, Some(Ok(_))) {
            self.finished = true;
        }
        item
    }
}
