#![doc = include_str!("../README.md")]

mod args;
mod names;
mod query;

use doecs_cli::{demo_level, input, play, registry, rollback, run, saves};

use clap::{CommandFactory, Parser, Subcommand};
use doecs::{AppError, World};
use doecs_inspect::InspectorHandle;
use doecs_resource::{AlignedBytes, BlobView, SpawnOptions, MAGIC};
use indicatif::{ProgressBar, ProgressStyle};
use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

/// Compile, inspect and run doecs entity resources (levels and prefabs).
#[derive(Parser, Debug)]
#[command(name = "doecs", version, about, long_about = None, args_conflicts_with_subcommands = true)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    /// With no subcommand: `run` options.
    #[command(flatten)]
    run: RunArgs,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Compile a JSON level or prefab to a binary blob.
    Compile {
        /// The JSON level.
        input: PathBuf,
        /// Where to write the blob (default: the input with extension `.doecs`).
        #[arg(short, long)]
        output: Option<PathBuf>,
        #[command(flatten)]
        limit: InputLimit,
    },
    /// Summarise a compiled blob: entities, component types, hierarchy depth, names.
    Inspect {
        /// The blob.
        input: PathBuf,
        /// List at most N named entities (the tree, and the matches of --find; 0: counts only)
        #[arg(long, value_name = "N", default_value_t = names::DEFAULT_NAMES)]
        names: usize,
        /// Instead of the summary, show the entity at a path ("ship3/ship3.part1") or every entity with a name ("ship3")
        ///
        /// Each with its path, blob entity index, components and parent. A
        /// QUERY with a `/` is a path of names from a root down; one without
        /// is a name, which several entities may share. Nothing found is an
        /// error (exit status 1).
        #[arg(long, value_name = "QUERY")]
        find: Option<String>,
        #[command(flatten)]
        limit: InputLimit,
    },
    /// Spawn a level into a world and run physics and transform updates.
    Run(RunArgs),
    /// Play the demo fleet under rollback netcode: two processes over UDP, or a local sync test.
    Play(play::PlayArgs),
    /// List the entities of a level that match a query (the inspector's query language)
    ///
    /// QUERY is a comma-separated list of terms: `position` (has it),
    /// `!spin` (has not), `?Name` (either; shown when present), `(ChildOf,
    /// ship3)` (a pair; the target an entity name, path, id such as 12v0,
    /// `*` for any, or a `$variable` that binds it, and terms naming one
    /// variable must agree), `Changed(mass)` and `Added(mass)` (changes
    /// after --since). The level is spawned as `run` spawns it. A query
    /// error names its column and exits with status 1.
    Query {
        /// A compiled blob or a JSON level.
        level: PathBuf,
        /// The query, e.g. "position, velocity, !spin" or "spin, (ChildOf, $part), (ChildOf, ship3)".
        query: String,
        /// Print each result's component values.
        #[arg(long)]
        values: bool,
        /// Print at most N results (0: only the count)
        #[arg(long, value_name = "N", default_value_t = 100)]
        limit: usize,
        /// Skip the first N results.
        #[arg(long, value_name = "N", default_value_t = 0)]
        offset: usize,
        /// Changed(X) and Added(X) count changes stamped after TICK (default 0: the spawn counts)
        #[arg(long, value_name = "TICK", default_value_t = 0)]
        since: u64,
        #[command(flatten)]
        input: InputLimit,
    },
    /// Write the bundled demo level as JSON.
    DemoLevel {
        /// Where to write it.
        #[arg(short, long, default_value = "demo.json")]
        output: PathBuf,
        /// Number of ships (13 entities each; at most 1,000,000)
        ///
        /// The limit, 13,000,000 entities, is about 1.4 GB of JSON (and about
        /// 5 GB of memory at the peak for `doecs run`). From 100,000 ships
        /// on, progress is shown.
        #[arg(long, default_value_t = demo_level::DEFAULT_SHIPS)]
        ships: usize,
    },
}

