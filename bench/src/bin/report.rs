//! Writes `BENCHMARKS.md` and its bar chart from criterion's saved estimates.
//!
//! Usage: `report [--criterion DIR] [--out FILE] [--chart FILE]`. It reads
//! `DIR/<workload>/<library>/new/estimates.json` (DIR defaults to
//! `$CARGO_TARGET_DIR/criterion`, else `target/criterion`), takes each median,
//! and writes one table per workload with every library's ratio to doecs and
//! to the hand-written SoA baseline, the machine (cores, CPU model), the date
//! of the run, and an SVG chart of the ratios to doecs. Every figure comes from
//! the files; nothing is typed in.

use doecs_bench::{LIBRARIES, NOTES, NOT_AVAILABLE, WORKLOADS};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// One measured (workload, function) pair.
struct Measure {
    /// Median time per iteration, nanoseconds.
    median_ns: f64,
    /// When criterion wrote it.
    written: SystemTime,
}

/// Everything found: workload -> function id -> measure.
type Results = BTreeMap<String, BTreeMap<String, Measure>>;

fn main() {
    let mut args = std::env::args().skip(1);
    let target = std::env::var("CARGO_TARGET_DIR").unwrap_or_else(|_| "target".into());
    let mut criterion = PathBuf::from(target).join("criterion");
    let mut out = PathBuf::from("BENCHMARKS.md");
    let mut chart = PathBuf::from("bench/benchmarks.svg");
    let mut notes = Vec::new();
    while let Some(arg) = args.next() {
        let mut value = || {
            args.next().unwrap_or_else(|| {
                eprintln!("error: {arg} needs a value");
                std::process::exit(2)
            })
        };
        match arg.as_str() {
            "--criterion" => criterion = value().into(),
            "--out" => out = value().into(),
            "--chart" => chart = value().into(),
            "--note" => notes.push(value()),
            "-h" | "--help" => {
                println!(
                    "report [--criterion DIR] [--out BENCHMARKS.md] [--chart bench/benchmarks.svg] [--note TEXT]..."
                );
                return;
            }
            other => {
                eprintln!("error: unknown argument {other} (try --help)");
                std::process::exit(2);
            }
        }
    }
    let results = match read_results(&criterion) {
        Ok(r) if !r.is_empty() => r,
        Ok(_) => {
            eprintln!(
                "error: no estimates under {} (run `cargo bench -p doecs-bench` first)",
                criterion.display()
            );
            std::process::exit(1);
        }
        Err(e) => {
            eprintln!("error: reading {}: {e}", criterion.display());
            std::process::exit(1);
        }
    };
    let chart_name = relative_to(&chart, out.parent().unwrap_or(Path::new(".")));
    let markdown = render_markdown(&results, &chart_name, &notes);
    let svg = render_svg(&results);
    if let Err(e) = std::fs::write(&out, markdown).and_then(|()| std::fs::write(&chart, svg)) {
        eprintln!("error: writing the report: {e}");
        std::process::exit(1);
    }
    println!("wrote {} and {}", out.display(), chart.display());
}

/// `path` as written from `base` (both relative to the current directory).
fn relative_to(path: &Path, base: &Path) -> String {
    path.strip_prefix(base)
        .unwrap_or(path)
        .to_string_lossy()
        .into_owned()
}

/// Reads every `<workload>/<function>/new/estimates.json` of the known workloads.
fn read_results(dir: &Path) -> std::io::Result<Results> {
    let mut results = Results::new();
    for workload in WORKLOADS {
        let Ok(functions) = std::fs::read_dir(dir.join(workload)) else {
            continue;
        };
        for function in functions {
            let function = function?;
            let file = function.path().join("new").join("estimates.json");
            let Ok(text) = std::fs::read_to_string(&file) else {
                continue;
            };
            let json: serde_json::Value = serde_json::from_str(&text)
                .map_err(|e| std::io::Error::other(format!("{}: {e}", file.display())))?;
            let Some(median_ns) = json["median"]["point_estimate"].as_f64() else {
                return Err(std::io::Error::other(format!(
                    "{}: no median.point_estimate",
                    file.display()
                )));
            };
            let written = std::fs::metadata(&file)?.modified()?;
            results.entry(workload.to_string()).or_default().insert(
                function.file_name().to_string_lossy().into_owned(),
                Measure { median_ns, written },
            );
        }
    }
    Ok(results)
}

