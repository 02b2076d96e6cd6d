//! Reading the files the user names (levels, blobs, saves) with a size
//! limit, so a device such as `/dev/zero` or `/dev/urandom`, or a file far
//! larger than any level, is refused instead of filling memory.
//!
//! The limit is checked while reading, not from the file's metadata (a
//! device reports a length of 0): at most `limit + 1` bytes are read, and
//! the file is refused if the last one arrived.

use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

/// The default `--max-input-bytes`: 2 GiB, above the largest level this
/// program writes (`demo-level --ships 1000000`, about 1.4 GB of JSON).
pub const DEFAULT_MAX_INPUT_BYTES: u64 = 2 << 30;

/// Why an input file was not read.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    /// The file could not be opened or read.
    #[error("cannot read {}: {source}", .path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        source: io::Error,
    },
    /// The file holds more than the limit.
    #[error(
        "{} is larger than the limit of {limit} bytes (raise it with --max-input-bytes)",
        .path.display()
    )]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// The limit, in bytes.
        limit: u64,
    },
}

/// Reads all of `path`, refusing it if it holds more than `limit` bytes
/// (see the module docs). Memory is at most about `limit` bytes, however
/// long the file or device.
pub fn read_limited(path: &Path, limit: u64) -> Result<Vec<u8>, InputError> {
    let cannot = |source| InputError::Read {
        path: path.to_owned(),
        source,
    };
    let file = File::open(path).map_err(cannot)?;
    // A regular file's length sizes the buffer at once (never past the
    // limit); devices and pipes report 0 and the buffer grows as they read.
    let expected = file.metadata().map_or(0, |m| m.len()).min(limit);
    let mut bytes = Vec::new();
    bytes
        .try_reserve_exact(usize::try_from(expected).unwrap_or(usize::MAX))
        .map_err(|_| cannot(io::ErrorKind::OutOfMemory.into()))?;
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(cannot)?;
    if bytes.len() as u64 > limit {
        return Err(InputError::TooLarge {
            path: path.to_owned(),
            limit,
        });
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_file(name: &str, len: usize) -> PathBuf {
        let path =
            std::env::temp_dir().join(format!("doecs-cli-input-{}-{name}", std::process::id()));
        std::fs::write(&path, vec![7u8; len]).unwrap();
        path
    }

    #[test]
    fn a_file_up_to_the_limit_is_read_whole() {
        let path = temp_file("at-limit", 100);
        assert_eq!(read_limited(&path, 100).unwrap(), vec![7u8; 100]);
        assert_eq!(read_limited(&path, 1000).unwrap().len(), 100);
        std::fs::remove_file(path).ok();
    }

    #[test]
    fn one_byte_over_the_limit_is_refused() {
        let path = temp_file("over-limit", 101);
        let err = read_limited(&path, 100).unwrap_err();
        assert!(matches!(err, InputError::TooLarge { limit: 100, .. }));
        let message = err.to_string();
        assert!(
            message.ends_with(
                "is larger than the limit of 100 bytes (raise it with --max-input-bytes)"
            ),
            "{message}"
        );
        std::fs::remove_file(path).ok();
    }

    #[test]
    fn endless_devices_are_refused_at_the_limit() {
        for device in ["/dev/zero", "/dev/urandom"] {
            let path = Path::new(device);
            if !path.exists() {
                continue;
            }
            let err = read_limited(path, 4096).unwrap_err();
            assert!(matches!(err, InputError::TooLarge { limit: 4096, .. }));
        }
    }

    #[test]
    fn a_limit_of_u64_max_does_not_overflow() {
        let path = temp_file("no-limit", 10);
        assert_eq!(read_limited(&path, u64::MAX).unwrap().len(), 10);
        std::fs::remove_file(path).ok();
    }

    #[test]
    fn a_missing_file_says_cannot_read() {
        let err = read_limited(Path::new("/nonexistent/level.json"), 10).unwrap_err();
        assert!(err
            .to_string()
            .starts_with("cannot read /nonexistent/level.json: "));
    }
}
