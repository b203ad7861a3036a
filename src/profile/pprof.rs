//! pprof's `profile.proto` (github.com/google/pprof, `proto/profile.proto`,
//! package `perftools.profiles`), encoded by hand and gzipped as the format
//! requires on disk. Read by `go tool pprof`, Grafana Pyroscope and the
//! other tools that take pprof.
//!
//! Field numbers, from that file: `Profile` `sample_type` = 1, `sample` =
//! 2, `location` = 4, `function` = 5, `string_table` = 6, `time_nanos` = 9,
//! `duration_nanos` = 10, `period_type` = 11, `period` = 12,
//! `default_sample_type` = 14; `ValueType` `type` = 1, `unit` = 2;
//! `Sample` `location_id` = 1 (packed, leaf first), `value` = 2 (packed),
//! `label` = 3; `Label` `key` = 1, `str` = 2; `Location` `id` = 1, `line`
//! = 4; `Line` `function_id` = 1; `Function` `id` = 1, `name` = 2,
//! `system_name` = 3. `string_table[0]` is `""`.
//!
//! Each distinct frame name is one `Function` and one `Location` (ids from
//! 1); managed code has no stable addresses or mappings to give.

use alloc::string::String;
use alloc::vec::Vec;
use std::collections::HashMap;

use super::tree::{Frames, NodeId, StackTree};
use crate::support::flate::deflate::gzip;

/// A pprof profile being built: sample types, samples, and the string,
/// function and location tables they refer to.
#[derive(Clone, Debug)]
pub struct Pprof {
    pub(super) strings: Vec<String>,
    string_ids: HashMap<String, i64>,
    pub(super) sample_types: Vec<(i64, i64)>,
    /// `Sample` messages, each already encoded as field 2 of `Profile`.
    samples: Vec<u8>,
    sample_count: usize,
    /// Function (and location) id of each frame name's string id.
    functions: HashMap<i64, u64>,
    /// String id of each function, by id - 1.
    pub(super) function_names: Vec<i64>,
    pub(super) time_nanos: i64,
    pub(super) duration_nanos: i64,
    pub(super) period_type: Option<(i64, i64)>,
    pub(super) period: i64,
    default_sample_type: i64,
}

pub(super) fn varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push(value as u8 | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// A varint field (wire type 0); zero is left out, as proto3 does.
pub(super) fn field_varint(out: &mut Vec<u8>, field: u32, value: u64) {
    if value != 0 {
        varint(out, u64::from(field) << 3);
        varint(out, value);
    }
}

/// A length-delimited field (wire type 2).
pub(super) fn field_bytes(out: &mut Vec<u8>, field: u32, bytes: &[u8]) {
    varint(out, u64::from(field) << 3 | 2);
    varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

/// A packed repeated varint field.
pub(super) fn field_packed(out: &mut Vec<u8>, field: u32, values: impl Iterator<Item = u64>) {
    let mut packed = Vec::new();
    for value in values {
        varint(&mut packed, value);
    }
    if !packed.is_empty() {
        field_bytes(out, field, &packed);
    }
}

/// A field read back by [`read_field`].
enum Wire<'a> {
    Varint(u64),
    Bytes(&'a [u8]),
}

/// A varint from the front of `bytes` (`None` at the end or when cut).
fn read_varint(bytes: &mut &[u8]) -> Option<u64> {
    let (mut value, mut shift) = (0u64, 0u32);
    loop {
        let (&b, rest) = bytes.split_first()?;
        *bytes = rest;
        value |= u64::from(b & 0x7f) << shift.min(63);
        if b < 0x80 {
            return Some(value);
        }
        shift += 7;
        if shift > 63 {
            return None;
        }
    }
}

/// A varint or length-delimited field from the front of `bytes` (`None`
/// at the end, or for anything else: only what [`Pprof`] writes is read).
fn read_field<'a>(bytes: &mut &'a [u8]) -> Option<(u64, Wire<'a>)> {
    let key = read_varint(bytes)?;
    match key & 7 {
        0 => Some((key >> 3, Wire::Varint(read_varint(bytes)?))),
        2 => {
            let len = usize::try_from(read_varint(bytes)?).ok()?;
            if len > bytes.len() {
                return None;
            }
            let (field, rest) = bytes.split_at(len);
            *bytes = rest;
            Some((key >> 3, Wire::Bytes(field)))
        }
        _ => None,
    }
}

/// The varints of a packed field.
fn read_packed(mut bytes: &[u8]) -> impl Iterator<Item = u64> + '_ {
    core::iter::from_fn(move || read_varint(&mut bytes))
}

