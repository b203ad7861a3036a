//! Compile-fail tests: misuse of the macro and the exporter must not build,
//! and the error must point at the mistake. Each case's expected compiler
//! output is committed beside it in `ui-tests/*.stderr`; regenerate after an
//! intended change with `TRYBUILD=overwrite cargo test --test ui` and review
//! the diff.

#[test]
fn misuse_is_a_compile_error() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("ui-tests/*.rs");
}
