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
    let host = ["play", "--spectate", "127.0.0.1:7000"];
    let out = doecs_within(Duration::from_secs(30), None, &host);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("--spectate needs --local-port"));
    let both = [
        "play",
        "--spectate",
        "127.0.0.1:7000",
        "--remote",
        "127.0.0.1:7001",
    ];
    let out = doecs_within(Duration::from_secs(30), None, &both);
    assert_eq!(out.status.code(), Some(2), "a usage error");
    assert!(text(&out.stderr).contains("cannot be used with"));
}

#[test]
fn a_closed_output_pipe_ends_the_command_quietly() {
    // As `doecs play --sync-test 2 … | head -0`: the reader is gone before
    // anything is written.
    let mut child = Command::new(env!("CARGO_BIN_EXE_doecs"))
        .args(["play", "--sync-test", "2", "--frames", "20", "--ships", "5"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    drop(child.stdout.take());
    let out = child.wait_with_output().expect("the binary ends");
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{:?}: {stderr}", out.status);
    assert!(!stderr.contains("panicked"), "{stderr}");
}

/// `N` free UDP ports on loopback (bound, read, released).
fn free_ports<const N: usize>() -> [u16; N] {
    let sockets = [(); N].map(|()| std::net::UdpSocket::bind("127.0.0.1:0").unwrap());
    sockets.map(|s| s.local_addr().unwrap().port())
}

/// Starts `doecs` with `args`, its output piped.
fn spawn_doecs(args: &[String]) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_doecs"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs")
}

/// Waits for every child (killing them all past `limit`); each must exit
/// successfully. Returns their standard outputs.
fn wait_all(children: Vec<std::process::Child>, limit: Duration) -> Vec<String> {
    let mut children = children;
    let start = Instant::now();
    while children
        .iter_mut()
        .any(|c| c.try_wait().expect("wait").is_none())
    {
        if start.elapsed() > limit {
            for c in &mut children {
                c.kill().ok();
            }
            panic!("the processes still run after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    children
        .into_iter()
        .map(|c| {
            let out = c.wait_with_output().unwrap();
            assert!(
                out.status.success(),
                "stderr: {}\nstdout: {}",
                text(&out.stderr),
                text(&out.stdout)
            );
            text(&out.stdout).to_owned()
        })
        .collect()
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
    let ports = free_ports::<2>();
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
        children.push(spawn_doecs(&args));
        files.push(file);
    }
    for out in wait_all(children, Duration::from_secs(90)) {
        assert!(out.contains("frames confirmed"), "{out}");
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

#[test]
fn a_spectator_process_follows_two_players_frame_for_frame() {
    let dir = temp_dir("spectate");
    let ports = free_ports::<3>();
    let frames = 300;
    let common = |args: &mut Vec<String>, file: &std::path::Path| {
        for a in ["--frames", &frames.to_string(), "--ships", "20"] {
            args.push(a.to_owned());
        }
        for a in ["--loss", "0.1", "--delay-ms", "30", "--checksums", s(file)] {
            args.push(a.to_owned());
        }
    };
    let mut children = Vec::new();
    let mut files = Vec::new();
    for player in 0..2usize {
        let file = dir.join(format!("sums{player}.txt"));
        let mut args: Vec<String> = vec![
            "play".into(),
            "--local-port".into(),
            ports[player].to_string(),
            "--remote".into(),
            format!("127.0.0.1:{}", ports[1 - player]),
            "--player".into(),
            player.to_string(),
        ];
        if player == 0 {
            args.push("--spectator".into());
            args.push(format!("127.0.0.1:{}", ports[2]));
        }
        common(&mut args, &file);
        children.push(spawn_doecs(&args));
        files.push(file);
    }
    let file = dir.join("spectator.txt");
    let mut args: Vec<String> = vec![
        "play".into(),
        "--local-port".into(),
        ports[2].to_string(),
        "--spectate".into(),
        format!("127.0.0.1:{}", ports[0]),
    ];
    common(&mut args, &file);
    children.push(spawn_doecs(&args));
    let outs = wait_all(children, Duration::from_secs(90));
    assert!(outs[2].contains("frames followed"), "{}", outs[2]);
    let host = read_sums(&files[0]);
    let watched = read_sums(&file);
    // The spectator simulated every frame once, in order, to the end.
    assert_eq!(watched.first().map(|x| x.0), Some(1));
    assert_eq!(watched.last().map(|x| x.0), Some(frames));
    assert!(watched.windows(2).all(|w| w[1].0 == w[0].0 + 1));
    // Its world after frame f is the state the players confirmed for f.
    let mut compared = 0;
    for (frame, sum) in &watched {
        if let Some((_, confirmed)) = host.iter().find(|x| x.0 == *frame) {
            assert_eq!(
                sum, confirmed,
                "frame {frame}: the spectator's world differs"
            );
            compared += 1;
        }
    }
    assert!(
        compared >= frames as usize - 1,
        "{compared} frames compared"
    );
    std::fs::remove_dir_all(&dir).ok();
}