fn value_type(kind: (i64, i64)) -> Vec<u8> {
    let mut out = Vec::new();
    field_varint(&mut out, 1, kind.0 as u64);
    field_varint(&mut out, 2, kind.1 as u64);
    out
}

impl Pprof {
    /// A profile whose samples have one value per `(type, unit)` of
    /// `sample_types`, e.g. `[("cpu", "nanoseconds"), ("alloc_space",
    /// "bytes")]`. The last type is the default one until
    /// [`set_default_sample_type`](Self::set_default_sample_type).
    pub fn new(sample_types: &[(&str, &str)]) -> Pprof {
        let mut pprof = Pprof {
            strings: alloc::vec![String::new()],
            string_ids: HashMap::new(),
            sample_types: Vec::new(),
            samples: Vec::new(),
            sample_count: 0,
            functions: HashMap::new(),
            function_names: Vec::new(),
            time_nanos: 0,
            duration_nanos: 0,
            period_type: None,
            period: 0,
            default_sample_type: 0,
        };
        pprof.string_ids.insert(String::new(), 0);
        pprof.sample_types = sample_types
            .iter()
            .map(|(kind, unit)| (pprof.string(kind), pprof.string(unit)))
            .collect();
        pprof
    }

    fn string(&mut self, text: &str) -> i64 {
        if let Some(&id) = self.string_ids.get(text) {
            return id;
        }
        let id = self.strings.len() as i64;
        self.strings.push(String::from(text));
        self.string_ids.insert(String::from(text), id);
        id
    }

    /// The sampling period: `period` units of `(type, unit)` between
    /// samples (e.g. `("cpu", "nanoseconds")`, 10,101,010 at 99 Hz).
    pub fn set_period(&mut self, kind: &str, unit: &str, period: i64) {
        self.period_type = Some((self.string(kind), self.string(unit)));
        self.period = period;
    }

    /// When collection started (nanoseconds since the Unix epoch) and how
    /// long it lasted.
    pub fn set_time(&mut self, time_nanos: i64, duration_nanos: i64) {
        self.time_nanos = time_nanos;
        self.duration_nanos = duration_nanos;
    }

    /// The sample type tools show first (by its type name).
    pub fn set_default_sample_type(&mut self, kind: &str) {
        self.default_sample_type = self.string(kind);
    }

    /// How many samples were added.
    pub fn sample_count(&self) -> usize {
        self.sample_count
    }

    /// The location (and function) id of a frame name.
    fn location(&mut self, name: &str) -> u64 {
        let name = self.string(name);
        if let Some(&id) = self.functions.get(&name) {
            return id;
        }
        self.function_names.push(name);
        let id = self.function_names.len() as u64;
        self.functions.insert(name, id);
        id
    }

    fn push_sample(&mut self, locations: &[u64], values: &[i64], labels: &[(i64, i64)]) {
        let mut sample = Vec::new();
        field_packed(&mut sample, 1, locations.iter().copied());
        // Values are all given, zeros too: one per sample type.
        let mut packed = Vec::new();
        for &value in values {
            varint(&mut packed, value as u64);
        }
        field_bytes(&mut sample, 2, &packed);
        for &(key, text) in labels {
            let mut label = Vec::new();
            field_varint(&mut label, 1, key as u64);
            field_varint(&mut label, 2, text as u64);
            field_bytes(&mut sample, 3, &label);
        }
        field_bytes(&mut self.samples, 2, &sample);
        self.sample_count += 1;
    }