/// The size limit on the files read (levels, blobs, saves).
#[derive(clap::Args, Debug, Clone, Copy)]
struct InputLimit {
    /// Refuse a level, blob or save larger than BYTES (2 GiB by default)
    ///
    /// The file is read up to the limit and refused if more follows, so a
    /// device such as /dev/zero cannot fill memory. The default is above
    /// the largest demo level (`demo-level --ships 1000000`, about 1.4 GB).
    #[arg(long, value_name = "BYTES", default_value_t = input::DEFAULT_MAX_INPUT_BYTES)]
    max_input_bytes: u64,
}

#[derive(clap::Args, Debug)]
struct RunArgs {
    /// A compiled blob or a JSON level (default: the bundled demo level).
    level: Option<PathBuf>,
    /// Frames to run (at most 1,000,000,000)
    ///
    /// Nothing is kept per frame: the frame-time percentiles come from a
    /// fixed-size histogram, within 0.4% of the exact ones (the mean and
    /// the max are exact).
    #[arg(long, default_value_t = 600)]
    frames: usize,
    /// Worker threads (default: all cores; at most 4 × the cores, never more than 1024)
    ///
    /// The physics systems split their work per archetype chunk, so more
    /// threads than that only add scheduling overhead, and thousands of
    /// threads exhaust memory instead of running.
    #[arg(long)]
    threads: Option<usize>,
    /// Ships in the bundled demo level (13 entities each; at most 1,000,000; ignored with a level file)
    ///
    /// The limit, 13,000,000 entities, keeps the run within about 5 GB of
    /// memory at the peak (JSON text, compiled blob and the world). From
    /// 100,000 ships on, `run` says what it is doing and shows progress.
    #[arg(long, default_value_t = demo_level::DEFAULT_SHIPS)]
    ships: usize,
    /// Refuse component types this program does not know.
    #[arg(long)]
    strict: bool,
    /// No progress bar.
    #[arg(long, short)]
    quiet: bool,
    /// Serve the inspector (a web page and a JSON API) while running, on ADDR
    ///
    /// ADDR is HOST:PORT or PORT (default 127.0.0.1:8370, loopback only);
    /// port 0 picks a free port. The address is printed on start. Requests
    /// are answered between frames; the simulation keeps running. Write
    /// `--inspect=ADDR` when a level file follows.
    #[arg(long, value_name = "ADDR", num_args = 0..=1, default_missing_value = doecs_inspect::DEFAULT_ADDR)]
    inspect: Option<String>,
    /// Let the inspector edit the world (set component values, despawn); implies --inspect
    #[arg(long)]
    inspect_write: bool,
    /// Run at most this many frames per second, 0.001 to 10000 (default: as fast as possible)
    ///
    /// With --inspect, the time between frames is spent answering requests.
    #[arg(long, value_name = "FPS")]
    fps: Option<f64>,
    /// Check determinism under rollback: after every frame, re-simulate the last N frames from a snapshot and compare world hashes (1 to 1000)
    ///
    /// The "sync test" of rollback netcode: the world is snapshot before
    /// every frame into a ring of N reused snapshots, and the hash after
    /// re-simulation must equal the forward run's, or the run stops with an
    /// error naming the frame. The report adds the mean cost per frame of
    /// the snapshot, the restore and the re-simulation. Not with --inspect.
    #[arg(long, value_name = "N")]
    rollback: Option<usize>,
    /// After the frames, save the world to PATH (JSON if PATH ends in .json, else the binary format)
    ///
    /// Every entity keeps its id; the components and the transform
    /// hierarchy are saved, and `--load PATH` runs on from them.
    #[arg(long, value_name = "PATH")]
    save: Option<PathBuf>,
    /// Start from a world saved with --save instead of a level (either format)
    #[arg(long, value_name = "PATH")]
    load: Option<PathBuf>,
    #[command(flatten)]
    limit: InputLimit,
}

