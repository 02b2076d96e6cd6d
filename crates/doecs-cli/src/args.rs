//! Command-line checks clap cannot express: a mistyped subcommand, and the
//! limits on `--frames`, `--threads` and `--fps`.
//!
//! The top-level command takes an optional LEVEL, so clap reads
//! `doecs compil x.json` as a level named `compil` and then complains about
//! `x.json`. [`subcommand_typo`] looks at the first positional argument
//! before clap does: if it is not an existing file and is close to a
//! subcommand's name (or has no file extension at all), the user meant a
//! subcommand, and gets a suggestion instead.

use clap::error::ErrorKind;
use std::ffi::OsString;
use std::path::Path;

/// `--threads` may be at most this many times the available cores...
pub const THREADS_PER_CORE: usize = 4;
/// ...and never more than this.
pub const MAX_THREADS: usize = 1024;

/// Cores available to this process.
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// The most worker threads accepted on a machine with `cores` cores.
pub fn thread_limit(cores: usize) -> usize {
    THREADS_PER_CORE.saturating_mul(cores).min(MAX_THREADS)
}

/// Checks a `--threads` value on a machine with `cores` cores; `None` means
/// all cores.
pub fn check_threads(threads: Option<usize>, cores: usize) -> Result<usize, String> {
    let limit = thread_limit(cores);
    match threads {
        None => Ok(cores.min(limit)),
        Some(0) => Err("--threads must be at least 1".into()),
        Some(t) if t > limit => {
            let why = if limit == MAX_THREADS {
                format!("never more than {MAX_THREADS}, even with {cores} cores")
            } else {
                format!("{THREADS_PER_CORE} × the {cores} cores here")
            };
            Err(format!(
                "--threads {t} is more than the limit of {limit} ({why})"
            ))
        }
        Some(t) => Ok(t),
    }
}

/// The most frames `--frames` accepts: more than a week of frames at
/// 1,000 per second. Nothing is kept per frame (the frame times go into a
/// fixed-size summary), so the limit bounds the run time, not the memory.
pub const MAX_FRAMES: usize = 1_000_000_000;

/// Checks a `--frames` value.
pub fn check_frames(frames: usize) -> Result<usize, String> {
    match frames {
        0 => Err("--frames must be at least 1".into()),
        f if f > MAX_FRAMES => Err(format!("--frames must be at most {MAX_FRAMES}, got {f}")),
        f => Ok(f),
    }
}

/// The fewest frames per second `--fps` accepts: one frame every 1,000
/// seconds, slower than any use. Far below, the time per frame leaves what
/// a `Duration` holds (1e-20 fps is 1e20 seconds a frame), and the
/// smallest floats make it infinite.
pub const MIN_FPS: f64 = 1e-3;
/// The most frames per second `--fps` accepts.
pub const MAX_FPS: f64 = 10_000.0;

/// Checks an `--fps` value; returns the time per frame (`None`: unpaced).
pub fn check_fps(fps: Option<f64>) -> Result<Option<std::time::Duration>, String> {
    let Some(f) = fps else {
        return Ok(None);
    };
    let refused = || format!("--fps must be between {MIN_FPS} and {MAX_FPS}, got {f:?}");
    // Written so NaN fails the range check too.
    if !(MIN_FPS..=MAX_FPS).contains(&f) {
        return Err(refused());
    }
    std::time::Duration::try_from_secs_f64(1.0 / f)
        .map(Some)
        .map_err(|_| refused())
}

/// Edit distance (insertions, deletions, substitutions) between two strings.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let next = (diagonal + usize::from(ca != cb))
                .min(row[j] + 1)
                .min(row[j + 1] + 1);
            diagonal = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

/// The subcommand `word` most likely meant: within two edits, or a prefix of
/// at least two characters.
fn closest<'n>(word: &str, names: &[&'n str]) -> Option<&'n str> {
    let word = word.to_lowercase();
    names
        .iter()
        .map(|&n| {
            let d = if word.len() >= 2 && n.starts_with(&word) {
                0
            } else {
                edit_distance(&word, n)
            };
            (d, n)
        })
        .filter(|&(d, n)| d <= 2 && d < n.len())
        .min_by_key(|&(d, _)| d)
        .map(|(_, n)| n)
}

/// The first positional argument of the top-level command, skipping options
/// and their values, or `None` if there is none (or it follows `--`).
fn first_positional(args: &[OsString], cmd: &clap::Command) -> Option<String> {
    let takes_value = |arg: &clap::Arg| arg.get_num_args().is_some_and(|n| n.takes_values());
    let mut rest = args.iter().skip(1);
    while let Some(arg) = rest.next() {
        let arg = arg.to_string_lossy();
        if arg == "--" {
            return None;
        }
        if let Some(long) = arg.strip_prefix("--") {
            let (name, inline) = match long.split_once('=') {
                Some((n, _)) => (n, true),
                None => (long, false),
            };
            let known = cmd.get_arguments().find(|a| a.get_long() == Some(name));
            if known.is_some_and(|a| takes_value(a) && !inline) {
                rest.next();
            }
        } else if let Some(shorts) = arg.strip_prefix('-').filter(|s| !s.is_empty()) {
            for (i, c) in shorts.char_indices() {
                let known = cmd.get_arguments().find(|a| a.get_short() == Some(c));
                if known.is_some_and(takes_value) {
                    if i + c.len_utf8() == shorts.len() {
                        rest.next();
                    }
                    break;
                }
            }
        } else {
            return Some(arg.into_owned());
        }
    }
    None
}