    /// Adds one sample: its stack, leaf (innermost frame) first, one value
    /// per sample type, and string labels such as `("thread", "Worker")`.
    ///
    /// # Panics
    /// When `values` has not one value per sample type.
    pub fn add_sample(
        &mut self,
        stack_leaf_first: &[&str],
        values: &[i64],
        labels: &[(&str, &str)],
    ) {
        assert_eq!(
            values.len(),
            self.sample_types.len(),
            "one value per sample type"
        );
        let locations: Vec<u64> = stack_leaf_first.iter().map(|f| self.location(f)).collect();
        let labels: Vec<(i64, i64)> = labels
            .iter()
            .map(|(k, v)| (self.string(k), self.string(v)))
            .collect();
        self.push_sample(&locations, values, &labels);
    }

    /// Adds a sample for every node of `tree` with a non-zero self value:
    /// its stack and its values (clamped to `i64::MAX`), with `labels`.
    ///
    /// # Panics
    /// When the tree's width is not the number of sample types.
    pub fn add_tree(&mut self, tree: &StackTree, frames: &Frames, labels: &[(&str, &str)]) {
        assert_eq!(
            tree.width(),
            self.sample_types.len(),
            "one value per sample type"
        );
        self.add_tree_by(tree, frames, labels, |node, values| {
            values.extend(node.iter().map(|&v| v.min(i64::MAX as u64) as i64));
        });
    }

    /// Like [`add_tree`](Self::add_tree), the sample values of each node
    /// given by `map` from its tree values (it pushes one value per sample
    /// type into the `Vec` it gets, empty): for a tree whose values are not
    /// the samples' as they are (a call tree's inclusive time, turned into
    /// self time). Nodes whose mapped values are all zero are left out.
    ///
    /// # Panics
    /// When `map` does not push one value per sample type.
    pub fn add_tree_by(
        &mut self,
        tree: &StackTree,
        frames: &Frames,
        labels: &[(&str, &str)],
        mut map: impl FnMut(&[u64], &mut Vec<i64>),
    ) {
        let labels: Vec<(i64, i64)> = labels
            .iter()
            .map(|(k, v)| (self.string(k), self.string(v)))
            .collect();
        let mut ids: Vec<u64> = alloc::vec![0; frames.len()];
        let mut locations = Vec::new();
        let mut values = Vec::with_capacity(self.sample_types.len());
        for index in 1..tree.len() {
            let node = tree.find_index(index);
            values.clear();
            map(tree.values(node), &mut values);
            assert_eq!(
                values.len(),
                self.sample_types.len(),
                "one value per sample type"
            );
            if values.iter().all(|&v| v == 0) {
                continue;
            }
            locations.clear();
            let mut at: Option<NodeId> = Some(node);
            while let Some(n) = at {
                if let Some(frame) = tree.frame(n) {
                    let slot = &mut ids[frame.index()];
                    if *slot == 0 {
                        *slot = self.location(frames.name(frame));
                    }
                    locations.push(*slot);
                }
                at = tree.parent(n);
            }
            self.push_sample(&locations, &values, &labels);
        }
    }

    /// Each sample as added: its location (function) ids, leaf first, its
    /// values, and its labels as string ids, read back from the encoded
    /// `Sample` messages this type wrote (so the OTLP encoder sees what the
    /// pprof holds, without a second copy of the samples).
    pub(super) fn for_each_sample(&self, mut f: impl FnMut(&[u64], &[i64], &[(i64, i64)])) {
        let (mut locations, mut values, mut labels) = (Vec::new(), Vec::new(), Vec::new());
        let mut rest = &self.samples[..];
        // Each entry is field 2 of `Profile`, length-delimited, written by
        // `push_sample`: a well-formed message by construction.
        while let Some((2, Wire::Bytes(sample))) = read_field(&mut rest) {
            locations.clear();
            values.clear();
            labels.clear();
            let mut fields = sample;
            while let Some((field, wire)) = read_field(&mut fields) {
                match (field, wire) {
                    (1, Wire::Bytes(packed)) => locations.extend(read_packed(packed)),
                    (2, Wire::Bytes(packed)) => {
                        values.extend(read_packed(packed).map(|v| v as i64))
                    }
                    (3, Wire::Bytes(mut label)) => {
                        let (mut key, mut text) = (0, 0);
                        while let Some((n, Wire::Varint(v))) = read_field(&mut label) {
                            match n {
                                1 => key = v as i64,
                                2 => text = v as i64,
                                _ => {}
                            }
                        }
                        labels.push((key, text));
                    }
                    _ => {}
                }
            }
            f(&locations, &values, &labels);
        }
    }