fn main() -> ExitCode {
    let args: Vec<OsString> = std::env::args_os().collect();
    if let Some(typo) = args::subcommand_typo(&args, &mut Cli::command()) {
        typo.exit();
    }
    let cli = Cli::parse_from(args);
    let result = match cli.command {
        None => run(cli.run),
        Some(Command::Run(args)) => run(args),
        Some(Command::Compile {
            input,
            output,
            limit,
        }) => compile(&input, output, limit),
        Some(Command::Inspect {
            input,
            names,
            find,
            limit,
        }) => inspect(&input, names, find.as_deref(), limit),
        Some(Command::DemoLevel { output, ships }) => demo(&output, ships),
        Some(Command::Play(args)) => play::play(args),
        Some(Command::Query {
            level,
            query,
            values,
            limit,
            offset,
            since,
            input,
        }) => {
            let options = query::Options {
                values,
                offset,
                limit,
                since,
            };
            query::query(&query, || read(&level, input), &level, options)
                .map(|out| doecs_cli::out!("{out}"))
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}

/// Reads a file the user named, within `--max-input-bytes`.
fn read(path: &Path, limit: InputLimit) -> Result<Vec<u8>, String> {
    input::read_limited(path, limit.max_input_bytes).map_err(|e| e.to_string())
}

fn write(path: &Path, bytes: &[u8]) -> Result<(), String> {
    std::fs::write(path, bytes).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

fn compile_json(text: &[u8], path: &Path) -> Result<Vec<u8>, String> {
    let text =
        std::str::from_utf8(text).map_err(|_| format!("{} is not UTF-8 text", path.display()))?;
    let (compiler, _) = registry::compiler_and_spawner();
    compiler
        .compile_str(text)
        .map_err(|e| format!("{}: {e}", path.display()))
}

fn compile(input: &Path, output: Option<PathBuf>, limit: InputLimit) -> Result<(), String> {
    let output = output.unwrap_or_else(|| input.with_extension("doecs"));
    let start = Instant::now();
    let blob = compile_json(&read(input, limit)?, input)?;
    let view = BlobView::parse(&blob)
        .map_err(|e| format!("internal error, compiled blob invalid: {e}"))?;
    write(&output, &blob)?;
    doecs_cli::outln!(
        "compiled {} -> {}: {} entities, {} component types, {} bytes in {:.1} ms",
        input.display(),
        output.display(),
        view.num_entities(),
        view.blocks().len(),
        blob.len(),
        start.elapsed().as_secs_f64() * 1e3
    );
    Ok(())
}

/// `doecs inspect`: the summary, or with `find` the entities it names.
fn inspect(
    input: &Path,
    names: usize,
    find: Option<&str>,
    limit: InputLimit,
) -> Result<(), String> {
    // A bad query is refused before the blob is read.
    let query = find
        .map(names::Query::parse)
        .transpose()
        .map_err(|e| e.to_string())?;
    let bytes = AlignedBytes::from_slice(&read(input, limit)?);
    let in_input = |e: String| format!("{}: {e}", input.display());
    let view = BlobView::parse(&bytes).map_err(|e| in_input(e.to_string()))?;
    let (_, spawner) = registry::compiler_and_spawner();
    if let Some(query) = query {
        let level = names::Level::spawn(&view, &spawner).map_err(in_input)?;
        let found = level
            .find(query, names)
            .map_err(|e| in_input(e.to_string()))?;
        doecs_cli::out!("{found}");
        return Ok(());
    }
    let roots = view
        .parent_index()
        .iter()
        .filter(|&p| p == doecs_resource::NO_PARENT)
        .count();
    doecs_cli::outln!(
        "{}: {} bytes, format version {}",
        input.display(),
        bytes.len(),
        doecs_resource::FORMAT_VERSION
    );
    doecs_cli::outln!(
        "entities: {} ({} roots), hierarchy depth {}",
        view.num_entities(),
        roots,
        view.hierarchy_depth()
    );
    doecs_cli::outln!("component types (spawn order): {}", view.blocks().len());
    doecs_cli::outln!(
        "  {:<22} {:>10} {:>10} {:>12}",
        "component",
        "instances",
        "size",
        "bytes"
    );
    for b in view.blocks() {
        doecs_cli::outln!(
            "  {:<22} {:>10} {:>10} {:>12}",
            names::component_name(&spawner, b),
            b.num_instances(),
            b.instance_size,
            b.data.len()
        );
    }
    print_prefabs(&view);
    print_names(&view, &spawner, names).map_err(in_input)
}

/// The summary's names: how many entities are named, and at most `limit`
/// of them as a tree. The blob is spawned only to list some, so a blob
/// whose values do not pass the spawner's checks still gets the rest of
/// its summary first.
fn print_names(
    view: &BlobView<'_>,
    spawner: &doecs_resource::Spawner,
    limit: usize,
) -> Result<(), String> {
    let named = names::named_count(view);
    if named == 0 {
        doecs_cli::outln!("named entities: none");
        return Ok(());
    }
    if limit == 0 {
        doecs_cli::outln!("named entities: {named} (--names N lists them)");
        return Ok(());
    }
    let level = names::Level::spawn(view, spawner)
        .map_err(|e| format!("{e} (--names 0 skips the list)"))?;
    doecs_cli::outln!(
        "named entities: {named} of {}, as a tree (path, blob entity index, components):",
        view.num_entities()
    );
    doecs_cli::out!("{}", level.tree(limit));
    Ok(())
}

/// The blob's prefabs (`prefab` blocks) and how many instances (`is_a`)
/// each has, by blob entity index.
fn print_prefabs(view: &BlobView<'_>) {
    let block = |name: &str| {
        let hash = doecs::raw::name_hash(name);
        view.blocks().iter().find(|b| b.component == hash)
    };
    // A block's entity indices are strictly increasing (checked on load),
    // so the prefab list is sorted and searched by halves.
    let prefabs: Vec<u32> = block(doecs_resource::PREFAB)
        .map(|b| b.entity_index.iter().collect())
        .unwrap_or_default();
    let is_prefab = |p: &u32| prefabs.binary_search(p).is_ok();
    let mut instances = std::collections::BTreeMap::<u32, usize>::new();
    if let Some(b) = block(doecs_resource::IS_A) {
        for i in 0..b.num_instances() {
            if let Some(bytes) = b.instance(i).and_then(|x| <[u8; 4]>::try_from(x).ok()) {
                *instances.entry(u32::from_le_bytes(bytes)).or_default() += 1;
            }
        }
    }
    if prefabs.is_empty() && instances.is_empty() {
        return;
    }
    doecs_cli::outln!(
        "prefabs: {}, instances of prefabs: {}",
        prefabs.len(),
        instances.values().sum::<usize>()
    );
    let mut shown: Vec<u32> = prefabs.clone();
    shown.extend(instances.keys().filter(|k| !is_prefab(k)));
    for p in shown {
        let n = instances.get(&p).copied().unwrap_or(0);
        let kind = if is_prefab(&p) { "prefab" } else { "entity" };
        doecs_cli::outln!(
            "  {kind} {p}: {n} instance{}",
            if n == 1 { "" } else { "s" }
        );
    }
}

/// A progress bar over `ships` ships (drawn only on a terminal), hidden
/// for small levels or when `quiet`.
fn ships_bar(ships: usize, quiet: bool) -> ProgressBar {
    if quiet || ships < demo_level::LARGE_SHIPS {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(ships as u64);
    bar.set_style(
        ProgressStyle::with_template("{spinner} ship {pos}/{len} [{bar:40}] {elapsed_precise}")
            .expect("valid template")
            .progress_chars("=> "),
    );
    bar
}

/// A spinner with `message` (drawn only on a terminal), hidden unless
/// `large` and not `quiet`.
fn spinner(message: String, large: bool, quiet: bool) -> ProgressBar {
    if quiet || !large {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new_spinner().with_message(message);
    bar.enable_steady_tick(std::time::Duration::from_millis(100));
    bar
}

/// A writer that counts the bytes written through it.
struct Counting<W> {
    inner: W,
    bytes: u64,
}

impl<W: Write> Write for Counting<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.bytes += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

fn demo(output: &Path, ships: usize) -> Result<(), String> {
    demo_level::check_ships(ships)?;
    let start = Instant::now();
    if ships >= demo_level::LARGE_SHIPS {
        doecs_cli::outln!(
            "writing the demo level to {}: {ships} ships, {} entities",
            output.display(),
            demo_level::entity_count(ships)
        );
    }
    let cannot = |e: std::io::Error| format!("cannot write {}: {e}", output.display());
    let file = std::fs::File::create(output).map_err(cannot)?;
    let mut out = Counting {
        inner: std::io::BufWriter::with_capacity(1 << 20, file),
        bytes: 0,
    };
    let bar = ships_bar(ships, false);
    let written = demo_level::write_demo_level(&mut out, ships, |n| bar.set_position(n as u64))
        .and_then(|()| out.flush());
    bar.finish_and_clear();
    written.map_err(cannot)?;
    let bytes = out.bytes;
    doecs_cli::outln!(
        "wrote {} ({} entities, {} bytes) in {:.1} ms",
        output.display(),
        demo_level::entity_count(ships),
        bytes,
        start.elapsed().as_secs_f64() * 1e3
    );
    Ok(())
}

fn run(args: RunArgs) -> Result<(), String> {
    args::check_frames(args.frames)?;
    let threads = args::check_threads(args.threads, args::cores())?;
    let pace = args::check_fps(args.fps)?;
    let inspecting = args.inspect.is_some() || args.inspect_write;
    let rollback = rollback::check_args(args.rollback, inspecting, args.frames)?;
    demo_level::check_ships(args.ships)?;
    let world = match &args.load {
        Some(path) => {
            if args.level.is_some() {
                return Err("give either a level or --load, not both".into());
            }
            saves::load(path, args.limit.max_input_bytes)?
        }
        None => spawn_level(&args)?,
    };
    doecs_cli::outln!("running {} frames on {} threads", args.frames, threads);
    let options = run::RunOptions {
        frames: args.frames,
        threads,
        quiet: args.quiet,
        pace,
    };
    let job = run::Job {
        options,
        rollback,
        inspector: inspector_config(&args),
        save: args.save.clone(),
    };
    let mut app = run::job_app(world, &job).map_err(|e| app_error(e, &args))?;
    let inspector = app.world().resource::<InspectorHandle>().cloned();
    if let Some(inspector) = &inspector {
        let access = if args.inspect_write {
            "read and write"
        } else {
            "read-only"
        };
        doecs_cli::outln!("inspector: {} ({access})", inspector.url());
        doecs_cli::out::flush();
    }
    app.run().map_err(|e| app_error(e, &args))?;
    let world = app.world();
    match world.resource::<rollback::RollbackReport>() {
        Some(report) => {
            doecs_cli::out!("{}", run::format_report(&report.run));
            doecs_cli::outln!("{}", rollback::format_report(report));
        }
        None => {
            let stats = inspector.map(|i| i.stats());
            doecs_cli::out!("{}", run::format_report(&run::report_of(world, stats)));
        }
    }
    match world.resource::<saves::SaveOutcome>() {
        Some(saves::SaveOutcome(outcome)) => outcome.clone(),
        None => Ok(()),
    }
}

/// Compiles (when JSON) and spawns the level of `args` (the bundled demo
/// level by default) into a new world with the transform manager.
fn spawn_level(args: &RunArgs) -> Result<World, String> {
    let mut start = Instant::now();
    let (source, blob) = match &args.level {
        None => {
            let large = args.ships >= demo_level::LARGE_SHIPS;
            if large {
                doecs_cli::outln!(
                    "generating the demo level: {} ships, {} entities",
                    args.ships,
                    demo_level::entity_count(args.ships)
                );
            }
            let bar = ships_bar(args.ships, args.quiet);
            let json = demo_level::demo_level_json(args.ships, |n| bar.set_position(n as u64));
            bar.finish_and_clear();
            doecs_cli::outln!(
                "generated the demo level JSON ({} bytes) in {:.1} ms",
                json.len(),
                start.elapsed().as_secs_f64() * 1e3
            );
            doecs_cli::out::flush();
            start = Instant::now();
            let message = format!("compiling {} MB of JSON", json.len() >> 20);
            let bar = spinner(message, large, args.quiet);
            let blob = compile_json(&json, Path::new("demo level"));
            bar.finish_and_clear();
            (format!("bundled demo level ({} ships)", args.ships), blob?)
        }
        Some(path) => {
            let bytes = read(path, args.limit)?;
            if bytes.starts_with(&MAGIC) {
                (path.display().to_string(), bytes)
            } else {
                (path.display().to_string(), compile_json(&bytes, path)?)
            }
        }
    };
    let compile_time = start.elapsed();
    let aligned = AlignedBytes::from_slice(&blob);
    drop(blob);
    let blob = aligned;
    let (_, spawner) = registry::compiler_and_spawner();
    let options = SpawnOptions {
        strict: args.strict,
    };
    let mut world = World::new();
    // Every node moves every frame: the deferred manager only marks moved
    // nodes, and the schedule's `propagate` system updates them in one pass.
    world.add_manager(
        doecs_transform::TransformManager::deferred(),
        doecs::DestroyNotice::Callback,
    );
    let t0 = Instant::now();
    let (view, skipped) = spawner
        .load(&blob, options)
        .map_err(|e| format!("{source}: {e}"))?;
    let load_time = t0.elapsed();
    let large = view.num_entities() >= demo_level::entity_count(demo_level::LARGE_SHIPS);
    if large {
        doecs_cli::outln!("spawning {} entities", view.num_entities());
    }
    let t1 = Instant::now();
    let bar = spinner("spawning".into(), large, args.quiet);
    let spawned = spawner.spawn_loaded(&mut world, &view, skipped);
    bar.finish_and_clear();
    let spawned = spawned.map_err(|e| format!("{source}: {e}"))?;
    let spawn_time = t1.elapsed();
    doecs_cli::outln!(
        "{source}: {} entities, {} component instances, depth {}, {} bytes",
        spawned.entities.len(),
        spawned.instances,
        view.hierarchy_depth(),
        blob.len()
    );
    for s in &spawned.skipped {
        doecs_cli::outln!(
            "  skipped unknown component type {:#018x}: {} instances, {} bytes",
            s.component,
            s.instances,
            s.bytes
        );
    }
    doecs_cli::outln!(
        "  compile {:.2} ms, validate {:.3} ms, spawn {:.3} ms",
        compile_time.as_secs_f64() * 1e3,
        load_time.as_secs_f64() * 1e3,
        spawn_time.as_secs_f64() * 1e3,
    );
    Ok(world)
}

/// Starts the inspector when `--inspect` or `--inspect-write` asks for one,
/// and prints its address.
/// The inspector `--inspect` or `--inspect-write` asks for, if any.
fn inspector_config(args: &RunArgs) -> Option<doecs_inspect::InspectorConfig> {
    if args.inspect.is_none() && !args.inspect_write {
        return None;
    }
    let addr = args
        .inspect
        .as_deref()
        .unwrap_or(doecs_inspect::DEFAULT_ADDR);
    Some(
        doecs_inspect::InspectorConfig::new(addr)
            .write(args.inspect_write)
            .registry(registry::component_registry()),
    )
}

/// The app's error as one line: a plugin's failure as the plugin says it
/// (the sync test's desync, say); an inspector that could not start on an
/// address that names a file gets a hint (`--inspect` took the level).
fn app_error(e: AppError, args: &RunArgs) -> String {
    match &e {
        AppError::Plugin { source, .. } => {
            let addr = args.inspect.as_deref().unwrap_or_default();
            if !addr.is_empty() && Path::new(addr).exists() {
                format!(
                    "{source} (--inspect took the level file as its address: \
                     write --inspect=ADDR, or put the level first)"
                )
            } else {
                source.to_string()
            }
        }
        other => other.to_string(),
    }
}
