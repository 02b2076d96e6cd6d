//! `doecs play` end to end: the sync test over the demo fleet, and two
//! processes playing 600 frames against each other on loopback through
//! sockets that drop 10% of the packets and delay the rest by 50 ms, whose
//! confirmed frames' checksums must all agree.

mod common;

use common::run::{doecs_within, s, temp_dir, text};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[test]
fn sync_test_8_passes_on_the_demo_fleet() {
    let out = doecs_within(
        Duration::from_secs(120),
        None,
        &[
            "play",
            "--sync-test",
            "8",
            "--frames",
            "120",
            "--ships",
            "20",
        ],
    );
    let stdout = text(&out.stdout);
    assert!(
        out.status.success(),
        "stderr: {}\nstdout: {stdout}",
        text(&out.stderr)
    );
    assert!(
        stdout.contains("sync test 8: 120 frames, checksums equal"),
        "{stdout}"
    );
}

#[test]
fn bad_play_arguments_are_one_line_errors() {
    let out = doecs_within(Duration::from_secs(30), None, &["play", "--frames", "5"]);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("needs --local-port and --remote"),
        "{}",
        text(&out.stderr)
    );
    let out = doecs_within(Duration::from_secs(30), None, &["play", "--sync-test", "0"]);
    assert!(text(&out.stderr).contains("--sync-test must be 1 to 15"));
}

/// Two free UDP ports on loopback (bound, read, released).
fn free_ports() -> [u16; 2] {
    let a = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let b = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    [
        a.local_addr().unwrap().port(),
        b.local_addr().unwrap().port(),
    ]
}

/// `frame checksum` lines into pairs.
fn read_sums(path: &std::path::Path) -> Vec<(i64, String)> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| {
            let (f, c) = l.split_once(' ').unwrap();
            (f.parse().unwrap(), c.to_owned())
        })
        .collect()
}

#[test]
fn two_processes_agree_on_every_confirmed_frame_through_loss_and_delay() {
    let dir = temp_dir("play");
    let ports = free_ports();
    let frames = 600;
    let mut children = Vec::new();
    let mut files = Vec::new();
    for player in 0..2usize {
        let file = dir.join(format!("sums{player}.txt"));
        let remote = format!("127.0.0.1:{}", ports[1 - player]);
        let args = [
            "play".to_owned(),
            "--local-port".into(),
            ports[player].to_string(),
            "--remote".into(),
            remote,
            "--player".into(),
            player.to_string(),
            "--frames".into(),
            frames.to_string(),
            "--ships".into(),
            "20".into(),
            "--loss".into(),
            "0.1".into(),
            "--delay-ms".into(),
            "50".into(),
            "--checksums".into(),
            s(&file).to_owned(),
        ];
        let child = Command::new(env!("CARGO_BIN_EXE_doecs"))
            .args(&args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the binary runs");
        children.push(child);
        files.push(file);
    }
    let start = Instant::now();
    let limit = Duration::from_secs(90);
    while children
        .iter_mut()
        .any(|c| c.try_wait().expect("wait").is_none())
    {
        if start.elapsed() > limit {
            for c in &mut children {
                c.kill().ok();
            }
            panic!("the players still run after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    for c in children {
        let out = c.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "stderr: {}\nstdout: {}",
            text(&out.stderr),
            text(&out.stdout)
        );
        assert!(text(&out.stdout).contains("frames confirmed"));
    }
    let (a, b) = (read_sums(&files[0]), read_sums(&files[1]));
    for sums in [&a, &b] {
        assert_eq!(sums.last().map(|x| x.0), Some(frames), "played to the end");
        // Every frame from the first saved one on, once each, in order.
        assert!(sums.windows(2).all(|w| w[1].0 == w[0].0 + 1));
    }
    let mut compared = 0;
    for (frame, sum) in &a {
        if let Some((_, other)) = b.iter().find(|x| x.0 == *frame) {
            assert_eq!(sum, other, "frame {frame}: the players' worlds differ");
            compared += 1;
        }
    }
    assert!(compared >= frames as usize, "{compared} frames compared");
    std::fs::remove_dir_all(&dir).ok();
}