    /// The profile with only the sample types named in `kinds` (in this
    /// profile's order), its samples whose values of those types are not
    /// all zero, with their stacks and labels; the same time and period.
    /// `None` when no sample is left.
    pub fn select(&self, kinds: &[&str]) -> Option<Pprof> {
        let text = |id: i64| self.strings.get(id as usize).map_or("", String::as_str);
        let keep: Vec<usize> = (0..self.sample_types.len())
            .filter(|&i| kinds.contains(&text(self.sample_types[i].0)))
            .collect();
        let types: Vec<(&str, &str)> = keep
            .iter()
            .map(|&i| (text(self.sample_types[i].0), text(self.sample_types[i].1)))
            .collect();
        let mut out = Pprof::new(&types);
        out.time_nanos = self.time_nanos;
        out.duration_nanos = self.duration_nanos;
        if let Some((kind, unit)) = self.period_type {
            out.set_period(text(kind), text(unit), self.period);
        }
        if let Some(&first) = types.first() {
            out.set_default_sample_type(first.0);
        }
        let mut values = Vec::with_capacity(keep.len());
        self.for_each_sample(|ids, all, labels| {
            values.clear();
            values.extend(keep.iter().map(|&i| all.get(i).copied().unwrap_or(0)));
            if values.iter().all(|&v| v == 0) {
                return;
            }
            let stack: Vec<&str> = ids
                .iter()
                .map(|&id| {
                    let index = (id as usize).checked_sub(1);
                    let name = index.and_then(|i| self.function_names.get(i)).copied();
                    name.map_or("", text)
                })
                .collect();
            let labels: Vec<(&str, &str)> =
                labels.iter().map(|&(k, v)| (text(k), text(v))).collect();
            out.add_sample(&stack, &values, &labels);
        });
        (out.sample_count > 0).then_some(out)
    }

