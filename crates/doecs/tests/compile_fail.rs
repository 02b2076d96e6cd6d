//! API misuse that must not compile (trybuild). The expected compiler output
//! is in `tests/ui/*.stderr`; regenerate it with `TRYBUILD=overwrite`.

#[test]
#[cfg_attr(miri, ignore = "trybuild runs the compiler")]
fn misuse_does_not_compile() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
}
