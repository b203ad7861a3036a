//! The connection to a runtime's diagnostics endpoint: a Unix domain socket
//! (Linux, macOS) or a named pipe (Windows), with a deadline on every read
//! and write.
//!
//! Each command uses a connection of its own: the server reads one request,
//! answers, and closes.

use core::time::Duration;
use std::io;
use std::path::{Path, PathBuf};
use std::time::Instant;

use super::error::Error;

/// An open connection whose every read and write must end by `deadline`.
#[derive(Debug)]
pub struct Connection {
    inner: imp::Stream,
    deadline: Instant,
    limit: Duration,
    endpoint: PathBuf,
}

impl Connection {
    /// Connects to `endpoint` (a socket path, or `\\.\pipe\NAME` on Windows);
    /// everything done on the connection must finish within `limit`.
    pub fn open(endpoint: &Path, limit: Duration) -> Result<Connection, Error> {
        let deadline = Instant::now() + limit;
        let inner = imp::Stream::connect(endpoint, deadline).map_err(|source| {
            if source.kind() == io::ErrorKind::TimedOut {
                Error::TimedOut {
                    during: "connecting",
                    after: limit,
                }
            } else {
                Error::Connect {
                    endpoint: endpoint.to_path_buf(),
                    source,
                }
            }
        })?;
        Ok(Connection {
            inner,
            deadline,
            limit,
            endpoint: endpoint.to_path_buf(),
        })
    }

    /// The endpoint this connection goes to.
    pub fn endpoint(&self) -> &Path {
        &self.endpoint
    }

    /// Moves the deadline to `limit` from now (for a command, such as
    /// `AttachProfiler`, that the runtime takes long to answer).
    pub fn extend(&mut self, limit: Duration) {
        self.deadline = Instant::now() + limit;
        self.limit = limit;
    }

    fn remaining(&self, during: &'static str) -> Result<Duration, Error> {
        let left = self.deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            Err(Error::TimedOut {
                during,
                after: self.limit,
            })
        } else {
            Ok(left)
        }
    }

    fn io_error(&self, during: &'static str, source: io::Error) -> Error {
        match source.kind() {
            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => Error::TimedOut {
                during,
                after: self.limit,
            },
            _ => Error::Io { during, source },
        }
    }

    /// Writes all of `bytes`.
    pub fn write_all(&mut self, bytes: &[u8], during: &'static str) -> Result<(), Error> {
        let mut written = 0;
        while written < bytes.len() {
            let left = self.remaining(during)?;
            match self.inner.write(&bytes[written..], left) {
                Ok(0) => {
                    return Err(Error::Closed {
                        during,
                        received: 0,
                    })
                }
                Ok(n) => written += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(self.io_error(during, e)),
            }
        }
        Ok(())
    }

    /// Reads what has arrived (at least one byte, 0 when the peer has
    /// closed), waiting at most `limit` whatever the connection's deadline:
    /// for a stream that flows after the response (an EventPipe session).
    pub fn read_some(&mut self, buf: &mut [u8], limit: Duration) -> io::Result<usize> {
        loop {
            match self.inner.read(buf, limit) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == io::ErrorKind::ConnectionReset => return Ok(0),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    return Err(io::ErrorKind::TimedOut.into())
                }
                other => return other,
            }
        }
    }

    /// Fills `buf`: [`Error::Closed`] when the peer closes first,
    /// [`Error::TimedOut`] at the deadline.
    pub fn read_exact(&mut self, buf: &mut [u8], during: &'static str) -> Result<(), Error> {
        let mut filled = 0;
        while filled < buf.len() {
            let left = self.remaining(during)?;
            match self.inner.read(&mut buf[filled..], left) {
                Ok(0) => {
                    return Err(Error::Closed {
                        during,
                        received: filled,
                    })
                }
                Ok(n) => filled += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == io::ErrorKind::ConnectionReset => {
                    return Err(Error::Closed {
                        during,
                        received: filled,
                    })
                }
                Err(e) => return Err(self.io_error(during, e)),
            }
        }
        Ok(())
    }
}

#[cfg(unix)]
mod imp {
    use core::time::Duration;
    use std::io::{self, Read, Write};
    use std::os::unix::net::UnixStream;
    use std::path::Path;
    use std::time::Instant;

