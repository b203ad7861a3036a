//! Signal mode's addresses to functions, on the sampler thread: the
//! [`Resolver`] and its caches.

// Off Linux x86-64/AArch64 the handler, the walk and the tables are not
// built into a sampler (SamplingMode::Signal answers E_NOTIMPL there).
#![cfg_attr(
    not(all(
        target_os = "linux",
        any(target_arch = "x86_64", target_arch = "aarch64")
    )),
    allow(dead_code, unused_imports)
)]

use alloc::collections::BTreeMap;
use alloc::vec::Vec;
use std::collections::HashMap;

use super::frameless;
use crate::facade::ProfilerInfo;
use crate::profiling::{FunctionID, ReJITID, COR_PRF_CODE_INFO};

/// Most single addresses the resolver remembers before it starts over.
const MAX_CACHED_IPS: usize = 1 << 20;

/// Turns instruction pointers into `FunctionID`s (`GetFunctionFromIP`),
/// caching each managed function's code ranges (`GetCodeInfo2`) and every
/// native address seen.
#[derive(Default)]
pub(super) struct Resolver {
    /// Code range start -> (end, function).
    ranges: BTreeMap<usize, (usize, FunctionID)>,
    /// Addresses answered one by one (native code: `FunctionID::NULL`).
    ips: HashMap<usize, FunctionID>,
    /// x86-64: managed code without a frame pointer, start -> (end, frame
    /// size, prologue length), for the handler (`frameless::frameless_at`).
    frameless: BTreeMap<usize, (usize, usize, usize)>,
    /// Whether `frameless` grew since it was last published.
    frameless_changed: bool,
    /// Return addresses [`Resolver::return_address`] has asked about, and
    /// its answers.
    checked: HashMap<usize, bool>,
}

impl Resolver {
    /// The function whose code holds `ip` (`FunctionID::NULL` for native
    /// code).
    pub(super) fn function(&mut self, info: &ProfilerInfo, ip: usize) -> FunctionID {
        if let Some((_, &(end, function))) = self.ranges.range(..=ip).next_back() {
            if ip < end {
                return function;
            }
        }
        if let Some(&function) = self.ips.get(&ip) {
            return function;
        }
        let mut function = FunctionID::NULL;
        // SAFETY: a valid out-pointer; any address may be asked (an address
        // outside managed code is an error answer).
        let found = unsafe { info.v1().GetFunctionFromIP(ip as *const u8, &mut function) }
            .ok()
            .is_ok();
        let function = if found { function } else { FunctionID::NULL };
        if found && self.cache_ranges(info, function, ip) {
            return function;
        }
        if self.ips.len() >= MAX_CACHED_IPS {
            self.ips.clear();
        }
        self.ips.insert(ip, function);
        function
    }

    /// Caches `function`'s code ranges if one of them holds `ip` (the
    /// ranges `GetCodeInfo2` gives are those of one code version; another
    /// version's addresses are cached one by one).
    fn cache_ranges(&mut self, info: &ProfilerInfo, function: FunctionID, ip: usize) -> bool {
        let Some(v2) = info.v2() else {
            return false;
        };
        let holds = |ranges: &[COR_PRF_CODE_INFO]| {
            ranges
                .iter()
                .any(|r| (r.startAddress..r.startAddress + r.size).contains(&ip))
        };
        let mut buffer = [COR_PRF_CODE_INFO::default(); 8];
        let mut count = 0u32;
        // SAFETY: a buffer of 8 entries, as announced; a valid count.
        let ok = unsafe { v2.GetCodeInfo2(function, 8, &mut count, buffer.as_mut_ptr()) }
            .ok()
            .is_ok();
        if !ok || !holds(&buffer[..(count as usize).min(8)]) {
            // Another code version (tiered compilation keeps the tier-0
            // code): its ranges by its start (ICorProfilerInfo9).
            count = 0;
            if let Some(v9) = info.v9() {
                let mut starts = [0usize; 8];
                let mut n = 0u32;
                // SAFETY: a buffer of 8 addresses, as announced.
                let listed = unsafe {
                    v9.GetNativeCodeStartAddresses(
                        function,
                        ReJITID::NULL,
                        8,
                        &mut n,
                        starts.as_mut_ptr(),
                    )
                };
                if listed.ok().is_ok() {
                    for &start in &starts[..(n as usize).min(8)] {
                        let mut c = 0u32;
                        // SAFETY: a buffer of 8 entries; a start the runtime listed.
                        let got = unsafe { v9.GetCodeInfo4(start, 8, &mut c, buffer.as_mut_ptr()) };
                        if got.ok().is_ok() && holds(&buffer[..(c as usize).min(8)]) {
                            count = c;
                            break;
                        }
                    }
                }
            }
            if count == 0 {
                return false;
            }
        }
        let ranges = &buffer[..(count as usize).min(8)];
        for r in ranges {
            self.ranges
                .insert(r.startAddress, (r.startAddress + r.size, function));
        }
        // The first range holds the entry and its prologue.
        if cfg!(target_arch = "x86_64") && self.frameless.len() < frameless::MAX_FRAMELESS {
            let first = ranges[0];
            let len = first.size.min(16);
            // Copied byte by byte, not borrowed as a slice: the runtime may
            // patch its code (tiering, rejit) while it is read.
            let mut code = [0u8; 16];
            for (i, byte) in code.iter_mut().take(len).enumerate() {
                // SAFETY: the first `len` bytes of the function's code,
                // which the runtime just reported (executable and readable
                // while loaded); a volatile read of a byte that may change.
                *byte = unsafe {
                    core::ptr::read_volatile((first.startAddress as *const u8).wrapping_add(i))
                };
            }
            if let Some((size, prologue)) = frameless::frameless_prologue(&code[..len]) {
                self.frameless.insert(
                    first.startAddress,
                    (first.startAddress + first.size, size, prologue),
                );
                self.frameless_changed = true;
            }
        }
        true
    }

