//! A hostile peer: two ggrs sessions on an in-memory network, and
//! messages that look like they come from B but are built to break A.

mod hostile;

use doecs_ggrs::guard::Refusal;
use hostile::*;
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::TestRunner;
use std::collections::BTreeMap;

/// Not a check: lists where unguarded ggrs panics, with the first
/// message found for each place. `cargo test -p doecs-ggrs --test
/// hostile_peer -- --ignored --nocapture`.
#[test]
#[ignore]
fn explore_unguarded_panics() {
    let cases: usize = std::env::var("HOSTILE_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2000);
    let mut runner = TestRunner::deterministic();
    let strategy = (
        prop_oneof![Just(0usize), Just(30)],
        proptest::collection::vec(hostile(false), 1..6),
    );
    let mut found: BTreeMap<String, (usize, Vec<String>)> = BTreeMap::new();
    for _ in 0..cases {
        let (warm, s) = strategy.new_tree(&mut runner).unwrap().current();
        if let Ok(path) = std::env::var("HOSTILE_TRACE") {
            std::fs::write(path, format!("{s:#?}")).unwrap();
        }
        let out = storm(false, warm, &s);
        if let Some(m) = out.too_big.first() {
            let site = "bitfield-rle decode: allocation without bound".to_string();
            found
                .entry(site)
                .or_insert_with(|| (0, vec![short(&WMsg::from_ggrs(m))]))
                .0 += 1;
        }
        if let Some(site) = out.panic {
            let e = found.entry(site).or_insert_with(|| {
                let mut msgs = vec![format!("after {warm} honest frames:")];
                msgs.extend(out.injected.iter().map(|m| short(&WMsg::from_ggrs(m))));
                (0, msgs)
            });
            e.0 += 1;
        }
    }
    for (site, (n, msgs)) in &found {
        println!("{n:5} x {site}");
        for m in msgs {
            println!("        {m}");
        }
    }
}

/// A message's debug form with long byte strings cut short.
fn short(m: &WMsg) -> String {
    let mut m = m.clone();
    let mut note = String::new();
    if let WBody::Input(i) = &mut m.body {
        if i.bytes.len() > 24 {
            note = format!(" ({} bytes)", i.bytes.len());
            i.bytes.truncate(24);
        }
    }
    format!("{m:?}{note}")
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 128,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// Through the guard, no storm makes A panic, and afterwards both
    /// sides keep advancing (B unless A was told B disconnected: a
    /// spoofed disconnect request is indistinguishable from a real one).
    #[test]
    fn a_guarded_session_survives_hostile_peers(
        warm in prop_oneof![Just(0usize), Just(30)],
        msgs in proptest::collection::vec(hostile(true), 1..6),
    ) {
        let mut out = storm(true, warm, &msgs);
        prop_assert!(out.panic.is_none(), "{:?}", out.panic);
        let (a, b) = (out.pair.a.frame(), out.pair.b.frame());
        let panic = panic_site(|| out.pair.play(40));
        prop_assert!(panic.is_none(), "{:?}", panic);
        prop_assert!(out.pair.a.frame() >= a + 30, "A stuck at {}", out.pair.a.frame());
        if !out.pair.a.disconnected {
            prop_assert!(out.pair.b.frame() >= b + 30, "B stuck at {}", out.pair.b.frame());
        }
    }
}

/// An `Input` as B would send it after `warm` honest frames had there
/// been none (statuses blank), from `start` with `bytes`.
fn input(magic: u16, disconnect: bool, start: i32, bytes: Vec<u8>) -> WMsg {
    WMsg {
        magic,
        body: WBody::Input(WInput {
            peer_connect_status: vec![
                WConn {
                    disconnected: false,
                    last_frame: -1,
                };
                2
            ],
            disconnect_requested: disconnect,
            start_frame: start,
            ack_frame: -1,
            bytes,
        }),
    }
}

/// `n` one-byte inputs, run-length encoded as one literal run.
fn inputs(n: usize) -> Vec<u8> {
    let mut raw = Vec::new();
    for k in 0..n {
        raw.extend_from_slice(&[1, 0, k as u8]);
    }
    let mut v = Vec::new();
    varint((raw.len() as u64) << 1, &mut v);
    v.extend(raw);
    v
}

/// A message, given B's magic.
type MsgFn = fn(u16) -> WMsg;

/// The crash cases the unguarded harness found, each with the message
/// that reaches it. A receives it right after synchronizing, before any
/// input from B.
fn crash_cases() -> Vec<(&'static str, MsgFn)> {
    vec![
        ("input_queue.rs:221", |m| input(m, false, 0, inputs(200))),
        ("protocol.rs:732", |m| {
            input(m, false, i32::MAX - 1, inputs(3))
        }),
        ("varinteger-1.0.6/src/lib.rs:54", |m| {
            input(m, false, 0, vec![0x80])
        }),
        ("varinteger-1.0.6/src/lib.rs:56", |m| {
            input(
                m,
                false,
                0,
                vec![0xd7, 0xb6, 0xcd, 0xdd, 0xf4, 0xbb, 0x99, 0xfb, 0xd9, 0xbb],
            )
        }),
        ("sync_layer.rs:232", |m| input(m, true, 13, vec![])),
    ]
}

/// A gets `msg(B's magic)` through the guard: no panic, the message is
/// refused for `why`, and both sides play on.
fn refused(msg: MsgFn, why: Refusal) {
    let mut pair = Pair::running(true, 0);
    let m = msg(pair.magic_of_b());
    pair.inject(m.to_ggrs());
    let panic = panic_site(|| pair.play(40));
    assert_eq!(panic, None);
    let counts = pair.stats.as_ref().unwrap().get();
    assert_eq!(counts.first_refusal, Some(why));
    assert!(pair.a.frame() >= 30 && pair.b.frame() >= 30);
}

#[test]
fn two_hundred_inputs_at_once_are_refused() {
    refused(
        crash_cases()[0].1,
        Refusal::Frame {
            field: "last input frame",
            frame: 199,
            max: 63,
        },
    );
}

#[test]
fn a_start_frame_near_i32_max_is_refused() {
    refused(
        crash_cases()[1].1,
        Refusal::Frame {
            field: "last input frame",
            frame: i64::from(i32::MAX) + 1,
            max: 63,
        },
    );
}

#[test]
fn a_truncated_run_length_varint_is_refused() {
    refused(crash_cases()[2].1, Refusal::InputBytes("truncated varint"));
}

#[test]
fn an_overflowing_run_length_varint_is_refused() {
    refused(
        crash_cases()[3].1,
        Refusal::InputBytes("varint overflows u64"),
    );
}

#[test]
fn a_disconnect_before_our_first_input_is_refused() {
    refused(crash_cases()[4].1, Refusal::EarlyDisconnect);
}

/// Not a panic but an abort: eight bytes that declare a 5.5 GB run make
/// bitfield-rle allocate it. Only ever sent through the guard.
#[test]
fn a_run_declaring_gigabytes_is_refused() {
    refused(
        |m| input(m, false, 0, vec![233, 213, 220, 142, 82]),
        Refusal::InputBytes("decodes to too many bytes"),
    );
}

/// Not a check: each crash case does panic ggrs unguarded, where
/// `crash_cases` says (fails once ggrs fixes one; then drop its guard
/// check only if the fix covers it).
#[test]
#[ignore]
fn unguarded_ggrs_panics_on_each_crash_case() {
    for (site, msg) in crash_cases() {
        let pair = Pair::running(false, 0);
        let m = msg(pair.magic_of_b());
        let (panic, _) = one_after(pair, &m);
        let panic = panic.unwrap_or_default();
        assert!(panic.contains(site), "{site}: {panic}");
    }
}
