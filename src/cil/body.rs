//! Whole method bodies: header, instructions and exception clauses; decoding,
//! label-based editing, layout (branch widening) and encoding.

use alloc::vec;
use alloc::vec::Vec;
use core::fmt;

use super::eh::{self, ClauseKind, ExceptionClause, RawClause};
use super::error::{Error, ErrorKind};
use super::header::MethodHeader;
use super::instruction::{
    decode_code, encode_instruction, encoded_size, Instruction, Label, Operand, RawOperand,
};
use super::opcode::OpCode;

/// A decoded method body: header, instructions (with labels) and exception
/// clauses (referring to instructions by label).
///
/// Decoding then encoding without edits gives the input bytes back
/// (byte-identical) for any body in canonical form: zero padding before the
/// sections and a zero reserved field in small sections.
#[derive(Clone, Debug, PartialEq)]
pub struct MethodBody {
    header: MethodHeader,
    instructions: Vec<Instruction>,
    clauses: Vec<ExceptionClause>,
    /// Format of each decoded section (true: fat).
    sections: Vec<bool>,
    next_label: u32,
}

/// The result of a layout pass: final opcodes (after widening) and offsets.
pub(crate) struct Layout {
    pub(crate) opcodes: Vec<OpCode>,
    pub(crate) offsets: Vec<u32>,
    pub(crate) code_size: u32,
    /// label id -> instruction index (`u32::MAX`: none).
    pub(crate) index: Vec<u32>,
}

impl Layout {
    pub(crate) fn offset_of(&self, l: Label) -> Option<u32> {
        if l == Label::END {
            return Some(self.code_size);
        }
        let i = *self.index.get(l.0 as usize)?;
        self.offsets.get(i as usize).copied()
    }
}

fn label_index(instructions: &[Instruction], next_label: u32) -> Vec<u32> {
    let mut index = vec![u32::MAX; next_label as usize];
    for (i, ins) in instructions.iter().enumerate() {
        if let Some(slot) = index.get_mut(ins.label.0 as usize) {
            *slot = i as u32;
        }
    }
    index
}

impl MethodBody {
    /// An empty body with a tiny header.
    pub fn new() -> Self {
        MethodBody {
            header: MethodHeader::tiny(),
            instructions: Vec::new(),
            clauses: Vec::new(),
            sections: Vec::new(),
            next_label: 0,
        }
    }

