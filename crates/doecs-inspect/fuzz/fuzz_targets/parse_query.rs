//! Any text given to the query language's parser gives a query or a typed
//! error at a column inside the text (or just past its end): never a
//! panic or a hang. A query that parses prints as text that parses back to
//! the same tree. The same checks run on stable Rust over the corpus and
//! the regressions in `crates/doecs-inspect/tests/qlang_props.rs`.
#![no_main]

use doecs_inspect::qlang::parse;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let chars = text.chars().count();
    match parse(&text) {
        Ok(q) => {
            let printed = q.to_string();
            let again = parse(&printed).expect("printed queries parse");
            assert_eq!(again.without_columns(), q.without_columns());
        }
        Err(e) => assert!(e.column() >= 1 && e.column() <= chars + 1, "{e}"),
    }
});
