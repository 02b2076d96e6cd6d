//! A plain HTTP/1.1 client over a `TcpStream`, for the tests (no client
//! library): each request is sent with `Connection: close` and the whole
//! answer read.
#![allow(dead_code)]

use serde_json::Value;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

/// A raw HTTP answer.
pub struct Answer {
    pub status: u16,
    pub body: String,
}

impl Answer {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.body))
    }
}

/// Sends a raw request and reads the whole answer (`Connection: close`).
pub fn raw(addr: SocketAddr, request: &[u8]) -> Answer {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    // The server may answer (and stop reading) before a refused body is
    // all sent; the answer is still read.
    let _ = s.write_all(request);
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    let text = String::from_utf8_lossy(&out).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    Answer {
        status,
        body: body.to_owned(),
    }
}

pub fn request(addr: SocketAddr, method: &str, target: &str, body: &str, extra: &str) -> Answer {
    let req = format!(
        "{method} {target} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n{extra}Content-Length: {}\r\n\r\n{body}",
        body.len()
    );
    raw(addr, req.as_bytes())
}

pub fn get(addr: SocketAddr, target: &str) -> Answer {
    request(addr, "GET", target, "", "")
}

/// Runs "frames" of `world` on this thread (about 1 ms each), answering
/// the inspector's requests between them, while `client` runs on another
/// thread with the server's address; returns the world and the number of
/// frames run. A panic in the client is raised again here.
pub fn serve_frames<F>(
    mut world: doecs::World,
    config: doecs_inspect::InspectorConfig,
    client: F,
) -> (doecs::World, u64)
where
    F: FnOnce(SocketAddr) + Send + 'static,
{
    let mut inspector = doecs_inspect::Inspector::start(config).unwrap();
    let addr = inspector.addr();
    let client = std::thread::spawn(move || client(addr));
    let mut frames = 0;
    while !client.is_finished() {
        inspector.between_frames(&mut world);
        std::thread::sleep(Duration::from_millis(1));
        inspector.record_frame(&world, Duration::from_millis(1), &[]);
        frames += 1;
    }
    inspector.serve_pending(&mut world);
    if let Err(panic) = client.join() {
        std::panic::resume_unwind(panic);
    }
    (world, frames)
}
