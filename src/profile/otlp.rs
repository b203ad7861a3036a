//! OpenTelemetry profiles (OTLP, signal status "development"): a [`Pprof`]
//! as an `ExportProfilesServiceRequest`, encoded by hand.
//!
//! The facts, from open-telemetry/opentelemetry-proto tag v1.11.0 (commit
//! 790608c4d51e6ffc12210b541e8514cbed9e91a4), files
//! `opentelemetry/proto/collector/profiles/v1development/profiles_service.proto`,
//! `opentelemetry/proto/profiles/v1development/profiles.proto`,
//! `opentelemetry/proto/common/v1/common.proto` and
//! `opentelemetry/proto/resource/v1/resource.proto`:
//!
//! - `ExportProfilesServiceRequest`: `resource_profiles` = 1 (repeated),
//!   `dictionary` = 2 (`ProfilesDictionary`).
//! - `ProfilesDictionary`: `mapping_table` = 1, `location_table` = 2,
//!   `function_table` = 3, `link_table` = 4, `string_table` = 5 (strings),
//!   `attribute_table` = 6 (`KeyValueAndUnit`), `stack_table` = 7. Every
//!   table's entry 0 must be present and the zero value of its type (for
//!   `link_table` the spec prefers a 16-byte zero trace id and an 8-byte
//!   zero span id); duplicates and unreferenced entries should not be.
//! - `ResourceProfiles`: `resource` = 1, `scope_profiles` = 2;
//!   `ScopeProfiles`: `scope` = 1 (`InstrumentationScope`: `name` = 1,
//!   `version` = 2), `profiles` = 2; `Resource`: `attributes` = 1
//!   (`KeyValue`: `key` = 1, `value` = 2; `AnyValue`: `string_value` = 1,
//!   `int_value` = 3, int64).
//! - `Profile`: `sample_type` = 1 (one `ValueType`: `type_strindex` = 1,
//!   `unit_strindex` = 2), `samples` = 2, `time_unix_nano` = 3 (fixed64),
//!   `duration_nano` = 4, `period_type` = 5, `period` = 6 (int64).
//! - `Sample`: `stack_index` = 1, `attribute_indices` = 2 (packed int32),
//!   `link_index` = 3 (0: none), `values` = 4 (packed int64); its
//!   identity is (stack, set of attributes, link): samples of one identity
//!   should be one.
//! - `Stack`: `location_indices` = 1 (packed, leaf first); `Location`:
//!   `mapping_index` = 1, `lines` = 3 (`Line`: `function_index` = 1);
//!   `Function`: `name_strindex` = 1; `Link`: `trace_id` = 1, `span_id` =
//!   2; `KeyValueAndUnit`: `key_strindex` = 1, `value` = 2 (`AnyValue`).
//!
//! What the spec leaves open, and what is done here: one `Profile` per
//! sample type of the pprof, every type present even when it has no sample
//! (a receiver sees every type each period); the pprof's period and period
//! type only on the types it names as sampled by the clock (`periodic`),
//! none on event counts; a frame name is a `Function` with only its name
//! (managed code has no mappings, addresses or file names here) and one
//! `Location` with one `Line`; attribute values are plain `string_value`s
//! (not the newer `string_value_strindex`, which older receivers ignore);
//! samples keep one aggregated value (no timestamps); no `profile_id`. The
//! pprof labels `trace_id` (32 hex digits) and `span_id` (16) of a sample
//! taken inside a span are its `Link` (one per pair, in `link_table`), not
//! attributes; a sample outside spans has `link_index` 0.

use alloc::string::String;
use alloc::vec::Vec;
use std::collections::HashMap;

use super::pprof::{field_bytes, field_packed, field_varint, Pprof};

/// A resource attribute's value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AttributeValue {
    /// `AnyValue.string_value`.
    Str(String),
    /// `AnyValue.int_value`.
    Int(i64),
}

/// The strings of a request: index 0 is `""`, each string once.
struct Strings {
    table: Vec<String>,
    ids: HashMap<String, i32>,
}

impl Strings {
    fn new() -> Strings {
        let mut ids = HashMap::new();
        ids.insert(String::new(), 0);
        Strings {
            table: alloc::vec![String::new()],
            ids,
        }
    }

    fn id(&mut self, text: &str) -> i32 {
        if let Some(&id) = self.ids.get(text) {
            return id;
        }
        let id = self.table.len() as i32;
        self.table.push(String::from(text));
        self.ids.insert(String::from(text), id);
        id
    }
}

/// A table whose entry 0 is the zero value, each entry once (by its key).
struct Table<K> {
    ids: HashMap<K, i32>,
    entries: Vec<Vec<u8>>,
}

impl<K: core::hash::Hash + Eq> Table<K> {
    fn new(zero: Vec<u8>) -> Table<K> {
        Table {
            ids: HashMap::new(),
            entries: alloc::vec![zero],
        }
    }