/// A usage error if the first positional argument looks like a mistyped
/// subcommand rather than a level file (see the module docs).
pub fn subcommand_typo(args: &[OsString], cmd: &mut clap::Command) -> Option<clap::Error> {
    // Resolves each argument's number of values, for `first_positional`.
    cmd.build();
    let word = first_positional(args, cmd)?;
    let mut names: Vec<&str> = cmd.get_subcommands().map(|s| s.get_name()).collect();
    if !names.contains(&"help") {
        names.push("help");
    }
    if names.contains(&word.as_str()) || Path::new(&word).exists() {
        return None;
    }
    let message = match closest(&word, &names) {
        Some(name) => format!("unknown subcommand '{word}'; did you mean '{name}'?"),
        None if Path::new(&word).extension().is_none() => format!(
            "'{word}' is neither a subcommand ({}) nor an existing level file",
            names
                .iter()
                .filter(|&&n| n != "help")
                .copied()
                .collect::<Vec<_>>()
                .join(", ")
        ),
        None => return None,
    };
    Some(cmd.error(ErrorKind::InvalidSubcommand, message))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edit_distances() {
        assert_eq!(edit_distance("compil", "compile"), 1);
        assert_eq!(edit_distance("inspcet", "inspect"), 2);
        assert_eq!(edit_distance("", "run"), 3);
        assert_eq!(edit_distance("run", "run"), 0);
    }

    #[test]
    fn suggestions() {
        let names = ["compile", "inspect", "run", "demo-level", "help"];
        assert_eq!(closest("compil", &names), Some("compile"));
        assert_eq!(closest("Compile", &names), Some("compile"));
        assert_eq!(closest("rnu", &names), Some("run"));
        assert_eq!(closest("demo", &names), Some("demo-level"));
        assert_eq!(closest("demo_level", &names), Some("demo-level"));
        assert_eq!(closest("x", &names), None);
        assert_eq!(closest("level.json", &names), None);
    }

    #[test]
    fn first_positional_skips_options_and_their_values() {
        use clap::CommandFactory;
        let mut cmd = crate::Cli::command();
        cmd.build();
        let first = |args: &[&str]| {
            let args: Vec<OsString> = std::iter::once("doecs")
                .chain(args.iter().copied())
                .map(OsString::from)
                .collect();
            first_positional(&args, &cmd)
        };
        assert_eq!(first(&["--frames", "3", "x"]), Some("x".into()));
        assert_eq!(first(&["--frames=3", "-q", "x"]), Some("x".into()));
        assert_eq!(first(&["-q", "--threads", "2"]), None);
        assert_eq!(first(&["--", "compil"]), None);
        assert_eq!(first(&[]), None);
    }

    #[test]
    fn fps_limits() {
        assert_eq!(check_fps(None), Ok(None));
        assert_eq!(
            check_fps(Some(50.0)),
            Ok(Some(std::time::Duration::from_millis(20)))
        );
        assert_eq!(
            check_fps(Some(MIN_FPS)),
            Ok(Some(std::time::Duration::from_secs(1000)))
        );
        assert!(check_fps(Some(MAX_FPS)).is_ok());
        for bad in [
            0.0,
            -0.0,
            -1.0,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            1e9,
            1e-20,
            5e-324,
            f64::MIN_POSITIVE,
            MIN_FPS * 0.999,
            MAX_FPS * 1.001,
        ] {
            assert!(check_fps(Some(bad)).is_err(), "{bad}");
        }
        assert_eq!(
            check_fps(Some(1e-20)).unwrap_err(),
            "--fps must be between 0.001 and 10000, got 1e-20"
        );
        assert_eq!(
            check_fps(Some(5e-324)).unwrap_err(),
            "--fps must be between 0.001 and 10000, got 5e-324"
        );
    }

    #[test]
    fn frame_limits() {
        assert_eq!(check_frames(1), Ok(1));
        assert_eq!(check_frames(MAX_FRAMES), Ok(MAX_FRAMES));
        assert_eq!(check_frames(0).unwrap_err(), "--frames must be at least 1");
        assert_eq!(
            check_frames(MAX_FRAMES + 1).unwrap_err(),
            "--frames must be at most 1000000000, got 1000000001"
        );
        assert_eq!(
            check_frames(usize::MAX).unwrap_err(),
            format!("--frames must be at most 1000000000, got {}", usize::MAX)
        );
    }

    #[test]
    fn thread_limits() {
        assert_eq!(check_threads(None, 2), Ok(2));
        assert_eq!(check_threads(Some(8), 2), Ok(8));
        assert_eq!(
            check_threads(Some(100_000), 2).unwrap_err(),
            "--threads 100000 is more than the limit of 8 (4 × the 2 cores here)"
        );
        assert_eq!(
            check_threads(Some(2000), 512).unwrap_err(),
            "--threads 2000 is more than the limit of 1024 (never more than 1024, even with 512 cores)"
        );
        assert!(check_threads(Some(0), 2).is_err());
    }
}
