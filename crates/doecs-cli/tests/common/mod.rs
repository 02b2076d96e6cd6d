//! Helpers for the tests that run `doecs run --inspect`: start the binary
//! and read the inspector's address from its output, and speak plain
//! HTTP/1.1 to it over a `TcpStream` (no client library).
#![allow(dead_code)]

pub mod run;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// A running `doecs`, killed when dropped so a failed check leaves no
/// server behind; its later output lines arrive on `lines`.
pub struct Running {
    pub child: Child,
    pub lines: mpsc::Receiver<String>,
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Running {
    /// Waits for the process to end and returns the rest of its output.
    pub fn finish(mut self, limit: Duration) -> String {
        let mut rest = String::new();
        let deadline = std::time::Instant::now() + limit;
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    rest.push_str(&line);
                    rest.push('\n');
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
                Err(mpsc::RecvTimeoutError::Timeout) => panic!("doecs did not finish: {rest}"),
            }
        }
        let status = self.child.wait().expect("waits");
        assert!(status.success(), "doecs failed: {rest}");
        rest
    }
}

/// Starts `doecs` with `args` and returns it with the inspector's URL, read
/// from its `inspector: http://...` line.
pub fn start_inspected(args: &[&str]) -> (Running, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_doecs"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("doecs starts");
    let stdout = child.stdout.take().expect("piped");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                return;
            }
        }
    });
    let running = Running { child, lines: rx };
    loop {
        let line = running
            .lines
            .recv_timeout(Duration::from_secs(120))
            .expect("doecs prints the inspector's address");
        if let Some(rest) = line.strip_prefix("inspector: ") {
            let url = rest.split_whitespace().next().unwrap_or("").to_owned();
            assert!(url.starts_with("http://127.0.0.1:"), "{url}");
            return (running, url);
        }
    }
}

/// One HTTP request to `url` (`http://HOST:PORT/`) for `target`; returns
/// the status and the body.
pub fn http(url: &str, method: &str, target: &str, body: &str) -> (u16, String) {
    let host = url
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_owned();
    let mut s = TcpStream::connect(&host).expect("connects");
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let req = format!(
        "{method} {target} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    s.write_all(req.as_bytes()).unwrap();
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    let text = String::from_utf8_lossy(&out).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    (status, body.to_owned())
}

/// A GET that must succeed, as JSON.
pub fn get_json(url: &str, target: &str) -> serde_json::Value {
    let (status, body) = http(url, "GET", target, "");
    assert_eq!(status, 200, "GET {target}: {body}");
    serde_json::from_str(&body).expect("JSON")
}