    /// The cached code range (start, end) holding `ip`.
    fn range_of(&self, ip: usize) -> Option<(usize, usize)> {
        let (&start, &(end, _)) = self.ranges.range(..=ip).next_back()?;
        (ip < end).then_some((start, end))
    }

    /// Two adjacent frames of one walk, `inner` called by `outer` (both
    /// addresses as resolved), that the resolver found in the same method:
    /// when `outer` is in a cached code range that does not hold `inner`,
    /// it is the tier-0 code under an OSR frame (or, harmlessly, one code
    /// version of a method calling another), published to the handler as
    /// [`frameless::OSR_ORIGIN`] so that later walks find the caller the OSR
    /// frame's record skips.
    pub(super) fn same_method(&mut self, inner: usize, outer: usize) {
        if !cfg!(target_arch = "x86_64") || self.frameless.len() >= frameless::MAX_FRAMELESS {
            return;
        }
        let Some((start, end)) = self.range_of(outer) else {
            return;
        };
        if self.range_of(inner) == Some((start, end)) || self.frameless.contains_key(&start) {
            return;
        }
        self.frameless
            .insert(start, (end, frameless::OSR_ORIGIN, 0));
        self.frameless_changed = true;
    }

    /// A return address `ra` of a walk (x86-64): when it is the first byte
    /// of a method's code (`GetCodeInfo4` of it answers a range starting
    /// there), no call returns there and the frame record that held it is
    /// an OSR frame's (.NET 11: see [`tier0_caller`]). The byte is
    /// published to the handler as [`frameless::OSR_ENTRY`] so that later
    /// walks find the caller the OSR frame's record skips. Each address is
    /// asked once. Returns whether `ra` is such a byte (a walk taken before
    /// the handler knew it holds it: not a frame of its own).
    pub(super) fn return_address(&mut self, info: &ProfilerInfo, ra: usize) -> bool {
        if !cfg!(target_arch = "x86_64") {
            return false;
        }
        if let Some(&entry) = self.checked.get(&ra) {
            return entry;
        }
        if self.checked.len() >= MAX_CACHED_IPS {
            self.checked.clear();
        }
        let entry = self.code_start(info, ra);
        self.checked.insert(ra, entry);
        // Not inside a range the handler already knows.
        let inside = self
            .frameless
            .range(..=ra)
            .next_back()
            .is_some_and(|(_, &(end, _, _))| ra < end);
        if entry && !inside && self.frameless.len() < frameless::MAX_FRAMELESS {
            self.frameless.insert(ra, (ra + 1, frameless::OSR_ENTRY, 0));
            self.frameless_changed = true;
        }
        entry
    }

    /// Whether `ip` is the first byte of a managed method's code.
    fn code_start(&self, info: &ProfilerInfo, ip: usize) -> bool {
        let Some(v9) = info.v9() else {
            return false;
        };
        let mut buffer = [COR_PRF_CODE_INFO::default(); 2];
        let mut count = 0u32;
        // SAFETY: a buffer of 2 entries, as announced; any address may be
        // asked (an address that is not managed code is an error answer;
        // one inside a method's code answers another range, dotnet/runtime
        // `GetCodeInfoFromCodeStart`).
        let got = unsafe { v9.GetCodeInfo4(ip, 2, &mut count, buffer.as_mut_ptr()) };
        got.ok().is_ok() && count >= 1 && buffer[0].startAddress == ip && buffer[0].size > 0
    }

    /// Hands the frameless code ranges found since the last call to the
    /// handler.
    pub(super) fn publish(&mut self) {
        if self.frameless_changed {
            let ranges: Vec<(usize, usize, usize, usize)> = self
                .frameless
                .iter()
                .map(|(&start, &(end, size, prologue))| (start, end, size, prologue))
                .collect();
            frameless::publish_frameless(&ranges);
            self.frameless_changed = false;
        }
    }
}
