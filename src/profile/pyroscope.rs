//! Pyroscope's push API request (`push.v1.PushRequest`), encoded by hand.
//!
//! The facts, from grafana/pyroscope `api/push/v1/push.proto` and
//! `api/types/v1/types.proto` (commit 3fe6a457a): `PushRequest`:
//! `series` = 1 (repeated `RawProfileSeries`); `RawProfileSeries`:
//! `labels` = 1 (repeated `types.v1.LabelPair`: `name` = 1, `value` = 2),
//! `samples` = 2 (repeated `RawSample`: `raw_profile` = 1, bytes, a pprof,
//! gzipped or not; `ID` = 2, a string left empty here). The response,
//! `PushResponse`, has no field.

use alloc::vec::Vec;

use super::pprof::field_bytes;

/// A `PushRequest` of one series per `(name, pprof)` of `series`: labels
/// `__name__` (the name), then `labels` as given (`service_name`, ...), and
/// the pprof as its one sample.
pub fn push_request(series: &[(&str, Vec<u8>)], labels: &[(&str, &str)]) -> Vec<u8> {
    let mut request = Vec::new();
    for (name, pprof) in series {
        let mut one = Vec::new();
        let all = core::iter::once(("__name__", *name)).chain(labels.iter().copied());
        for (key, value) in all {
            let mut pair = Vec::new();
            field_bytes(&mut pair, 1, key.as_bytes());
            field_bytes(&mut pair, 2, value.as_bytes());
            field_bytes(&mut one, 1, &pair);
        }
        let mut sample = Vec::new();
        field_bytes(&mut sample, 1, pprof);
        field_bytes(&mut one, 2, &sample);
        field_bytes(&mut request, 1, &one);
    }
    request
}