/// The functions of one workload in report order: the known libraries first,
/// then variants (e.g. `doecs_for_each_chunk`) by name.
fn ordered(functions: &BTreeMap<String, Measure>) -> Vec<&str> {
    let mut names: Vec<&str> = LIBRARIES
        .iter()
        .copied()
        .filter(|l| functions.contains_key(*l))
        .collect();
    names.extend(
        functions
            .keys()
            .map(String::as_str)
            .filter(|k| !LIBRARIES.contains(k)),
    );
    names
}

fn why_absent(workload: &str, library: &str) -> Option<&'static str> {
    NOT_AVAILABLE
        .iter()
        .find(|(w, l, _)| *w == workload && *l == library)
        .map(|(_, _, why)| *why)
}

fn format_time(ns: f64) -> String {
    if ns >= 1e6 {
        format!("{:.2} ms", ns / 1e6)
    } else if ns >= 1e3 {
        format!("{:.1} µs", ns / 1e3)
    } else {
        format!("{ns:.1} ns")
    }
}

fn format_ratio(value: f64, base: Option<f64>) -> String {
    match base {
        Some(b) if b > 0.0 => format!("{:.2}×", value / b),
        _ => "—".into(),
    }
}

/// (cores, CPU model) from the running machine.
fn machine() -> (usize, String) {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find_map(|l| l.strip_prefix("model name"))
        .and_then(|l| l.split_once(':'))
        .map_or_else(|| "unknown CPU".to_string(), |(_, m)| m.trim().to_string());
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    (cores, model)
}

/// `YYYY-MM-DD HH:MM UTC` of a time (civil-from-days, proleptic Gregorian).
fn utc(time: SystemTime) -> String {
    let secs = time
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let (days, rem) = ((secs / 86_400) as i64, secs % 86_400);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02} UTC",
        rem / 3600,
        rem % 3600 / 60
    )
}

fn rustc_version() -> String {
    std::process::Command::new("rustc")
        .arg("--version")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map_or_else(|| "unknown rustc".into(), |s| s.trim().to_string())
}

