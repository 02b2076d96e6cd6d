//! A socket wrapper that loses and delays packets, for testing netcode on
//! loopback.
//!
//! [`LossySocket`] wraps any ggrs [`NonBlockingSocket`]: each outgoing
//! message is dropped with a given probability, and the rest are held back
//! for a fixed delay before they reach the inner socket. The dice are a
//! small xorshift generator started from a caller's number, so a run's
//! losses are reproducible given the same timing. Messages are released
//! whenever ggrs calls the socket (it sends and receives every frame), so
//! the delay is exact to within one call.

use ggrs::{Message, NonBlockingSocket};
use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// A socket that drops a share of outgoing messages and delays the rest.
pub struct LossySocket<S, A> {
    inner: S,
    loss: f64,
    delay: Duration,
    rng: u64,
    queue: VecDeque<(Instant, A, Message)>,
    /// Messages dropped so far.
    pub dropped: u64,
    /// Messages sent (after the delay) so far.
    pub sent: u64,
}

impl<S, A> LossySocket<S, A> {
    /// Wraps `inner`: each message is dropped with probability `loss`
    /// (clamped to 0..=1), the others are sent `delay` later. `stream`
    /// picks the generator's sequence (0 is replaced by a fixed odd number).
    pub fn new(inner: S, loss: f64, delay: Duration, stream: u64) -> Self {
        LossySocket {
            inner,
            loss: if loss.is_nan() {
                0.0
            } else {
                loss.clamp(0.0, 1.0)
            },
            delay,
            rng: if stream == 0 {
                0x9e37_79b9_7f4a_7c15
            } else {
                stream
            },
            queue: VecDeque::new(),
            dropped: 0,
            sent: 0,
        }
    }

    /// A uniform number in `[0, 1)` (xorshift64*).
    fn next_unit(&mut self) -> f64 {
        let mut x = self.rng;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.rng = x;
        (x.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11) as f64 / (1u64 << 53) as f64
    }
}

impl<S, A> LossySocket<S, A>
where
    S: NonBlockingSocket<A>,
    A: Clone + PartialEq + Eq + std::hash::Hash,
{
    /// Sends every held message whose time has come.
    fn release(&mut self) {
        let now = Instant::now();
        while self.queue.front().is_some_and(|(due, _, _)| *due <= now) {
            if let Some((_, addr, msg)) = self.queue.pop_front() {
                self.inner.send_to(&msg, &addr);
                self.sent += 1;
            }
        }
    }
}

impl<S, A> NonBlockingSocket<A> for LossySocket<S, A>
where
    S: NonBlockingSocket<A>,
    A: Clone + PartialEq + Eq + std::hash::Hash,
{
    fn send_to(&mut self, msg: &Message, addr: &A) {
        if self.next_unit() < self.loss {
            self.dropped += 1;
        } else {
            self.queue
                .push_back((Instant::now() + self.delay, addr.clone(), msg.clone()));
        }
        self.release();
    }

    fn receive_all_messages(&mut self) -> Vec<(A, Message)> {
        self.release();
        self.inner.receive_all_messages()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn about_the_asked_share_is_dropped() {
        let mut s = LossySocket::<(), ()>::new((), 0.1, Duration::ZERO, 7);
        let n = 100_000;
        let dropped = (0..n).filter(|_| s.next_unit() < 0.1).count();
        let share = dropped as f64 / n as f64;
        assert!((0.09..0.11).contains(&share), "{share}");
    }
}