    /// Decodes a method body (header, code, exception sections) as returned
    /// by `ICorProfilerInfo::GetILFunctionBody` or found at a method's RVA.
    ///
    /// Bytes after the last section are ignored (the runtime's buffer may be
    /// longer than the body).
    pub fn decode(bytes: &[u8]) -> Result<MethodBody, Error> {
        let (header, hsize) = MethodHeader::decode(bytes)?;
        let code_end = hsize
            .checked_add(header.code_size as usize)
            .filter(|&e| e <= bytes.len())
            .ok_or_else(|| Error::new(bytes.len(), ErrorKind::UnexpectedEnd))?;
        let raw = decode_code(&bytes[hsize..code_end], hsize)?;
        let code_size = header.code_size;
        // Map an IL offset to an instruction label.
        let offsets: Vec<u32> = raw.iter().map(|r| r.offset).collect();
        let label_at = |off: i64, err_at: usize| -> Result<Label, Error> {
            if off == i64::from(code_size) {
                return Ok(Label::END);
            }
            if off < 0 || off > i64::from(code_size) {
                return Err(Error::new(err_at, ErrorKind::InvalidTarget(off)));
            }
            match offsets.binary_search(&(off as u32)) {
                Ok(i) => Ok(Label(i as u32)),
                Err(_) => Err(Error::new(err_at, ErrorKind::InvalidTarget(off))),
            }
        };
        let mut instructions = Vec::with_capacity(raw.len());
        for (i, r) in raw.into_iter().enumerate() {
            let at = hsize + r.offset as usize;
            let operand = match r.operand {
                RawOperand::Plain(o) => o,
                RawOperand::Branch(t) => Operand::Branch(label_at(t, at)?),
                RawOperand::Switch(ts) => Operand::Switch(
                    ts.into_iter()
                        .map(|t| label_at(t, at))
                        .collect::<Result<Vec<_>, _>>()?,
                ),
            };
            instructions.push(Instruction {
                label: Label(i as u32),
                offset: r.offset,
                opcode: r.opcode,
                operand,
            });
        }
        let mut clauses = Vec::new();
        let mut sections = Vec::new();
        if header.more_sects {
            let start = (code_end + 3) & !3;
            let raw_sections = eh::decode_sections(bytes, start)?;
            for (si, s) in raw_sections.into_iter().enumerate() {
                sections.push(s.fat);
                for c in s.clauses {
                    let at = start;
                    let end = |o: u32, l: u32| i64::from(o) + i64::from(l);
                    let kind = match c.flags {
                        0 => ClauseKind::Catch(super::Token(c.class_or_filter)),
                        1 => ClauseKind::Filter(label_at(i64::from(c.class_or_filter), at)?),
                        2 => ClauseKind::Finally,
                        4 => ClauseKind::Fault,
                        _ => {
                            return Err(Error::new(
                                at,
                                ErrorKind::InvalidSection("unknown exception clause flags"),
                            ))
                        }
                    };
                    let extra = match kind {
                        ClauseKind::Finally | ClauseKind::Fault => c.class_or_filter,
                        _ => 0,
                    };
                    clauses.push(ExceptionClause {
                        kind,
                        try_start: label_at(i64::from(c.try_offset), at)?,
                        try_end: label_at(end(c.try_offset, c.try_length), at)?,
                        handler_start: label_at(i64::from(c.handler_offset), at)?,
                        handler_end: label_at(end(c.handler_offset, c.handler_length), at)?,
                        section: si as u32,
                        extra,
                    });
                }
            }
        }
        let next_label = instructions.len() as u32;
        Ok(MethodBody {
            header,
            instructions,
            clauses,
            sections,
            next_label,
        })
    }

    /// The header. Its code size is the decoded one or that of the last
    /// [`layout`](MethodBody::layout).
    pub fn header(&self) -> &MethodHeader {
        &self.header
    }

    /// The header, for changing max stack, locals or `InitLocals`.
    pub fn header_mut(&mut self) -> &mut MethodHeader {
        &mut self.header
    }

    /// The instructions, in order.
    pub fn instructions(&self) -> &[Instruction] {
        &self.instructions
    }

    /// The exception clauses, in order.
    pub fn clauses(&self) -> &[ExceptionClause] {
        &self.clauses
    }

    /// The exception clauses, for editing; labels are checked on encoding.
    pub fn clauses_mut(&mut self) -> &mut Vec<ExceptionClause> {
        &mut self.clauses
    }

    /// The index of the instruction with this label.
    pub fn position(&self, label: Label) -> Option<usize> {
        self.instructions.iter().position(|i| i.label == label)
    }

    /// The instruction with this label.
    pub fn get(&self, label: Label) -> Option<&Instruction> {
        self.instructions.iter().find(|i| i.label == label)
    }

    /// The label of the first instruction matching `pred`.
    pub fn find(&self, mut pred: impl FnMut(&Instruction) -> bool) -> Option<Label> {
        self.instructions.iter().find(|i| pred(i)).map(|i| i.label)
    }

    fn check(&self, opcode: OpCode, operand: &Operand, at: usize) -> Result<(), Error> {
        operand
            .check(opcode.operand_kind())
            .map_err(|k| Error::new(at, k))
    }

    fn at_offset(&self, index: usize) -> usize {
        self.instructions
            .get(index)
            .map_or(self.header.code_size as usize, |i| i.offset as usize)
    }