/// The report; each of `notes` becomes a bullet under the machine facts.
fn render_markdown(results: &Results, chart: &str, notes: &[String]) -> String {
    let (cores, model) = machine();
    let times: Vec<SystemTime> = results
        .values()
        .flat_map(|f| f.values().map(|m| m.written))
        .collect();
    let first = times
        .iter()
        .min()
        .copied()
        .unwrap_or(SystemTime::UNIX_EPOCH);
    let last = times
        .iter()
        .max()
        .copied()
        .unwrap_or(SystemTime::UNIX_EPOCH);
    let mut md = String::new();
    let _ = writeln!(md, "# Benchmarks\n");
    let _ = writeln!(
        md,
        "doecs beside hecs 0.11, bevy_ecs 0.20 (`multi_threaded`), shipyard 0.11, flecs_ecs 0.2 \
         and a hand-written structure-of-arrays baseline (the practical limit), on the \
         ecs_bench_suite workloads with glam types. Generated by \
         `cargo run --release -p doecs-bench --bin report` from criterion's estimates; \
         do not edit by hand.\n"
    );
    let _ = writeln!(md, "- **Machine:** {cores} cores, {model}");
    let _ = writeln!(md, "- **Toolchain:** {}", rustc_version());
    let _ = writeln!(
        md,
        "- **Run:** {} to {} (one `cargo bench -p doecs-bench` run; all libraries of a \
         workload measured in the same process, one after another)",
        utc(first),
        utc(last)
    );
    for note in notes {
        let _ = writeln!(md, "- {note}");
    }
    let _ = writeln!(
        md,
        "- **Reading the tables:** the median time per iteration; \"vs doecs\" is that time \
         divided by doecs' (above 1× means doecs is faster), \"vs SoA\" is it divided by the \
         hand-written baseline's (the distance from the practical limit).\n"
    );
    let _ = writeln!(md, "![Time relative to doecs, log scale]({chart})\n");
    for workload in WORKLOADS {
        let _ = writeln!(md, "## {workload}\n");
        let empty = BTreeMap::new();
        let functions = results.get(workload).unwrap_or(&empty);
        let doecs = functions.get("doecs").map(|m| m.median_ns);
        let soa = functions.get("soa_baseline").map(|m| m.median_ns);
        let _ = writeln!(md, "| library | median | vs doecs | vs SoA |");
        let _ = writeln!(md, "|---|---:|---:|---:|");
        for name in ordered(functions) {
            let m = &functions[name];
            let _ = writeln!(
                md,
                "| {name} | {} | {} | {} |",
                format_time(m.median_ns),
                format_ratio(m.median_ns, doecs),
                format_ratio(m.median_ns, soa)
            );
        }
        for library in LIBRARIES {
            if functions.contains_key(library) {
                continue;
            }
            let why = why_absent(workload, library).unwrap_or("not measured in this run");
            let _ = writeln!(md, "| {library} | n/a ({why}) | | |");
        }
        md.push('\n');
        for (_, note) in NOTES.iter().filter(|(w, _)| *w == workload) {
            let _ = writeln!(md, "{note}\n");
        }
    }
    md
}

const COLORS: [&str; 6] = [
    "#d62728", "#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e", "#7f7f7f",
];

