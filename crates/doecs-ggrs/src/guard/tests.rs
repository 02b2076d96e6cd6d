use super::*;
use ggrs::{
    Config, DesyncDetection, GgrsRequest, PlayerType, PredictRepeatLast, SessionBuilder,
    SessionState,
};
use std::collections::VecDeque;

struct Cfg;
impl Config for Cfg {
    type Input = u16;
    type InputPredictor = PredictRepeatLast;
    type State = u64;
    type Address = u8;
}

type Inboxes = Arc<Mutex<[VecDeque<(u8, Message)>; 2]>>;

/// An in-memory socket that also keeps every message it sends.
struct Mem {
    me: u8,
    net: Inboxes,
    sent: Arc<Mutex<Vec<Message>>>,
}

impl NonBlockingSocket<u8> for Mem {
    fn send_to(&mut self, msg: &Message, addr: &u8) {
        self.sent.lock().unwrap().push(msg.clone());
        self.net.lock().unwrap()[usize::from(*addr)].push_back((self.me, msg.clone()));
    }
    fn receive_all_messages(&mut self) -> Vec<(u8, Message)> {
        self.net.lock().unwrap()[usize::from(self.me)]
            .drain(..)
            .collect()
    }
}

/// Every message a guarded pair sends in `frames` frames, and the
/// guards' counts.
fn traffic(frames: i32) -> (Vec<Message>, Vec<GuardCounts>) {
    let net = Inboxes::default();
    let sent = Arc::new(Mutex::new(Vec::new()));
    let mut stats = Vec::new();
    let mut sessions: Vec<_> = (0..2u8)
        .map(|me| {
            let guard = GuardedSocket::new(
                Mem {
                    me,
                    net: net.clone(),
                    sent: sent.clone(),
                },
                2,
            );
            stats.push(guard.stats());
            SessionBuilder::<Cfg>::new()
                .with_desync_detection_mode(DesyncDetection::On { interval: 5 })
                .with_input_delay(usize::from(me) * 2)
                .add_player(PlayerType::Local, usize::from(me))
                .unwrap()
                .add_player(PlayerType::Remote(1 - me), usize::from(1 - me))
                .unwrap()
                .start_p2p_session(guard)
                .unwrap()
        })
        .collect();
    let mut states = [0u64; 2];
    for round in 0..(frames * 4) {
        if round == frames {
            // Idle past ggrs's 200 ms quality-report interval once.
            std::thread::sleep(std::time::Duration::from_millis(250));
        }
        for (i, s) in sessions.iter_mut().enumerate() {
            s.poll_remote_clients();
            if s.current_state() != SessionState::Running || s.current_frame() >= frames {
                continue;
            }
            // Vary the inputs so the encoder has something to compress.
            let input = (s.current_frame() as u16 / 3).wrapping_mul(7919) ^ round as u16;
            s.add_local_input(i, input).unwrap();
            let Ok(requests) = s.advance_frame() else {
                continue;
            };
            for r in requests {
                match r {
                    GgrsRequest::SaveGameState { cell, frame } => {
                        cell.save(frame, Some(states[i]), Some(u128::from(states[i])))
                    }
                    GgrsRequest::LoadGameState { cell, .. } => {
                        states[i] = cell.load().unwrap_or_default()
                    }
                    GgrsRequest::AdvanceFrame { inputs } => {
                        for (x, _) in inputs {
                            states[i] = states[i].wrapping_mul(31).wrapping_add(u64::from(x));
                        }
                    }
                }
            }
        }
    }
    assert!(sessions.iter().all(|s| s.current_frame() >= frames));
    let sent = sent.lock().unwrap().clone();
    (sent, stats.iter().map(GuardStats::get).collect())
}

#[test]
fn the_mirror_encodes_real_traffic_byte_for_byte() {
    let (sent, counts) = traffic(300);
    let mut kinds = std::collections::HashSet::new();
    for msg in &sent {
        let legacy = bincode::serialize(msg).unwrap();
        let mirror = wire::decode(msg).unwrap();
        assert_eq!(wire::encode(&mirror), legacy, "{mirror:?}");
        let legacy_mirror: wire::Msg = bincode::deserialize(&legacy).unwrap();
        assert_eq!(legacy_mirror, mirror);
        let back: Message = bincode::deserialize(&wire::encode(&mirror)).unwrap();
        assert_eq!(&back, msg);
        if let wire::Body::Input(i) = &mirror.body {
            assert!(wire::count_inputs(&i.bytes).unwrap() >= 1);
        }
        kinds.insert(std::mem::discriminant(&mirror.body));
    }
    // Every kind but the keep-alive (sent only when nothing else is).
    assert_eq!(kinds.len(), 7, "only {} message kinds", kinds.len());
    // Honest traffic is never refused.
    for c in counts {
        assert_eq!(c.refused, 0, "{:?}", c.first_refusal);
        assert!(c.passed > 300);
    }
}