    #[derive(Debug)]
    pub(super) struct Stream(UnixStream);

    impl Stream {
        /// Connecting to a listening Unix socket completes at once (or fails
        /// at once when nothing listens), so the deadline is not needed here.
        pub(super) fn connect(endpoint: &Path, _deadline: Instant) -> io::Result<Stream> {
            UnixStream::connect(endpoint).map(Stream)
        }

        pub(super) fn read(&mut self, buf: &mut [u8], limit: Duration) -> io::Result<usize> {
            self.0.set_read_timeout(Some(limit))?;
            self.0.read(buf)
        }

        pub(super) fn write(&mut self, buf: &[u8], limit: Duration) -> io::Result<usize> {
            self.0.set_write_timeout(Some(limit))?;
            self.0.write(buf)
        }
    }
}

#[cfg(windows)]
mod imp {
    //! A named pipe opened as a file. Windows offers no timeout on
    //! synchronous pipe I/O, so each read or write runs on a helper thread
    //! while the caller waits up to the deadline; past it, `CancelIoEx`
    //! aborts the blocked call and the caller gets `TimedOut`.

    use core::ffi::c_void;
    use core::time::Duration;
    use std::fs::{File, OpenOptions};
    use std::io::{self, Read, Write};
    use std::os::windows::io::AsRawHandle;
    use std::path::Path;
    use std::sync::{mpsc, Arc};
    use std::thread;
    use std::time::Instant;

    /// `ERROR_PIPE_BUSY`: every instance of the pipe is in use; try again.
    const ERROR_PIPE_BUSY: i32 = 231;

    #[link(name = "kernel32")]
    extern "system" {
        /// kernel32 `BOOL CancelIoEx(HANDLE hFile, LPOVERLAPPED lpOverlapped)`.
        fn CancelIoEx(file: *mut c_void, overlapped: *mut c_void) -> i32;
    }

    #[derive(Debug)]
    pub(super) struct Stream(Arc<File>);

    impl Stream {
        pub(super) fn connect(endpoint: &Path, deadline: Instant) -> io::Result<Stream> {
            loop {
                match OpenOptions::new().read(true).write(true).open(endpoint) {
                    Ok(file) => return Ok(Stream(Arc::new(file))),
                    Err(e) if e.raw_os_error() == Some(ERROR_PIPE_BUSY) => {
                        if Instant::now() >= deadline {
                            return Err(io::ErrorKind::TimedOut.into());
                        }
                        thread::sleep(Duration::from_millis(10));
                    }
                    Err(e) => return Err(e),
                }
            }
        }

        fn with_limit<T: Send + 'static>(
            &self,
            limit: Duration,
            op: impl FnOnce(&File) -> io::Result<T> + Send + 'static,
        ) -> io::Result<T> {
            let (tx, rx) = mpsc::channel();
            let file = Arc::clone(&self.0);
            thread::Builder::new()
                .name("corprof-diagnostics-io".into())
                .spawn(move || {
                    let _ = tx.send(op(&file)); // the caller may have given up
                })?;
            match rx.recv_timeout(limit) {
                Ok(result) => result,
                Err(_) => {
                    // SAFETY: the handle is open (this Stream owns a
                    // reference to the file) and a null OVERLAPPED cancels
                    // every I/O on it, which is what is wanted.
                    // A failure means no I/O was pending any more: nothing to undo.
                    let _ = unsafe { CancelIoEx(self.0.as_raw_handle(), core::ptr::null_mut()) };
                    Err(io::ErrorKind::TimedOut.into())
                }
            }
        }

        pub(super) fn read(&mut self, buf: &mut [u8], limit: Duration) -> io::Result<usize> {
            let len = buf.len();
            let data = self.with_limit(limit, move |mut file| {
                let mut data = alloc::vec![0u8; len];
                let n = file.read(&mut data)?;
                data.truncate(n);
                Ok(data)
            })?;
            buf[..data.len()].copy_from_slice(&data);
            Ok(data.len())
        }

        pub(super) fn write(&mut self, buf: &[u8], limit: Duration) -> io::Result<usize> {
            let data = alloc::vec::Vec::from(buf);
            self.with_limit(limit, move |mut file| file.write(&data))
        }
    }
}