/// Grouped horizontal bars: each library's time divided by doecs', on a log2
/// axis from 1/16× to 64× (bars beyond are clipped and labelled).
fn render_svg(results: &Results) -> String {
    let (lo, hi) = (-4.0f64, 6.0f64); // log2 range
    let (left, width, bar, gap) = (150.0, 560.0, 11.0, 14.0);
    let x = |ratio: f64| left + (ratio.log2().clamp(lo, hi) - lo) / (hi - lo) * width;
    let mut rows = String::new();
    let mut y = 40.0;
    for workload in WORKLOADS {
        let Some(functions) = results.get(workload) else {
            continue;
        };
        let Some(doecs) = functions.get("doecs").map(|m| m.median_ns) else {
            continue;
        };
        let _ = writeln!(
            rows,
            r#"<text x="{}" y="{}" font-weight="bold" text-anchor="end">{workload}</text>"#,
            left - 8.0,
            y + bar
        );
        for (library, color) in LIBRARIES.iter().zip(COLORS) {
            let Some(m) = functions.get(*library) else {
                continue;
            };
            let ratio = m.median_ns / doecs;
            let (x0, x1) = (x(1.0).min(x(ratio)), x(1.0).max(x(ratio)));
            let _ = writeln!(
                rows,
                r#"<rect x="{x0:.1}" y="{y:.1}" width="{:.1}" height="{bar}" fill="{color}"><title>{library}: {ratio:.2}× doecs</title></rect>"#,
                (x1 - x0).max(1.0)
            );
            let _ = writeln!(
                rows,
                r#"<text x="{:.1}" y="{:.1}" font-size="9">{ratio:.2}×</text>"#,
                x1 + 3.0,
                y + bar - 2.0
            );
            y += bar + 1.0;
        }
        y += gap;
    }
    let height = y + 40.0;
    let mut svg = String::new();
    let _ = writeln!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{}" height="{height}" font-family="sans-serif" font-size="11">"#,
        left + width + 60.0
    );
    let _ = writeln!(
        svg,
        r#"<rect width="100%" height="100%" fill="white"/><text x="{left}" y="18" font-size="13" font-weight="bold">Time per iteration relative to doecs (log scale; right of 1× = slower than doecs)</text>"#
    );
    for k in lo as i32..=hi as i32 {
        let r = 2f64.powi(k);
        let gx = x(r);
        let label = if k < 0 {
            format!("1/{}×", 1 << -k)
        } else {
            format!("{}×", 1 << k)
        };
        let stroke = if k == 0 { "#000" } else { "#ddd" };
        let _ = writeln!(
            svg,
            r#"<line x1="{gx:.1}" y1="28" x2="{gx:.1}" y2="{:.1}" stroke="{stroke}"/><text x="{gx:.1}" y="{:.1}" text-anchor="middle" font-size="9">{label}</text>"#,
            y,
            y + 12.0
        );
    }
    svg.push_str(&rows);
    let mut lx = left;
    for (library, color) in LIBRARIES.iter().zip(COLORS) {
        let _ = writeln!(
            svg,
            r#"<rect x="{lx}" y="{:.1}" width="10" height="10" fill="{color}"/><text x="{}" y="{:.1}">{library}</text>"#,
            y + 20.0,
            lx + 13.0,
            y + 29.0
        );
        lx += 95.0;
    }
    svg.push_str("</svg>\n");
    svg
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write_estimate(dir: &Path, workload: &str, library: &str, median_ns: f64) {
        let d = dir.join(workload).join(library).join("new");
        std::fs::create_dir_all(&d).unwrap();
        let json = format!(
            r#"{{"mean":{{"point_estimate":1.0}},"median":{{"point_estimate":{median_ns}}}}}"#
        );
        std::fs::write(d.join("estimates.json"), json).unwrap();
    }

    #[test]
    fn tables_give_ratios_to_doecs_and_to_the_baseline() {
        let dir = std::env::temp_dir().join(format!("doecs-report-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        write_estimate(&dir, "simple_iter", "doecs", 2000.0);
        write_estimate(&dir, "simple_iter", "hecs", 3000.0);
        write_estimate(&dir, "simple_iter", "soa_baseline", 1000.0);
        write_estimate(&dir, "simple_iter", "doecs_for_each_chunk", 1500.0);
        write_estimate(&dir, "not_a_workload", "doecs", 1.0);
        let results = read_results(&dir).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(results.len(), 1, "unknown workloads are ignored");
        let md = render_markdown(&results, "chart.svg", &["**Load:** busy".to_string()]);
        assert!(md.contains("\n- **Load:** busy\n"), "{md}");
        assert!(md.contains("| doecs | 2.0 µs | 1.00× | 2.00× |"), "{md}");
        assert!(md.contains("| hecs | 3.0 µs | 1.50× | 3.00× |"), "{md}");
        assert!(
            md.contains("| doecs_for_each_chunk | 1.5 µs | 0.75× | 1.50× |"),
            "{md}"
        );
        assert!(md.contains("| bevy_ecs | n/a (not measured in this run) | | |"));
        assert!(md.contains("| hecs | n/a (no scheduler in the crate) | | |"));
        assert!(md.contains("![Time relative to doecs, log scale](chart.svg)"));
        let svg = render_svg(&results);
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        assert!(svg.contains("hecs: 1.50× doecs"));
    }

    #[test]
    fn utc_dates() {
        assert_eq!(utc(SystemTime::UNIX_EPOCH), "1970-01-01 00:00 UTC");
        let t = SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(951_782_400 + 3_660);
        assert_eq!(utc(t), "2000-02-29 01:01 UTC");
    }

    #[test]
    fn times_are_formatted_in_their_unit() {
        assert_eq!(format_time(12.34), "12.3 ns");
        assert_eq!(format_time(12_340.0), "12.3 µs");
        assert_eq!(format_time(12_340_000.0), "12.34 ms");
        assert_eq!(format_ratio(3.0, None), "—");
    }
}
