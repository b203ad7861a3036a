//! Windows: the processes of the system (Toolhelp) and whether one has a
//! diagnostics pipe, for [`list`](super::discovery::list) where listing
//! `\\.\pipe\` fails (Wine answers it with "Bad device type").
//!
//! Declarations transcribed from the Windows SDK (`tlhelp32.h`,
//! `processthreadsapi.h`, `namedpipeapi.h`, `winerror.h`); the layout of
//! `PROCESSENTRY32W` is checked by a test (568 bytes on 64-bit Windows, 556
//! on 32-bit).

use alloc::string::String;
use alloc::vec::Vec;
use core::ffi::c_void;
use std::io;

/// `TH32CS_SNAPPROCESS`: include every process in the snapshot.
const TH32CS_SNAPPROCESS: u32 = 0x0000_0002;
/// `MAX_PATH`.
const MAX_PATH: usize = 260;
/// `ERROR_NO_MORE_FILES`: `Process32NextW` reached the end.
const ERROR_NO_MORE_FILES: i32 = 18;
/// `ERROR_FILE_NOT_FOUND`: no pipe of that name.
const ERROR_FILE_NOT_FOUND: i32 = 2;
/// `INVALID_HANDLE_VALUE`.
const INVALID_HANDLE_VALUE: *mut c_void = usize::MAX as *mut c_void;

/// `PROCESSENTRY32W`.
#[repr(C)]
#[allow(non_snake_case)]
pub(super) struct PROCESSENTRY32W {
    dwSize: u32,
    cntUsage: u32,
    th32ProcessID: u32,
    th32DefaultHeapID: usize,
    th32ModuleID: u32,
    cntThreads: u32,
    th32ParentProcessID: u32,
    pcPriClassBase: i32,
    dwFlags: u32,
    szExeFile: [u16; MAX_PATH],
}

#[link(name = "kernel32")]
extern "system" {
    /// `HANDLE CreateToolhelp32Snapshot(DWORD dwFlags, DWORD th32ProcessID)`.
    fn CreateToolhelp32Snapshot(flags: u32, process_id: u32) -> *mut c_void;
    /// `BOOL Process32FirstW(HANDLE hSnapshot, LPPROCESSENTRY32W lppe)`.
    fn Process32FirstW(snapshot: *mut c_void, entry: *mut PROCESSENTRY32W) -> i32;
    /// `BOOL Process32NextW(HANDLE hSnapshot, LPPROCESSENTRY32W lppe)`.
    fn Process32NextW(snapshot: *mut c_void, entry: *mut PROCESSENTRY32W) -> i32;
    /// `BOOL CloseHandle(HANDLE hObject)`.
    fn CloseHandle(handle: *mut c_void) -> i32;
    /// `BOOL WaitNamedPipeW(LPCWSTR lpNamedPipeName, DWORD nTimeOut)`.
    fn WaitNamedPipeW(name: *const u16, timeout_ms: u32) -> i32;
}

/// Every process of the system: its id and executable file name.
pub(super) fn processes() -> io::Result<Vec<(u32, String)>> {
    // SAFETY: no pointer arguments; the handle is closed below.
    let snapshot = unsafe { CreateToolhelp32Snapshot(TH32CS_SNAPPROCESS, 0) };
    if snapshot == INVALID_HANDLE_VALUE || snapshot.is_null() {
        return Err(io::Error::last_os_error());
    }
    let mut found = Vec::new();
    // SAFETY: all-zero is a valid PROCESSENTRY32W (integers and an array).
    let mut entry: PROCESSENTRY32W = unsafe { core::mem::zeroed() };
    entry.dwSize = core::mem::size_of::<PROCESSENTRY32W>() as u32;
    // SAFETY: a live snapshot handle and an entry whose dwSize is set, as
    // the functions require; they write only within the entry.
    let mut more = unsafe { Process32FirstW(snapshot, &mut entry) } != 0;
    let mut result = Ok(());
    while more {
        let len = entry
            .szExeFile
            .iter()
            .position(|&c| c == 0)
            .unwrap_or(MAX_PATH);
        found.push((
            entry.th32ProcessID,
            String::from_utf16_lossy(&entry.szExeFile[..len]),
        ));
        // SAFETY: as above.
        more = unsafe { Process32NextW(snapshot, &mut entry) } != 0;
        if !more {
            let error = io::Error::last_os_error();
            if error.raw_os_error() != Some(ERROR_NO_MORE_FILES) {
                result = Err(error);
            }
        }
    }
    // SAFETY: the snapshot handle, closed once.
    unsafe { CloseHandle(snapshot) };
    result.map(|()| found)
}

