//! Writes `BENCHMARKS.md` and its bar chart from criterion's saved estimates.
//!
//! Usage: `report [--criterion DIR] [--out FILE] [--chart FILE] [--scaling FILE]`.
//! It reads `DIR/<workload>/<library>/new/estimates.json` (DIR defaults to
//! `$CARGO_TARGET_DIR/criterion`, else `target/criterion`), takes each median,
//! and writes one table per workload with every library's ratio to doecs and
//! to the hand-written SoA baseline, the machine (cores, CPU model), the date
//! of the run, an SVG chart of the ratios to doecs, and an SVG curve of the
//! `simple_iter_<size>` workloads (time per entity against size). When the
//! memory binary (`--bin memory -- --json`) and the instruction-count benches
//! (`bench/instructions.sh`) left their JSON files in the target directory,
//! their tables are added too. Every figure comes from the files; nothing is
//! typed in.

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
    let target =
        PathBuf::from(std::env::var("CARGO_TARGET_DIR").unwrap_or_else(|_| "target".into()));
    let mut criterion = target.join("criterion");
    let mut out = PathBuf::from("BENCHMARKS.md");
    let mut chart = PathBuf::from("bench/benchmarks.svg");
    let mut scaling = PathBuf::from("bench/scaling.svg");
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
            "--scaling" => scaling = value().into(),
            "--note" => notes.push(value()),
            "-h" | "--help" => {
                println!(
                    "report [--criterion DIR] [--out BENCHMARKS.md] [--chart bench/benchmarks.svg] [--scaling bench/scaling.svg] [--note TEXT]..."
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
    let base = out.parent().unwrap_or(Path::new("."));
    let charts = (relative_to(&chart, base), relative_to(&scaling, base));
    let extras = Extras {
        memory: read_json(&target.join("doecs-memory.json")),
        instructions: read_json(&target.join("doecs-instructions.json")),
    };
    let markdown = render_markdown(&results, &charts, &notes, &extras);
    let svg = render_svg(&results);
    let curve = render_scaling(&results);
    let written = std::fs::write(&out, markdown)
        .and_then(|()| std::fs::write(&chart, svg))
        .and_then(|()| std::fs::write(&scaling, curve));
    if let Err(e) = written {
        eprintln!("error: writing the report: {e}");
        std::process::exit(1);
    }
    println!(
        "wrote {}, {} and {}",
        out.display(),
        chart.display(),
        scaling.display()
    );
}

/// Results of other tools, if their files exist.
struct Extras {
    /// The memory binary's JSON.
    memory: Option<serde_json::Value>,
    /// The instruction-count summary's JSON.
    instructions: Option<serde_json::Value>,
}

fn read_json(path: &Path) -> Option<serde_json::Value> {
    serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()
}

/// The memory table, from the memory binary's JSON.
fn render_memory(md: &mut String, memory: &serde_json::Value) {
    let entities = memory["entities"].as_u64().unwrap_or(0);
    let _ = writeln!(
        md,
        "## memory
"
    );
    let _ = writeln!(
        md,
        "Peak memory while spawning {entities} entities with (Transform, Position, Rotation, \
         Velocity), 100 bytes of components each, through each library's batch path \
         (`cargo run --release -p doecs-bench --bin memory`). Heap: the most bytes Rust's \
         allocator had handed out at once (flecs_ecs allocates in C, unseen there); RSS: the \
         rise of the resident-set high-water mark.\n"
    );
    let _ = writeln!(md, "| library | peak heap | vs doecs | peak RSS rise |");
    let _ = writeln!(md, "|---|---:|---:|---:|");
    let rows = memory["libraries"].as_array().cloned().unwrap_or_default();
    let doecs = rows
        .iter()
        .find(|r| r["library"] == "doecs")
        .and_then(|r| r["heap_bytes"].as_f64());
    let mib = |b: f64| format!("{:.1} MiB", b / (1024.0 * 1024.0));
    for row in &rows {
        let heap = row["heap_bytes"].as_f64();
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} |",
            row["library"].as_str().unwrap_or("?"),
            heap.map_or("n/a".into(), mib),
            heap.map_or("—".into(), |h| format_ratio(h, doecs)),
            row["rss_bytes"].as_f64().map_or("n/a".into(), mib),
        );
    }
    let _ = writeln!(
        md,
        "\n`doecs` spawns with `World::spawn_batch` and drops the ids it returns (like hecs's \
         `spawn_batch`, an iterator nobody consumes here); `doecs_spawn_batch` keeps the `Vec` \
         of a million ids.\n"
    );
}