    /// The profile as protobuf bytes.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.samples.len() + 64 * self.strings.len());
        for &kind in &self.sample_types {
            field_bytes(&mut out, 1, &value_type(kind));
        }
        out.extend_from_slice(&self.samples);
        for (index, &name) in self.function_names.iter().enumerate() {
            let id = index as u64 + 1;
            let mut line = Vec::new();
            field_varint(&mut line, 1, id);
            let mut location = Vec::new();
            field_varint(&mut location, 1, id);
            field_bytes(&mut location, 4, &line);
            field_bytes(&mut out, 4, &location);
            let mut function = Vec::new();
            field_varint(&mut function, 1, id);
            field_varint(&mut function, 2, name as u64);
            field_varint(&mut function, 3, name as u64);
            field_bytes(&mut out, 5, &function);
        }
        for text in &self.strings {
            field_bytes(&mut out, 6, text.as_bytes());
        }
        field_varint(&mut out, 9, self.time_nanos as u64);
        field_varint(&mut out, 10, self.duration_nanos as u64);
        if let Some(kind) = self.period_type {
            field_bytes(&mut out, 11, &value_type(kind));
        }
        field_varint(&mut out, 12, self.period as u64);
        field_varint(&mut out, 14, self.default_sample_type as u64);
        out
    }

    /// The profile as pprof files hold it: gzipped protobuf.
    pub fn encode_gzip(&self) -> Vec<u8> {
        gzip(&self.encode())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A minimal protobuf reader: (field, wire type, varint or bytes).
    fn fields(mut bytes: &[u8]) -> Vec<(u64, u64, Vec<u8>)> {
        fn read_varint(bytes: &mut &[u8]) -> u64 {
            let (mut value, mut shift) = (0u64, 0);
            loop {
                let b = bytes[0];
                *bytes = &bytes[1..];
                value |= u64::from(b & 0x7f) << shift;
                if b < 0x80 {
                    return value;
                }
                shift += 7;
            }
        }
        let mut out = Vec::new();
        while !bytes.is_empty() {
            let key = read_varint(&mut bytes);
            match key & 7 {
                0 => out.push((key >> 3, 0, read_varint(&mut bytes).to_le_bytes().to_vec())),
                2 => {
                    let len = read_varint(&mut bytes) as usize;
                    out.push((key >> 3, 2, bytes[..len].to_vec()));
                    bytes = &bytes[len..];
                }
                other => panic!("wire type {other}"),
            }
        }
        out
    }

    fn packed(bytes: &[u8]) -> Vec<u64> {
        let mut out = Vec::new();
        let (mut value, mut shift) = (0u64, 0);
        for &b in bytes {
            value |= u64::from(b & 0x7f) << shift;
            shift += 7;
            if b < 0x80 {
                out.push(value);
                (value, shift) = (0, 0);
            }
        }
        out
    }

    fn num(bytes: &[u8]) -> u64 {
        u64::from_le_bytes(bytes.try_into().unwrap())
    }

    #[test]
    fn a_tree_encodes_as_the_proto_says() {
        let mut frames = Frames::new();
        let (main, hot) = (frames.intern("Main"), frames.intern("Hot"));
        let mut tree = StackTree::new(2);
        tree.add([main, hot], &[300, 7]);
        tree.add([main], &[0, 0]);
        let mut pprof = Pprof::new(&[("cpu", "nanoseconds"), ("wall", "nanoseconds")]);
        pprof.set_period("cpu", "nanoseconds", 10);
        pprof.add_tree(&tree, &frames, &[("thread", "T1")]);
        assert_eq!(pprof.sample_count(), 1);
        let top = fields(&pprof.encode());
        let strings: Vec<String> = top
            .iter()
            .filter(|f| f.0 == 6)
            .map(|f| String::from_utf8(f.2.clone()).unwrap())
            .collect();
        assert_eq!(strings[0], "");
        let s = |text: &str| strings.iter().position(|t| t == text).unwrap() as u64;
        let types: Vec<_> = top.iter().filter(|f| f.0 == 1).collect();
        assert_eq!(types.len(), 2);
        let cpu = fields(&types[0].2);
        assert_eq!(
            (num(&cpu[0].2), num(&cpu[1].2)),
            (s("cpu"), s("nanoseconds"))
        );
        let samples: Vec<_> = top.iter().filter(|f| f.0 == 2).collect();
        assert_eq!(samples.len(), 1);
        let sample = fields(&samples[0].2);
        let locations = packed(&sample[0].2);
        assert_eq!(sample[1].0, 2);
        assert_eq!(packed(&sample[1].2), [300, 7]);
        let label = fields(&sample[2].2);
        assert_eq!((num(&label[0].2), num(&label[1].2)), (s("thread"), s("T1")));
        // Leaf first: Hot, then Main; ids from 1, each a function of that name.
        let functions: Vec<Vec<_>> = top
            .iter()
            .filter(|f| f.0 == 5)
            .map(|f| fields(&f.2))
            .collect();
        let name_of = |id: u64| {
            let f = functions.iter().find(|f| num(&f[0].2) == id).unwrap();
            strings[num(&f[1].2) as usize].clone()
        };
        assert_eq!(locations.len(), 2);
        assert!(locations.iter().all(|&l| l >= 1));
        assert_eq!(
            (name_of(locations[0]), name_of(locations[1])),
            ("Hot".into(), "Main".into())
        );
        let location_count = top.iter().filter(|f| f.0 == 4).count();
        assert_eq!(location_count, 2);
        // period 10 (field 12).
        assert_eq!(num(&top.iter().find(|f| f.0 == 12).unwrap().2), 10);
    }
}