    /// The index of `key`'s entry, made by `encode` the first time.
    fn id(&mut self, key: K, encode: impl FnOnce() -> Vec<u8>) -> i32 {
        if let Some(&id) = self.ids.get(&key) {
            return id;
        }
        let id = self.entries.len() as i32;
        self.entries.push(encode());
        self.ids.insert(key, id);
        id
    }
}

fn indices(values: &[i32]) -> impl Iterator<Item = u64> + '_ {
    values.iter().map(|&v| v as u64)
}

fn value_type(kind: i32, unit: i32) -> Vec<u8> {
    let mut out = Vec::new();
    field_varint(&mut out, 1, kind as u64);
    field_varint(&mut out, 2, unit as u64);
    out
}

fn any_value(value: &AttributeValue) -> Vec<u8> {
    let mut out = Vec::new();
    match value {
        // Written even when empty: a present string, not an unset value.
        AttributeValue::Str(text) => field_bytes(&mut out, 1, text.as_bytes()),
        AttributeValue::Int(n) => {
            super::pprof::varint(&mut out, 3 << 3);
            super::pprof::varint(&mut out, *n as u64);
        }
    }
    out
}

/// A sample's identity: (stack, sorted attributes, link).
type Identity = (i32, Vec<i32>, i32);

/// One profile's samples: identity to the summed value.
type Samples = Vec<(Identity, i64)>;

/// A `Link`'s ids from W3C hex: a trace id of 32 digits, not all zeros,
/// and a span id of 16.
fn link_ids(trace: &str, span: &str) -> Option<([u8; 16], [u8; 8])> {
    fn hex<const N: usize>(text: &str) -> Option<[u8; N]> {
        let bytes = text.as_bytes();
        if bytes.len() != 2 * N {
            return None;
        }
        let mut out = [0u8; N];
        for (i, pair) in bytes.chunks(2).enumerate() {
            let pair = core::str::from_utf8(pair).ok()?;
            out[i] = u8::from_str_radix(pair, 16).ok()?;
        }
        Some(out)
    }
    let trace = hex::<16>(trace)?;
    (trace != [0; 16]).then_some(())?;
    Some((trace, hex::<8>(span)?))
}

