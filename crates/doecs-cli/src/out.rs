//! Standard output that a closed pipe cannot crash.
//!
//! `println!` panics when stdout is a pipe whose reader has gone (`doecs
//! inspect level.bin | head -1`). Other Unix tools die quietly of SIGPIPE
//! there; Rust ignores that signal, so [`outln!`](crate::outln) and
//! [`out!`](macro@crate::out) write through [`write`](fn@write), which ends the process
//! with status 0 on a broken pipe, and with status 1 and a one-line error
//! on any other failure to write.

use std::fmt;
use std::io::{ErrorKind, Write};

/// Writes `args` (and a newline when `newline`) to stdout; see the module
/// docs for what a failed write does.
pub fn write(args: fmt::Arguments<'_>, newline: bool) {
    let mut stdout = std::io::stdout().lock();
    let written = stdout.write_fmt(args).and_then(|()| {
        if newline {
            stdout.write_all(b"\n")
        } else {
            Ok(())
        }
    });
    if let Err(e) = written {
        exit_on(e);
    }
}

/// Flushes stdout, as [`write`](fn@write) on failure.
pub fn flush() {
    if let Err(e) = std::io::stdout().flush() {
        exit_on(e);
    }
}

fn exit_on(e: std::io::Error) -> ! {
    if e.kind() == ErrorKind::BrokenPipe {
        std::process::exit(0);
    }
    eprintln!("error: cannot write to stdout: {e}");
    std::process::exit(1);
}

/// `println!` that a closed pipe ends quietly (see [`crate::out`](mod@crate::out)).
#[macro_export]
macro_rules! outln {
    ($($arg:tt)*) => { $crate::out::write(format_args!($($arg)*), true) };
}

/// `print!` that a closed pipe ends quietly (see [`crate::out`](mod@crate::out)).
#[macro_export]
macro_rules! out {
    ($($arg:tt)*) => { $crate::out::write(format_args!($($arg)*), false) };
}