    /// Inserts an instruction at `index` (0 = method entry, `len` = end) and
    /// returns its label.
    ///
    /// Branches and clauses keep pointing at the instructions they pointed
    /// at, so code inserted before an instruction that is a branch target or
    /// starts a protected block runs only when control falls into it. Use
    /// [`retarget`](MethodBody::retarget) to send branches to the new code.
    pub fn insert(
        &mut self,
        index: usize,
        opcode: OpCode,
        operand: Operand,
    ) -> Result<Label, Error> {
        let at = self.at_offset(index);
        if index > self.instructions.len() {
            return Err(Error::new(at, ErrorKind::UnknownLabel));
        }
        self.check(opcode, &operand, at)?;
        let label = Label(self.next_label);
        self.next_label = self
            .next_label
            .checked_add(1)
            .filter(|&n| n != u32::MAX)
            .ok_or_else(|| Error::new(at, ErrorKind::Unencodable("too many labels")))?;
        self.instructions.insert(
            index,
            Instruction {
                label,
                offset: 0,
                opcode,
                operand,
            },
        );
        Ok(label)
    }

    /// Inserts an instruction before the one labelled `before` ([`Label::END`]
    /// appends) and returns its label. See [`insert`](MethodBody::insert).
    pub fn insert_before(
        &mut self,
        before: Label,
        opcode: OpCode,
        operand: Operand,
    ) -> Result<Label, Error> {
        let index = if before == Label::END {
            self.instructions.len()
        } else {
            self.position(before)
                .ok_or_else(|| Error::new(0, ErrorKind::UnknownLabel))?
        };
        self.insert(index, opcode, operand)
    }

    /// Inserts an instruction after the one labelled `after` and returns its label.
    pub fn insert_after(
        &mut self,
        after: Label,
        opcode: OpCode,
        operand: Operand,
    ) -> Result<Label, Error> {
        let index = self
            .position(after)
            .ok_or_else(|| Error::new(0, ErrorKind::UnknownLabel))?;
        self.insert(index + 1, opcode, operand)
    }

    /// Appends an instruction and returns its label.
    pub fn push(&mut self, opcode: OpCode, operand: Operand) -> Result<Label, Error> {
        self.insert(self.instructions.len(), opcode, operand)
    }

    /// Replaces the opcode and operand of the instruction labelled `at`; it
    /// keeps its label, so branches and clauses that pointed at it still do.
    pub fn replace(&mut self, at: Label, opcode: OpCode, operand: Operand) -> Result<(), Error> {
        let i = self
            .position(at)
            .ok_or_else(|| Error::new(0, ErrorKind::UnknownLabel))?;
        self.check(opcode, &operand, self.at_offset(i))?;
        let ins = &mut self.instructions[i];
        ins.opcode = opcode;
        ins.operand = operand;
        Ok(())
    }

    /// Removes the instruction labelled `at` and returns it.
    ///
    /// Branches, switch targets and clause boundaries that pointed at it are
    /// retargeted to the instruction that followed it (or [`Label::END`] if it
    /// was last). Encoding then fails if a clause became empty.
    pub fn remove(&mut self, at: Label) -> Result<Instruction, Error> {
        let i = self
            .position(at)
            .ok_or_else(|| Error::new(0, ErrorKind::UnknownLabel))?;
        let removed = self.instructions.remove(i);
        let next = self.instructions.get(i).map_or(Label::END, |n| n.label);
        self.retarget(at, next);
        Ok(removed)
    }

    /// Makes every branch, switch target, filter start and clause boundary
    /// that points at `from` point at `to` instead.
    pub fn retarget(&mut self, from: Label, to: Label) {
        for ins in &mut self.instructions {
            for t in ins.operand.targets_mut() {
                if *t == from {
                    *t = to;
                }
            }
        }
        for c in &mut self.clauses {
            for l in [
                &mut c.try_start,
                &mut c.try_end,
                &mut c.handler_start,
                &mut c.handler_end,
            ] {
                if *l == from {
                    *l = to;
                }
            }
            if let ClauseKind::Filter(l) = &mut c.kind {
                if *l == from {
                    *l = to;
                }
            }
        }
    }