impl Pprof {
    /// The profile as one OTLP `ExportProfilesServiceRequest`: one
    /// resource with `resource` attributes, one scope (`scope_name`,
    /// `scope_version`), one `Profile` per sample type with the samples
    /// whose value of that type is not zero, pprof labels as sample
    /// attributes, and one dictionary. `periodic` names the sample types
    /// the pprof's period applies to.
    pub fn to_otlp(
        &self,
        resource: &[(String, AttributeValue)],
        scope_name: &str,
        scope_version: &str,
        periodic: &dyn Fn(&str) -> bool,
    ) -> Vec<u8> {
        let mut strings = Strings::new();
        let mut functions: Table<i32> = Table::new(Vec::new());
        let mut locations: Table<i32> = Table::new(Vec::new());
        let mut stacks: Table<Vec<i32>> = Table::new(Vec::new());
        let mut attributes: Table<(i32, i64)> = Table::new(Vec::new());
        // The zero link with ids of their full widths (the spec's choice).
        let mut zero_link = Vec::new();
        field_bytes(&mut zero_link, 1, &[0; 16]);
        field_bytes(&mut zero_link, 2, &[0; 8]);
        let mut links: Table<([u8; 16], [u8; 8])> = Table::new(zero_link);
        let text = |id: i64| self.strings.get(id as usize).map_or("", String::as_str);
        // Location index of each pprof function id (0: not yet made).
        let mut location_of = alloc::vec![0i32; self.function_names.len() + 1];
        let mut per_type: Vec<Samples> = alloc::vec![Vec::new(); self.sample_types.len()];
        let mut by_identity: Vec<HashMap<Identity, usize>> =
            alloc::vec![HashMap::new(); self.sample_types.len()];
        let mut stack = Vec::new();
        self.for_each_sample(|ids, values, labels| {
            // A sample of zeros is in no profile: nothing of it is interned.
            if values.iter().all(|&v| v == 0) {
                return;
            }
            stack.clear();
            for &id in ids {
                let Some(slot) = location_of.get_mut(id as usize) else {
                    continue;
                };
                if *slot == 0 {
                    let name = self.function_names[id as usize - 1];
                    let name_index = strings.id(text(name));
                    let function = functions.id(name_index, || {
                        let mut f = Vec::new();
                        field_varint(&mut f, 1, name_index as u64);
                        f
                    });
                    *slot = locations.id(function, || {
                        let mut line = Vec::new();
                        field_varint(&mut line, 1, function as u64);
                        let mut location = Vec::new();
                        field_bytes(&mut location, 3, &line);
                        location
                    });
                }
                stack.push(*slot);
            }
            let stack_index = if stack.is_empty() {
                0
            } else {
                stacks.id(stack.clone(), || {
                    let mut s = Vec::new();
                    field_packed(&mut s, 1, indices(&stack));
                    s
                })
            };
            let label = |name: &str| {
                labels
                    .iter()
                    .find(|&&(key, _)| text(key) == name)
                    .map(|&(_, value)| text(value))
            };
            let link = match (label("trace_id"), label("span_id")) {
                (Some(trace), Some(span)) => link_ids(trace, span),
                _ => None,
            };
            let link_index = link.map_or(0, |ids| {
                links.id(ids, || {
                    let mut l = Vec::new();
                    field_bytes(&mut l, 1, &ids.0);
                    field_bytes(&mut l, 2, &ids.1);
                    l
                })
            });
            let mut attrs: Vec<i32> = labels
                .iter()
                .filter(|&&(key, _)| link.is_none() || !matches!(text(key), "trace_id" | "span_id"))
                .map(|&(key, value)| {
                    let key_index = strings.id(text(key));
                    attributes.id((key_index, value), || {
                        let mut a = Vec::new();
                        field_varint(&mut a, 1, key_index as u64);
                        let value = AttributeValue::Str(String::from(text(value)));
                        field_bytes(&mut a, 2, &any_value(&value));
                        a
                    })
                })
                .collect();
            attrs.sort_unstable();
            attrs.dedup();
            for (kind, &value) in values.iter().enumerate().take(per_type.len()) {
                if value == 0 {
                    continue;
                }
                let identity = (stack_index, attrs.clone(), link_index);
                match by_identity[kind].get(&identity) {
                    Some(&at) => {
                        let sum = &mut per_type[kind][at].1;
                        *sum = sum.saturating_add(value);
                    }
                    None => {
                        by_identity[kind].insert(identity.clone(), per_type[kind].len());
                        per_type[kind].push((identity, value));
                    }
                }
            }
        });
        let mut profiles = Vec::new();
        let period_type = self
            .period_type
            .map(|(kind, unit)| (strings.id(text(kind)), strings.id(text(unit))));
        for (kind, samples) in per_type.iter().enumerate() {
            let (type_id, unit_id) = self.sample_types[kind];
            let type_name = text(type_id);
            let mut profile = Vec::new();
            let sample_type = value_type(strings.id(type_name), strings.id(text(unit_id)));
            field_bytes(&mut profile, 1, &sample_type);
            for ((stack_index, attrs, link), value) in samples {
                let mut sample = Vec::new();
                field_varint(&mut sample, 1, *stack_index as u64);
                field_packed(&mut sample, 2, indices(attrs));
                if *link != 0 {
                    field_varint(&mut sample, 3, *link as u64);
                }
                field_packed(&mut sample, 4, core::iter::once(*value as u64));
                field_bytes(&mut profile, 2, &sample);
            }
            // fixed64: wire type 1, eight bytes little-endian.
            super::pprof::varint(&mut profile, 3 << 3 | 1);
            profile.extend_from_slice(&(self.time_nanos as u64).to_le_bytes());
            field_varint(&mut profile, 4, self.duration_nanos as u64);
            if let Some((kind, unit)) = period_type.filter(|_| periodic(type_name)) {
                field_bytes(&mut profile, 5, &value_type(kind, unit));
                field_varint(&mut profile, 6, self.period as u64);
            }
            profiles.push(profile);
        }

        let mut scope = Vec::new();
        field_bytes(&mut scope, 1, scope_name.as_bytes());
        field_bytes(&mut scope, 2, scope_version.as_bytes());
        let mut scope_profiles = Vec::new();
        field_bytes(&mut scope_profiles, 1, &scope);
        for profile in &profiles {
            field_bytes(&mut scope_profiles, 2, profile);
        }
        let mut resource_message = Vec::new();
        for (key, value) in resource {
            let mut pair = Vec::new();
            field_bytes(&mut pair, 1, key.as_bytes());
            field_bytes(&mut pair, 2, &any_value(value));
            field_bytes(&mut resource_message, 1, &pair);
        }
        let mut resource_profiles = Vec::new();
        field_bytes(&mut resource_profiles, 1, &resource_message);
        field_bytes(&mut resource_profiles, 2, &scope_profiles);

        let mut dictionary = Vec::new();
        // No mappings: the zero one alone.
        field_bytes(&mut dictionary, 1, &[]);
        for location in &locations.entries {
            field_bytes(&mut dictionary, 2, location);
        }
        for function in &functions.entries {
            field_bytes(&mut dictionary, 3, function);
        }
        for link in &links.entries {
            field_bytes(&mut dictionary, 4, link);
        }
        for text in &strings.table {
            field_bytes(&mut dictionary, 5, text.as_bytes());
        }
        for attribute in &attributes.entries {
            field_bytes(&mut dictionary, 6, attribute);
        }
        for stack in &stacks.entries {
            field_bytes(&mut dictionary, 7, stack);
        }

        let mut request = Vec::new();
        field_bytes(&mut request, 1, &resource_profiles);
        field_bytes(&mut request, 2, &dictionary);
        request
    }
}
