//! A hostile peer: two ggrs sessions on an in-memory network, and
//! messages that look like they come from B but are built to break A;
//! then a spectator of A's, and messages that look like they come from A
//! but are built to break the spectator.

mod hostile;

use doecs_ggrs::guard::Refusal;
use ggrs::Message;
use hostile::spectator::*;
use hostile::*;
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::TestRunner;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// Not a check: lists where unguarded ggrs panics, with the first
/// message found for each place. `cargo test -p doecs-ggrs --test
/// hostile_peer -- --ignored --nocapture`.
#[test]
#[ignore]
fn explore_unguarded_panics() {
    explore(|warm, s| {
        let out = storm(false, warm, s);
        (out.panic, out.too_big, out.injected)
    });
}

/// The same for a spectator of A's, fed messages as from A.
#[test]
#[ignore]
fn explore_unguarded_spectator_panics() {
    explore(|warm, s| {
        let out = spectator_storm(false, warm, s);
        (out.panic, out.too_big, out.injected)
    });
}

/// What one storm came to: where it panicked, the messages held back
/// as unbounded allocations, the messages injected.
type Found = (Option<String>, Vec<Message>, Vec<Message>);

/// Runs `HOSTILE_CASES` (2000) storms through `run` and prints each place
/// that panicked, with how often and the first storm that got there.
fn explore(run: impl Fn(usize, &[Hostile]) -> Found) {
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
        let (panic, too_big, injected) = run(warm, &s);
        if let Some(m) = too_big.first() {
            let site = "bitfield-rle decode: allocation without bound".to_string();
            found
                .entry(site)
                .or_insert_with(|| (0, vec![short(&WMsg::from_ggrs(m))]))
                .0 += 1;
        }
        if let Some(site) = panic {
            let e = found.entry(site).or_insert_with(|| {
                let mut msgs = vec![format!("after {warm} honest frames:")];
                msgs.extend(injected.iter().map(|m| short(&WMsg::from_ggrs(m))));
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
        let (a, b) = (out.sessions.a.frame(), out.sessions.b.frame());
        let panic = panic_site(|| out.sessions.play(40));
        prop_assert!(panic.is_none(), "{:?}", panic);
        prop_assert!(out.sessions.a.frame() >= a + 30, "A stuck at {}", out.sessions.a.frame());
        if !out.sessions.a.disconnected {
            prop_assert!(out.sessions.b.frame() >= b + 30, "B stuck at {}", out.sessions.b.frame());
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
        ("protocol.rs:303", |m| pong(m, 0)),
    ]
}

/// A quality reply echoing `pong`.
fn pong(magic: u16, pong: u128) -> WMsg {
    WMsg {
        magic,
        body: WBody::QualityReply { pong },
    }
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

/// A pong of 0 makes ggrs's round trip the time since 1970, which
/// overflows when scaled to frames.
#[test]
fn a_pong_from_long_ago_is_refused() {
    refused(crash_cases()[5].1, Refusal::Pong { pong: 0 });
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

// ---- a spectator fed messages as from its host ----

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 32,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// Through the guard, no storm as from its host makes a spectator
    /// panic or its step fail, and afterwards it keeps advancing on the
    /// host's inputs. Excepted: a storm that handed it inputs for frames
    /// the host had not confirmed (well formed, in range, contiguous: the
    /// guard cannot tell them from the host's own). The spectator acks
    /// them, the host drops its own inputs for those frames, and once
    /// they run more than ggrs's retention past the host the spectator
    /// can decode nothing more, or, 60 past its frame, ggrs fails it.
    #[test]
    fn a_guarded_spectator_survives_hostile_hosts(
        warm in prop_oneof![Just(0usize), Just(30)],
        msgs in proptest::collection::vec(hostile(true), 1..6),
    ) {
        let mut out = spectator_storm(true, warm, &msgs);
        prop_assert!(out.panic.is_none(), "{:?}", out.panic);
        let before = out.sessions.s.frame();
        let panic = panic_site(|| out.sessions.play(40));
        prop_assert!(panic.is_none(), "{:?}", panic);
        let trio = &out.sessions;
        if !trio.forged_ahead {
            prop_assert!(trio.s.errors.is_empty(), "{:?}", trio.s.errors);
            prop_assert!(trio.s.frame() >= before + 30, "S stuck at {}", trio.s.frame());
        }
    }
}

/// `n` inputs of two one-byte players, run-length encoded as one literal
/// run, as a host sends a spectator.
fn pair_inputs(n: usize) -> Vec<u8> {
    let mut raw = Vec::new();
    for k in 0..n {
        raw.extend_from_slice(&[2, 0, k as u8, k as u8]);
    }
    let mut v = Vec::new();
    varint((raw.len() as u64) << 1, &mut v);
    v.extend(raw);
    v
}

/// The cases where unguarded ggrs fails a spectator, each with the
/// message that does it, received after `warm` honest frames: a panic
/// where the site names a line, else the spectator stops (a step error,
/// or no frame advanced at all).
fn spectator_crash_cases() -> Vec<(&'static str, usize, MsgFn)> {
    vec![
        ("protocol.rs:795", 0, |m| WMsg {
            magic: m,
            body: WBody::ChecksumReport {
                checksum: 1,
                frame: 10,
            },
        }),
        ("protocol.rs:303", 30, |m| pong(m, 0)),
        ("protocol.rs:732", 0, |m| {
            input(m, false, i32::MAX - 1, pair_inputs(3))
        }),
        ("varinteger-1.0.6/src/lib.rs:54", 0, |m| {
            input(m, false, 0, vec![0x80])
        }),
        ("stops: a first input past frame 0", 0, |m| {
            input(m, false, 5, pair_inputs(3))
        }),
        ("stops: a disconnect request", 30, |m| {
            input(m, true, 0, vec![])
        }),
    ]
}

/// S gets `msg(A's magic)` after `warm` honest frames through the guard:
/// no panic, the message is refused for `why`, and S plays on without an
/// error, on A's and B's real inputs.
fn spectator_refuses(warm: usize, msg: MsgFn, why: Refusal) {
    let mut trio = Trio::running(true, warm);
    let before = trio.s.frame();
    trio.inject(msg(trio.magic_of_a()).to_ggrs());
    let panic = panic_site(|| trio.play(40));
    assert_eq!(panic, None);
    assert_eq!(trio.stats.as_ref().unwrap().get().first_refusal, Some(why));
    assert!(trio.s.errors.is_empty(), "{:?}", trio.s.errors);
    assert!(trio.s.frame() >= before + 30, "S at {}", trio.s.frame());
    assert_eq!(trio.s.seen().wrong, 0);
}

#[test]
fn a_checksum_report_to_a_spectator_is_refused() {
    let (_, warm, msg) = spectator_crash_cases()[0];
    spectator_refuses(warm, msg, Refusal::NotForSpectators("checksum report"));
}

#[test]
fn a_pong_from_long_ago_to_a_spectator_is_refused() {
    let (_, warm, msg) = spectator_crash_cases()[1];
    spectator_refuses(warm, msg, Refusal::Pong { pong: 0 });
}

#[test]
fn a_spectators_start_frame_near_i32_max_is_refused() {
    let (_, warm, msg) = spectator_crash_cases()[2];
    spectator_refuses(
        warm,
        msg,
        Refusal::Frame {
            field: "start frame",
            frame: i64::from(i32::MAX - 1),
            max: 0,
        },
    );
}

#[test]
fn a_truncated_varint_to_a_spectator_is_refused() {
    let (_, warm, msg) = spectator_crash_cases()[3];
    spectator_refuses(warm, msg, Refusal::InputBytes("truncated varint"));
}

#[test]
fn a_spectators_first_input_past_frame_0_is_refused() {
    let (_, warm, msg) = spectator_crash_cases()[4];
    spectator_refuses(
        warm,
        msg,
        Refusal::Frame {
            field: "start frame",
            frame: 5,
            max: 0,
        },
    );
}

#[test]
fn a_disconnect_request_to_a_spectator_is_refused() {
    let (_, warm, msg) = spectator_crash_cases()[5];
    spectator_refuses(warm, msg, Refusal::NotForSpectators("disconnect request"));
}

/// Not a check: each spectator case does fail unguarded ggrs, as
/// `spectator_crash_cases` says.
#[test]
#[ignore]
fn unguarded_ggrs_fails_a_spectator_on_each_crash_case() {
    for (site, warm, msg) in spectator_crash_cases() {
        let trio = Trio::running(false, warm);
        let before = trio.s.frame();
        let m = msg(trio.magic_of_a());
        let (panic, trio) = spectator_after(trio, &m);
        if site.starts_with("stops") {
            assert_eq!(panic, None, "{site}");
            let stopped = !trio.s.errors.is_empty() || trio.s.frame() == before;
            assert!(stopped, "{site}: S at {} from {before}", trio.s.frame());
        } else {
            let panic = panic.unwrap_or_default();
            assert!(panic.contains(site), "{site}: {panic}");
        }
    }
}

/// Honest traffic passes the spectator's guard, and S plays exactly what
/// A and B played.
#[test]
fn a_guarded_spectator_follows_an_honest_host() {
    let trio = Trio::running(true, 100);
    let counts = trio.stats.as_ref().unwrap().get();
    assert_eq!(counts.refused, 0, "{:?}", counts.first_refusal);
    assert!(counts.passed >= 90, "{counts:?}");
    assert!(trio.s.frame() >= 90, "S at {}", trio.s.frame());
    let seen = trio.s.seen();
    assert_eq!(seen.frames as i32, trio.s.frame() + 1);
    assert_eq!((seen.wrong, seen.disconnected), (0, 0));
    assert!(trio.s.errors.is_empty(), "{:?}", trio.s.errors);
}

/// B goes silent; A drops it and plays on alone, telling S that B is
/// disconnected in every input it sends. S's guard passes those inputs
/// and S follows A, B's inputs marked disconnected.
#[test]
fn a_guarded_spectator_follows_a_host_whose_peer_left() {
    // S is heard from at least every 200 ms (keep-alives) while A waits.
    let mut trio = Trio::synced(true, Duration::from_millis(400));
    trio.play(20);
    let start = Instant::now();
    while !trio.a.disconnected {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "A never dropped B"
        );
        trio.play_without_b(1);
        std::thread::sleep(Duration::from_millis(2));
    }
    let before = trio.s.frame();
    trio.play_without_b(60);
    let counts = trio.stats.as_ref().unwrap().get();
    let s = &trio.s;
    assert!(
        s.frame() >= before + 50,
        "S at {} from {before}: {counts:?}",
        s.frame()
    );
    assert_eq!(counts.refused, 0, "{:?}", counts.first_refusal);
    assert!(s.errors.is_empty(), "{:?}", s.errors);
    let seen = trio.s.seen();
    assert!(seen.disconnected >= 50, "{seen:?}");
    assert_eq!(seen.wrong, 0);
}

/// What the guard cannot stop: a forged run of inputs right after the
/// last frame S acknowledged, well formed and in range, passes as if A had
/// sent it. S plays it and acks it; A, told those frames arrived, drops
/// its own, and its next inputs build on a frame 40 behind S's, which S
/// no longer keeps: S stops where the forged run ends while A plays on.
/// (The exception in `a_guarded_spectator_survives_hostile_hosts`.)
#[test]
fn a_forged_run_ahead_of_the_host_passes_and_stops_the_spectator() {
    let mut trio = Trio::running(true, 30);
    let s = &trio.s.session;
    let next = s.current_frame() + s.frames_behind_host() as i32 + 1;
    trio.inject(input(trio.magic_of_a(), false, next, pair_inputs(40)).to_ggrs());
    trio.play(60);
    let counts = trio.stats.as_ref().unwrap().get();
    assert_eq!(counts.refused, 0, "{:?}", counts.first_refusal);
    assert!(trio.forged_ahead);
    assert!(trio.s.seen().wrong > 0);
    assert_eq!(trio.s.frame(), next + 39);
    assert!(trio.a.frame() >= next + 60, "A at {}", trio.a.frame());
}