    /// Computes the layout: widens short branches whose target is out of
    /// `i8` range (repeating until stable) and assigns offsets.
    pub(crate) fn plan(&self) -> Result<Layout, Error> {
        let mut index = label_index(&self.instructions, self.next_label);
        let mut opcodes: Vec<OpCode> = self.instructions.iter().map(|i| i.opcode).collect();
        let mut offsets = vec![0u32; self.instructions.len()];
        loop {
            let mut off: u64 = 0;
            for (i, ins) in self.instructions.iter().enumerate() {
                offsets[i] = u32::try_from(off)
                    .map_err(|_| Error::new(0, ErrorKind::Unencodable("code too large")))?;
                off += encoded_size(opcodes[i], &ins.operand) as u64;
            }
            let code_size = u32::try_from(off)
                .map_err(|_| Error::new(0, ErrorKind::Unencodable("code too large")))?;
            let mut layout = Layout {
                opcodes,
                offsets,
                code_size,
                index,
            };
            let mut changed = false;
            for (i, ins) in self.instructions.iter().enumerate() {
                let op = layout.opcodes[i];
                let Some(long) = op.long_form() else { continue };
                let Operand::Branch(target) = ins.operand else {
                    continue;
                };
                let t = layout.offset_of(target).ok_or_else(|| {
                    Error::new(layout.offsets[i] as usize, ErrorKind::UnknownLabel)
                })?;
                let next = i64::from(layout.offsets[i]) + encoded_size(op, &ins.operand) as i64;
                let d = i64::from(t) - next;
                if i8::try_from(d).is_err() {
                    layout.opcodes[i] = long;
                    changed = true;
                }
            }
            if !changed {
                return Ok(layout);
            }
            opcodes = layout.opcodes;
            offsets = layout.offsets;
            index = layout.index;
        }
    }

    /// Applies the layout to the body: short branches that no longer reach
    /// become long, instruction offsets and the header's code size are
    /// updated. [`encode`](MethodBody::encode) does the same on a copy.
    pub fn layout(&mut self) -> Result<(), Error> {
        let layout = self.plan()?;
        for (i, ins) in self.instructions.iter_mut().enumerate() {
            ins.opcode = layout.opcodes[i];
            ins.offset = layout.offsets[i];
        }
        self.header.code_size = layout.code_size;
        Ok(())
    }

    fn raw_clauses(&self, layout: &Layout) -> Result<Vec<(u32, RawClause)>, Error> {
        let mut out = Vec::with_capacity(self.clauses.len());
        for c in &self.clauses {
            let off = |l: Label| {
                layout
                    .offset_of(l)
                    .ok_or_else(|| Error::new(0, ErrorKind::UnknownLabel))
            };
            let ts = off(c.try_start)?;
            let te = off(c.try_end)?;
            let hs = off(c.handler_start)?;
            let he = off(c.handler_end)?;
            if te <= ts || he <= hs {
                return Err(Error::new(
                    ts as usize,
                    ErrorKind::Unencodable("empty or inverted exception clause range"),
                ));
            }
            let class_or_filter = match c.kind {
                ClauseKind::Catch(t) => t.0,
                ClauseKind::Filter(l) => off(l)?,
                ClauseKind::Finally | ClauseKind::Fault => c.extra,
            };
            out.push((
                c.section,
                RawClause {
                    flags: c.kind.flags(),
                    try_offset: ts,
                    try_length: te - ts,
                    handler_offset: hs,
                    handler_length: he - hs,
                    class_or_filter,
                },
            ));
        }
        Ok(out)
    }

