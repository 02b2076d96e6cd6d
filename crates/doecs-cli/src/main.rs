#![doc = include_str!("../README.md")]

mod components;
mod demo_level;
mod run;

use clap::{Parser, Subcommand};
use doecs::World;
use doecs_resource::{AlignedBytes, BlobView, SpawnOptions, MAGIC};
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
    },
    /// Summarise a compiled blob: entities, component types, hierarchy depth.
    Inspect {
        /// The blob.
        input: PathBuf,
    },
    /// Spawn a level into a world and run physics and transform updates.
    Run(RunArgs),
    /// Write the bundled demo level as JSON.
    DemoLevel {
        /// Where to write it.
        #[arg(short, long, default_value = "demo.json")]
        output: PathBuf,
        /// Number of ships (13 entities each).
        #[arg(long, default_value_t = demo_level::DEFAULT_SHIPS)]
        ships: usize,
    },
}

#[derive(clap::Args, Debug)]
struct RunArgs {
    /// A compiled blob or a JSON level (default: the bundled demo level).
    level: Option<PathBuf>,
    /// Frames to run.
    #[arg(long, default_value_t = 600)]
    frames: usize,
    /// Worker threads (default: all cores).
    #[arg(long)]
    threads: Option<usize>,
    /// Ships in the bundled demo level (ignored with a level file).
    #[arg(long, default_value_t = demo_level::DEFAULT_SHIPS)]
    ships: usize,
    /// Refuse component types this program does not know.
    #[arg(long)]
    strict: bool,
    /// No progress bar.
    #[arg(long, short)]
    quiet: bool,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        None => run(cli.run),
        Some(Command::Run(args)) => run(args),
        Some(Command::Compile { input, output }) => compile(&input, output),
        Some(Command::Inspect { input }) => inspect(&input),
        Some(Command::DemoLevel { output, ships }) => demo(&output, ships),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}

fn read(path: &Path) -> Result<Vec<u8>, String> {
    std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
}

fn write(path: &Path, bytes: &[u8]) -> Result<(), String> {
    std::fs::write(path, bytes).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

fn compile_json(text: &[u8], path: &Path) -> Result<Vec<u8>, String> {
    let text =
        std::str::from_utf8(text).map_err(|_| format!("{} is not UTF-8 text", path.display()))?;
    let (compiler, _) = components::registry();
    compiler
        .compile_str(text)
        .map_err(|e| format!("{}: {e}", path.display()))
}

fn compile(input: &Path, output: Option<PathBuf>) -> Result<(), String> {
    let output = output.unwrap_or_else(|| input.with_extension("doecs"));
    let start = Instant::now();
    let blob = compile_json(&read(input)?, input)?;
    let view = BlobView::parse(&blob)
        .map_err(|e| format!("internal error, compiled blob invalid: {e}"))?;
    write(&output, &blob)?;
    println!(
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

fn inspect(input: &Path) -> Result<(), String> {
    let bytes = AlignedBytes::from_slice(&read(input)?);
    let view = BlobView::parse(&bytes).map_err(|e| format!("{}: {e}", input.display()))?;
    let (_, spawner) = components::registry();
    let roots = view
        .parent_index()
        .iter()
        .filter(|&p| p == doecs_resource::NO_PARENT)
        .count();
    println!(
        "{}: {} bytes, format version {}",
        input.display(),
        bytes.len(),
        doecs_resource::FORMAT_VERSION
    );
    println!(
        "entities: {} ({} roots), hierarchy depth {}",
        view.num_entities(),
        roots,
        view.hierarchy_depth()
    );
    println!("component types (spawn order): {}", view.blocks().len());
    println!(
        "  {:<22} {:>10} {:>10} {:>12}",
        "component", "instances", "size", "bytes"
    );
    for b in view.blocks() {
        let name = spawner
            .name_of(b.component)
            .map(str::to_owned)
            .unwrap_or_else(|| format!("unknown {:#018x}", b.component));
        println!(
            "  {:<22} {:>10} {:>10} {:>12}",
            name,
            b.num_instances(),
            b.instance_size,
            b.data.len()
        );
    }
    Ok(())
}

fn demo(output: &Path, ships: usize) -> Result<(), String> {
    let json = demo_level::demo_level_json(ships);
    write(output, json.as_bytes())?;
    println!(
        "wrote {} ({} entities, {} bytes)",
        output.display(),
        demo_level::entity_count(ships),
        json.len()
    );
    Ok(())
}

fn run(args: RunArgs) -> Result<(), String> {
    if args.frames == 0 {
        return Err("--frames must be at least 1".into());
    }
    let threads = match args.threads {
        Some(0) => return Err("--threads must be at least 1".into()),
        Some(t) => t,
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    let mut start = Instant::now();
    let (source, blob) = match &args.level {
        None => {
            let json = demo_level::demo_level_json(args.ships);
            println!(
                "generated the demo level JSON ({} bytes) in {:.1} ms",
                json.len(),
                start.elapsed().as_secs_f64() * 1e3
            );
            start = Instant::now();
            let blob = compile_json(json.as_bytes(), Path::new("demo level"))?;
            (format!("bundled demo level ({} ships)", args.ships), blob)
        }
        Some(path) => {
            let bytes = read(path)?;
            if bytes.starts_with(&MAGIC) {
                (path.display().to_string(), bytes)
            } else {
                (path.display().to_string(), compile_json(&bytes, path)?)
            }
        }
    };
    let compile_time = start.elapsed();
    let blob = AlignedBytes::from_slice(&blob);
    let (_, spawner) = components::registry();
    let options = SpawnOptions {
        strict: args.strict,
    };
    let mut world = World::new();
    let t0 = Instant::now();
    let (view, skipped) = spawner
        .load(&blob, options)
        .map_err(|e| format!("{source}: {e}"))?;
    let load_time = t0.elapsed();
    let t1 = Instant::now();
    let spawned = spawner
        .spawn_loaded(&mut world, &view, skipped)
        .map_err(|e| format!("{source}: {e}"))?;
    let spawn_time = t1.elapsed();
    println!(
        "{source}: {} entities, {} component instances, depth {}, {} bytes",
        spawned.entities.len(),
        spawned.instances,
        view.hierarchy_depth(),
        blob.len()
    );
    for s in &spawned.skipped {
        println!(
            "  skipped unknown component type {:#018x}: {} instances, {} bytes",
            s.component, s.instances, s.bytes
        );
    }
    println!(
        "  compile {:.2} ms, validate {:.3} ms, spawn {:.3} ms; running {} frames on {} threads",
        compile_time.as_secs_f64() * 1e3,
        load_time.as_secs_f64() * 1e3,
        spawn_time.as_secs_f64() * 1e3,
        args.frames,
        threads
    );
    let report = run::run_frames(&mut world, args.frames, threads, args.quiet)?;
    print!("{}", run::format_report(&report));
    Ok(())
}