/// The instruction-count table, from `bench/instructions.sh`'s JSON: an object
/// of workloads, each an object of library to instruction count.
fn render_instructions(md: &mut String, instructions: &serde_json::Value) {
    let Some(workloads) = instructions["workloads"].as_object() else {
        return;
    };
    let _ = writeln!(
        md,
        "## instructions
"
    );
    let _ = writeln!(
        md,
        "Instructions executed per run of each workload under callgrind (`bench/instructions.sh`, \
         iai-callgrind): exactly repeatable for the same binary whatever else the machine is \
         doing, so they show what the noisy timings above cannot. Lower is better.\n"
    );
    let _ = writeln!(md, "| workload | library | instructions | vs doecs |");
    let _ = writeln!(md, "|---|---|---:|---:|");
    for (workload, libraries) in workloads {
        let Some(libraries) = libraries.as_object() else {
            continue;
        };
        let doecs = libraries.get("doecs").and_then(|v| v.as_f64());
        for (library, ir) in libraries {
            let Some(ir) = ir.as_f64() else { continue };
            let _ = writeln!(
                md,
                "| {workload} | {library} | {} | {} |",
                ir as u64,
                format_ratio(ir, doecs)
            );
        }
    }
    md.push('\n');
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
fn render_markdown(
    results: &Results,
    (chart, scaling): &(String, String),
    notes: &[String],
    extras: &Extras,
) -> String {
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
    let _ = writeln!(
        md,
        "![pos += vel: time per entity from 1,000 to 4,000,000 entities]({scaling})\n"
    );
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
    if let Some(memory) = &extras.memory {
        render_memory(&mut md, memory);
    }
    if let Some(instructions) = &extras.instructions {
        render_instructions(&mut md, instructions);
    }
    md
}

/// The sizes of the scaling workloads: (workload, entities).
const SCALING: [(&str, f64); 5] = [
    ("simple_iter_1k", 1e3),
    ("simple_iter_10k", 1e4),
    ("simple_iter_100k", 1e5),
    ("simple_iter_1m", 1e6),
    ("simple_iter_4m", 4e6),
];

/// Time per entity against entity count, both log scale, one line per
/// library measured at every size.
fn render_scaling(results: &Results) -> String {
    let (left, top, width, height) = (70.0, 40.0, 520.0, 300.0);
    let xs = (1e3f64.log10(), 4e6f64.log10());
    let series: Vec<(&str, Vec<(f64, f64)>)> = [
        "doecs",
        "doecs_for_each_chunk",
        "hecs",
        "bevy_ecs",
        "soa_baseline",
    ]
    .iter()
    .map(|&lib| {
        let points = SCALING
            .iter()
            .filter_map(|(w, n)| {
                let m = results.get(*w)?.get(lib)?;
                Some((*n, m.median_ns / n))
            })
            .collect();
        (lib, points)
    })
    .filter(|(_, p): &(&str, Vec<(f64, f64)>)| !p.is_empty())
    .collect();
    let all: Vec<f64> = series
        .iter()
        .flat_map(|(_, p)| p.iter().map(|q| q.1))
        .collect();
    let lo = all
        .iter()
        .copied()
        .fold(f64::INFINITY, f64::min)
        .max(1e-3)
        .log2()
        .floor();
    let hi = all
        .iter()
        .copied()
        .fold(0.0, f64::max)
        .max(1e-3)
        .log2()
        .ceil()
        .max(lo + 1.0);
    let x = |n: f64| left + (n.log10() - xs.0) / (xs.1 - xs.0) * width;
    let y = |ns: f64| top + height - (ns.log2() - lo) / (hi - lo) * height;
    let mut svg = String::new();
    let _ = writeln!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{}" height="{}" font-family="sans-serif" font-size="11">"#,
        left + width + 170.0,
        top + height + 50.0
    );
    let _ = writeln!(
        svg,
        r#"<rect width="100%" height="100%" fill="white"/><text x="{left}" y="20" font-size="13" font-weight="bold">pos += vel: nanoseconds per entity (log) against entities (log)</text>"#
    );
    for k in lo as i32..=hi as i32 {
        let v = 2f64.powi(k);
        let _ = writeln!(
            svg,
            r##"<line x1="{left}" y1="{0:.1}" x2="{1}" y2="{0:.1}" stroke="#ddd"/><text x="{2}" y="{3:.1}" text-anchor="end">{v}</text>"##,
            y(v),
            left + width,
            left - 6.0,
            y(v) + 4.0
        );
    }
    for (w, n) in SCALING {
        let label = w.trim_start_matches("simple_iter_");
        let _ = writeln!(
            svg,
            r##"<line x1="{0:.1}" y1="{top}" x2="{0:.1}" y2="{1}" stroke="#ddd"/><text x="{0:.1}" y="{2}" text-anchor="middle">{label}</text>"##,
            x(n),
            top + height,
            top + height + 16.0
        );
    }
    let colors = ["#d62728", "#ff9896", "#1f77b4", "#2ca02c", "#7f7f7f"];
    for (i, ((lib, points), color)) in series.iter().zip(colors).enumerate() {
        let path: Vec<String> = points
            .iter()
            .map(|&(n, ns)| format!("{:.1},{:.1}", x(n), y(ns)))
            .collect();
        let _ = writeln!(
            svg,
            r#"<polyline points="{}" fill="none" stroke="{color}" stroke-width="2"/>"#,
            path.join(" ")
        );
        for &(n, ns) in points {
            let _ = writeln!(
                svg,
                r#"<circle cx="{:.1}" cy="{:.1}" r="3" fill="{color}"><title>{lib}: {ns:.2} ns/entity at {n}</title></circle>"#,
                x(n),
                y(ns)
            );
        }
        let ly = top + 14.0 * i as f64;
        let _ = writeln!(
            svg,
            r#"<rect x="{0}" y="{1:.1}" width="10" height="10" fill="{color}"/><text x="{2}" y="{3:.1}">{lib}</text>"#,
            left + width + 14.0,
            ly,
            left + width + 28.0,
            ly + 9.0
        );
    }
    svg.push_str("</svg>\n");
    svg
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
        let memory = serde_json::json!({
            "entities": 10,
            "libraries": [
                {"library": "doecs", "heap_bytes": 2097152, "rss_bytes": null},
                {"library": "hecs", "heap_bytes": 1048576, "rss_bytes": 1048576}
            ]
        });
        let instructions = serde_json::json!({
            "workloads": {"simple_iter": {"doecs": 1000, "hecs": 1500}}
        });
        let extras = Extras {
            memory: Some(memory),
            instructions: Some(instructions),
        };
        let charts = ("chart.svg".to_string(), "scaling.svg".to_string());
        let md = render_markdown(&results, &charts, &["**Load:** busy".to_string()], &extras);
        assert!(md.contains("| hecs | 1.0 MiB | 0.50× | 1.0 MiB |"), "{md}");
        assert!(md.contains("| simple_iter | hecs | 1500 | 1.50× |"), "{md}");
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
    fn the_scaling_curve_has_a_point_per_measured_size() {
        let dir = std::env::temp_dir().join(format!("doecs-scaling-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        write_estimate(&dir, "simple_iter_1k", "doecs", 1000.0);
        write_estimate(&dir, "simple_iter_1m", "doecs", 2_000_000.0);
        write_estimate(&dir, "simple_iter_1m", "hecs", 3_000_000.0);
        let results = read_results(&dir).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        let svg = render_scaling(&results);
        assert!(svg.contains("doecs: 1.00 ns/entity at 1000"), "{svg}");
        assert!(svg.contains("doecs: 2.00 ns/entity at 1000000"), "{svg}");
        assert!(svg.contains("hecs: 3.00 ns/entity at 1000000"), "{svg}");
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