#[test]
fn malformed_run_lengths_are_refused_without_allocating() {
    for (bytes, why) in [
        (&[0x80][..], "truncated varint"),
        (&[0x81; 11][..], "varint longer than ten bytes"),
        (
            &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02][..],
            "varint overflows u64",
        ),
        (
            &[0xe9, 0xd5, 0xdc, 0x8e, 0x52][..],
            "decodes to too many bytes",
        ),
        (&[0x08, 1][..], "literal run past the end"),
        (&[0x02, 1][..], "truncated input length"),
        (&[0x06, 5, 0, 1][..], "truncated input"),
    ] {
        assert_eq!(wire::count_inputs(bytes), Err(why), "{bytes:?}");
    }
    // Two one-byte inputs as a literal run; 300 empty ones as a zero run.
    assert_eq!(wire::count_inputs(&[0x0c, 1, 0, 7, 1, 0, 9]), Ok(2));
    let mut run = Vec::new();
    let mut v = (600u64 << 2) | 1;
    while v >= 0x80 {
        run.push(v as u8 | 0x80);
        v >>= 7;
    }
    run.push(v as u8);
    assert_eq!(wire::count_inputs(&run), Ok(300));
}

fn input(statuses: usize, disconnect: bool, start: Frame, bytes: Vec<u8>) -> Message {
    let msg = wire::Msg {
        magic: 7,
        body: wire::Body::Input(wire::Input {
            peer_connect_status: vec![
                wire::Status {
                    disconnected: false,
                    last_frame: 3,
                };
                statuses
            ],
            disconnect_requested: disconnect,
            start_frame: start,
            ack_frame: i32::MAX,
            bytes,
        }),
    };
    bincode::deserialize(&wire::encode(&msg)).unwrap()
}

#[test]
fn checks_name_what_they_refuse() {
    let g = GuardedSocket::new((), 2);
    assert_eq!(
        g.check(&input(0, true, 0, vec![])),
        Err(Refusal::StatusCount { got: 0, want: 2 })
    );
    // 0x0c: a six-byte literal, two one-byte inputs.
    let two = vec![0x0c, 1, 0, 7, 1, 0, 9];
    assert_eq!(g.check(&input(2, false, 61, two.clone())), Ok(()));
    assert_eq!(
        g.check(&input(2, false, i32::MAX, two)),
        Err(Refusal::Frame {
            field: "last input frame",
            frame: i64::from(i32::MAX) + 1,
            max: 63
        })
    );
    let checksum = |frame| {
        let m = wire::Msg {
            magic: 7,
            body: wire::Body::ChecksumReport { checksum: 1, frame },
        };
        bincode::deserialize::<Message>(&wire::encode(&m)).unwrap()
    };
    assert_eq!(g.check(&checksum(10)), Ok(()));
    assert!(g.check(&checksum(i32::MIN)).is_err());
    assert!(g.check(&checksum(-1)).is_err());
}

fn msg(body: wire::Body) -> Message {
    bincode::deserialize(&wire::encode(&wire::Msg { magic: 7, body })).unwrap()
}

#[test]
fn a_pong_must_echo_a_recent_ping() {
    let mut g = GuardedSocket::new((), 2);
    let reply = |pong| msg(wire::Body::QualityReply { pong });
    assert_eq!(g.check(&reply(0)), Err(Refusal::Pong { pong: 0 }));
    let report = |ping| {
        msg(wire::Body::QualityReport {
            frame_advantage: 0,
            ping,
        })
    };
    for ping in 1000..1000 + PINGS_KEPT as u128 + 1 {
        g.note_sent(&report(ping));
    }
    assert_eq!(g.check(&reply(1001)), Ok(()));
    assert_eq!(g.check(&reply(1000 + PINGS_KEPT as u128)), Ok(()));
    // The oldest ping is forgotten.
    assert_eq!(g.check(&reply(1000)), Err(Refusal::Pong { pong: 1000 }));
}

#[test]
fn a_spectator_refuses_what_no_host_sends_it() {
    let p2p = GuardedSocket::new((), 2);
    let mut spectator = GuardedSocket::for_spectator((), 2);
    let checksum = msg(wire::Body::ChecksumReport {
        checksum: 1,
        frame: 10,
    });
    assert_eq!(p2p.check(&checksum), Ok(()));
    assert_eq!(
        spectator.check(&checksum),
        Err(Refusal::NotForSpectators("checksum report"))
    );
    assert_eq!(
        spectator.check(&input(2, true, 0, vec![])),
        Err(Refusal::NotForSpectators("disconnect request"))
    );
    // The first input starts at frame 0; later ones right after the last
    // frame acknowledged.
    let one = vec![0x06, 1, 0, 7];
    assert_eq!(spectator.check(&input(2, false, 0, one.clone())), Ok(()));
    assert_eq!(
        spectator.check(&input(2, false, 1, one.clone())),
        Err(Refusal::Frame {
            field: "start frame",
            frame: 1,
            max: 0
        })
    );
    spectator.note_sent(&msg(wire::Body::InputAck { ack_frame: 20 }));
    assert_eq!(spectator.check(&input(2, false, 21, one.clone())), Ok(()));
    assert!(spectator.check(&input(2, false, 22, one)).is_err());
    // A player the host saw leave passes; for a peer, not before its
    // first input.
    let left = msg(wire::Body::Input(wire::Input {
        peer_connect_status: vec![
            wire::Status {
                disconnected: true,
                last_frame: 3,
            };
            2
        ],
        disconnect_requested: false,
        start_frame: 0,
        ack_frame: -1,
        bytes: vec![],
    }));
    assert_eq!(spectator.check(&left), Ok(()));
    assert_eq!(p2p.check(&left), Err(Refusal::EarlyDisconnect));
}