/// Whether a named pipe of this name exists, without connecting to it:
/// `WaitNamedPipeW` with a 1 ms timeout fails with `ERROR_FILE_NOT_FOUND`
/// only when there is no such pipe (a busy pipe times out instead).
pub(super) fn pipe_exists(name: &str) -> bool {
    let wide: Vec<u16> = name.encode_utf16().chain(Some(0)).collect();
    // SAFETY: a NUL-terminated UTF-16 string that outlives the call.
    if unsafe { WaitNamedPipeW(wide.as_ptr(), 1) } != 0 {
        return true;
    }
    io::Error::last_os_error().raw_os_error() != Some(ERROR_FILE_NOT_FOUND)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn processentry32w_has_the_sdk_layout() {
        let size = core::mem::size_of::<PROCESSENTRY32W>();
        if cfg!(target_pointer_width = "64") {
            assert_eq!(size, 568);
            assert_eq!(
                core::mem::offset_of!(PROCESSENTRY32W, th32DefaultHeapID),
                16
            );
            assert_eq!(core::mem::offset_of!(PROCESSENTRY32W, szExeFile), 44);
        } else {
            assert_eq!(size, 556);
            assert_eq!(core::mem::offset_of!(PROCESSENTRY32W, szExeFile), 36);
        }
    }

    #[test]
    fn the_current_process_is_listed_with_its_executable() {
        let me = std::process::id();
        let all = processes().expect("a Toolhelp snapshot");
        let (_, exe) = all
            .iter()
            .find(|(pid, _)| *pid == me)
            .unwrap_or_else(|| panic!("pid {me} not in {all:?}"));
        let own = std::env::current_exe().unwrap();
        let own = own.file_name().unwrap().to_str().unwrap();
        assert!(exe.eq_ignore_ascii_case(own), "{exe} vs {own}");
    }

    #[test]
    fn process_exists_and_endpoint_know_which_processes_there_are() {
        use crate::diagnostics::discovery::{endpoint, process_exists};
        use crate::diagnostics::Error;
        let me = std::process::id();
        assert_eq!(process_exists(me), Some(true));
        // Windows pids are multiples of 4: this one is never used.
        let none = 0x7FFF_FFF1;
        assert_eq!(process_exists(none), Some(false));
        assert!(matches!(endpoint(none), Err(Error::NoSuchProcess(p)) if p == none));
        assert_eq!(
            endpoint(me).unwrap(),
            std::path::PathBuf::from(alloc::format!(r"\\.\pipe\dotnet-diagnostic-{me}"))
        );
    }

    #[test]
    fn a_missing_pipe_does_not_exist() {
        assert!(!pipe_exists(r"\\.\pipe\corprof-no-such-pipe-4f1d"));
    }
}

#[cfg(test)]
mod listing_tests {
    use core::ffi::c_void;

    use crate::diagnostics::discovery::{list, list_by_processes, PREFIX};

    #[link(name = "kernel32")]
    extern "system" {
        /// `HANDLE CreateNamedPipeW(LPCWSTR lpName, DWORD dwOpenMode,
        /// DWORD dwPipeMode, DWORD nMaxInstances, DWORD nOutBufferSize,
        /// DWORD nInBufferSize, DWORD nDefaultTimeOut,
        /// LPSECURITY_ATTRIBUTES lpSecurityAttributes)`.
        fn CreateNamedPipeW(
            name: *const u16,
            open_mode: u32,
            pipe_mode: u32,
            max_instances: u32,
            out_buffer: u32,
            in_buffer: u32,
            default_timeout: u32,
            security: *mut c_void,
        ) -> *mut c_void;
        fn CloseHandle(handle: *mut c_void) -> i32;
    }
    /// `PIPE_ACCESS_DUPLEX`.
    const PIPE_ACCESS_DUPLEX: u32 = 0x0000_0003;

    /// This process, given a pipe named as a runtime's, is listed by the
    /// Toolhelp fallback and by `list`; without it, it is not.
    #[test]
    fn a_process_with_a_diagnostics_pipe_is_listed() {
        let me = std::process::id();
        let mine = |found: &[crate::diagnostics::discovery::DotnetProcess]| {
            found.iter().any(|p| p.pid == me)
        };
        assert!(!mine(&list_by_processes().unwrap()), "no pipe yet");
        let name = alloc::format!(r"\\.\pipe\{PREFIX}{me}");
        let wide: alloc::vec::Vec<u16> = name.encode_utf16().chain(Some(0)).collect();
        // SAFETY: a NUL-terminated name; no security attributes; the handle
        // is closed below.
        let pipe = unsafe {
            CreateNamedPipeW(
                wide.as_ptr(),
                PIPE_ACCESS_DUPLEX,
                0,
                1,
                4096,
                4096,
                0,
                core::ptr::null_mut(),
            )
        };
        assert_ne!(
            pipe as usize,
            usize::MAX,
            "CreateNamedPipeW: {}",
            std::io::Error::last_os_error()
        );
        let by_processes = list_by_processes().unwrap();
        let listed = list().unwrap();
        // SAFETY: the pipe's handle, closed once.
        unsafe { CloseHandle(pipe) };
        assert!(mine(&by_processes), "{by_processes:?}");
        let entry = listed
            .iter()
            .find(|p| p.pid == me)
            .expect("listed by list()");
        assert_eq!(entry.endpoint, std::path::PathBuf::from(name));
    }
}