    /// Encodes the body: header (promoted from tiny to fat when needed),
    /// code (short branches widened when needed) and exception sections
    /// (small sections widened to fat when needed), 4-byte aligned.
    ///
    /// The header's max stack is written as it is; call
    /// [`update_max_stack`](MethodBody::update_max_stack) after editing.
    pub fn encode(&self) -> Result<Vec<u8>, Error> {
        let layout = self.plan()?;
        let raw = self.raw_clauses(&layout)?;
        // Group clauses by section, keeping section order; new clauses go last.
        let nsec = self.sections.len().max(usize::from(!raw.is_empty()));
        let mut groups: Vec<(bool, Vec<RawClause>)> = (0..nsec)
            .map(|i| (self.sections.get(i).copied().unwrap_or(false), Vec::new()))
            .collect();
        for (s, c) in raw {
            let s = (s as usize).min(nsec.saturating_sub(1));
            groups[s].1.push(c);
        }
        groups.retain(|g| !g.1.is_empty());
        for g in &mut groups {
            if g.1.len() > 20 || g.1.iter().any(|c| !c.fits_small()) {
                g.0 = true;
            }
        }
        let has_sections = !groups.is_empty();
        let fat = self.header.needs_fat(layout.code_size, has_sections);
        let mut out = Vec::with_capacity(12 + layout.code_size as usize);
        self.header
            .encode(&mut out, fat, layout.code_size, has_sections);
        let base = out.len();
        for (i, ins) in self.instructions.iter().enumerate() {
            let op = layout.opcodes[i];
            let next = layout.offsets[i] + encoded_size(op, &ins.operand) as u32;
            encode_instruction(&mut out, op, &ins.operand, next, &|l| layout.offset_of(l))
                .map_err(|k| Error::new(layout.offsets[i] as usize, k))?;
        }
        debug_assert_eq!(out.len() - base, layout.code_size as usize);
        let n = groups.len();
        for (i, (gfat, clauses)) in groups.iter().enumerate() {
            while out.len() % 4 != 0 {
                out.push(0);
            }
            eh::encode_section(&mut out, *gfat, i + 1 < n, clauses)
                .map_err(|k| Error::new(0, k))?;
        }
        Ok(out)
    }
}

impl Default for MethodBody {
    fn default() -> Self {
        MethodBody::new()
    }
}

/// Writes an IL offset as `IL_xxxx`.
pub(crate) struct IlOffset(pub(crate) u32);

impl fmt::Display for IlOffset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "IL_{:04x}", self.0)
    }
}

/// ildasm-like listing: one `IL_xxxx: opcode operand` line per instruction
/// (offsets from a fresh layout), then one line per exception clause.
impl fmt::Display for MethodBody {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let layout = self.plan().ok();
        let off = |l: Label| -> Option<u32> { layout.as_ref().and_then(|x| x.offset_of(l)) };
        let target = |f: &mut fmt::Formatter<'_>, l: Label| match off(l) {
            Some(o) => write!(f, "{}", IlOffset(o)),
            None => f.write_str("IL_????"),
        };
        for (i, ins) in self.instructions.iter().enumerate() {
            let (op, o) = match &layout {
                Some(x) => (x.opcodes[i], x.offsets[i]),
                None => (ins.opcode, ins.offset),
            };
            write!(f, "{}: {}", IlOffset(o), op.name())?;
            match &ins.operand {
                Operand::None => {}
                Operand::I8(v) => write!(f, " {v}")?,
                Operand::I32(v) => write!(f, " {v}")?,
                Operand::I64(v) => write!(f, " {v}")?,
                Operand::F32(v) => write!(f, " {v:?}")?,
                Operand::F64(v) => write!(f, " {v:?}")?,
                Operand::Var(v) => write!(f, " {v}")?,
                Operand::Token(t) => write!(f, " {t}")?,
                Operand::Branch(l) => {
                    f.write_str(" ")?;
                    target(f, *l)?;
                }
                Operand::Switch(ls) => {
                    f.write_str(" (")?;
                    for (k, l) in ls.iter().enumerate() {
                        if k > 0 {
                            f.write_str(", ")?;
                        }
                        target(f, *l)?;
                    }
                    f.write_str(")")?;
                }
            }
            writeln!(f)?;
        }
        for c in &self.clauses {
            f.write_str(".try ")?;
            target(f, c.try_start)?;
            f.write_str(" to ")?;
            target(f, c.try_end)?;
            match c.kind {
                ClauseKind::Catch(t) => write!(f, " catch {t}")?,
                ClauseKind::Filter(l) => {
                    f.write_str(" filter ")?;
                    target(f, l)?;
                }
                ClauseKind::Finally => f.write_str(" finally")?,
                ClauseKind::Fault => f.write_str(" fault")?,
            }
            f.write_str(" handler ")?;
            target(f, c.handler_start)?;
            f.write_str(" to ")?;
            target(f, c.handler_end)?;
            writeln!(f)?;
        }
        Ok(())
    }
}
