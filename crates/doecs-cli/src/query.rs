//! `doecs query LEVEL QUERY`: the inspector's query language on a level,
//! without running it.
//!
//! Design. The command shares everything but the printing with the
//! inspector's `GET /api/query` ([`doecs_inspect::qlang`]): the same
//! parser, the same resolution of names through the demo's component
//! registry and the world, the same evaluator, and the same values. The
//! query is parsed before the level is read, so a typo costs nothing and
//! its error (one line: `error: query: expected ')' at column 17, found
//! ','`, exit status 1) never waits on a large level. The level (a blob,
//! or JSON compiled first) is spawned into a fresh world as `run` spawns
//! it, so names and paths are the ones a running program has; change
//! filters see the spawn itself unless `--since` is past it.
//!
//! Output: a first line with the count and the query as the language
//! prints it, then one line per result (id, name, each variable's
//! binding, the optional terms it matched), with `--values` each
//! component's value under it, and a last line saying how many more there
//! are when `--limit` cut the list.

use crate::registry;
use doecs::{ChangeWindow, Entity, Tick, World};
use doecs_inspect::components::{component_entry, display_name, of_entity};
use doecs_inspect::qlang::{parse, Plan};
use doecs_resource::{AlignedBytes, SpawnOptions, MAGIC};
use std::fmt::Write as _;
use std::path::Path;

/// What to show of the results.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// Each result's component values.
    pub values: bool,
    /// Results skipped.
    pub offset: usize,
    /// Most results shown.
    pub limit: usize,
    /// Change filters see changes stamped after this tick.
    pub since: u64,
}

/// Spawns the blob or JSON level in `bytes` into a fresh world.
fn spawn(bytes: &[u8], path: &Path) -> Result<World, String> {
    let blob = if bytes.starts_with(&MAGIC) {
        AlignedBytes::from_slice(bytes)
    } else {
        AlignedBytes::from_slice(&crate::compile_json(bytes, path)?)
    };
    let (_, spawner) = registry::compiler_and_spawner();
    let mut world = World::new();
    spawner
        .spawn(&mut world, &blob, SpawnOptions::default())
        .map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(world)
}

/// An entity as one short piece of text: `12v0 (ship3)`, or `12v0`.
fn entity_text(world: &World, e: Entity) -> String {
    match world.name_of(e) {
        Some(name) => format!("{e} ({name})"),
        None => e.to_string(),
    }
}

/// Runs `text` on the level read from `bytes` (named `path`) and returns
/// what to print.
///
/// # Errors
/// One line: a query that does not parse or names nothing in the level
/// (with its column), or a level that does not load.
pub fn query(
    text: &str,
    bytes: impl FnOnce() -> Result<Vec<u8>, String>,
    path: &Path,
    options: Options,
) -> Result<String, String> {
    let query = parse(text).map_err(|e| format!("query: {e}"))?;
    let world = spawn(&bytes()?, path)?;
    let registry = registry::component_registry();
    let plan = Plan::new(&world, &registry, &query).map_err(|e| format!("query: {e}"))?;
    let window = ChangeWindow {
        last_run: Tick::new(options.since),
        this_run: world.change_tick(),
    };
    let page = plan
        .run(&world, window, options.offset, options.limit)
        .map_err(|e| format!("query: {e}"))?;
    let mut out = String::new();
    let noun = if page.total == 1 {
        "entity"
    } else {
        "entities"
    };
    let _ = writeln!(out, "{} {noun} match \"{}\"", page.total, query);
    for m in page.iter() {
        let mut line = entity_text(&world, m.entity);
        for (name, b) in plan.variables().iter().zip(m.bindings()) {
            let bound = b.map_or_else(|| "none".to_owned(), |e| entity_text(&world, e));
            let _ = write!(line, "  ${name}={bound}");
        }
        let present: Vec<String> = plan
            .optional()
            .iter()
            .filter(|&&id| world.has_id(m.entity, id))
            .map(|&id| display_name(&world, &registry, id))
            .collect();
        if !plan.optional().is_empty() {
            let _ = write!(line, "  ?[{}]", present.join(", "));
        }
        let _ = writeln!(out, "{line}");
        if options.values {
            for c in of_entity(&world, m.entity) {
                let entry = component_entry(&world, &registry, m.entity, c);
                let value = serde_json::to_string(&entry["value"]).unwrap_or_default();
                let name = entry["name"].as_str().unwrap_or("?");
                let _ = writeln!(out, "    {name} = {value}");
            }
        }
    }
    let shown = options.offset.saturating_add(page.len());
    if shown < page.total {
        let _ = writeln!(
            out,
            "… and {} more (--offset {shown} shows the next; --limit N shows up to N)",
            page.total - shown
        );
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn demo(ships: usize) -> Vec<u8> {
        crate::demo_level::demo_level_json(ships, |_| {})
    }

    fn run(text: &str, options: Options) -> Result<String, String> {
        query(text, || Ok(demo(3)), Path::new("demo.json"), options)
    }

    const ALL: Options = Options {
        values: false,
        offset: 0,
        limit: 1000,
        since: 0,
    };

    #[test]
    fn queries_the_demo_level() {
        let out = run("position, velocity", ALL).unwrap();
        assert!(
            out.starts_with("3 entities match \"position, velocity\"\n"),
            "{out}"
        );
        assert!(out.contains("(ship0)"), "{out}");
        // Parts and sub-parts spin; sub-parts have no name.
        let out = run("spin, !Name", ALL).unwrap();
        assert!(out.starts_with("24 entities match"), "{out}");
        let out = run("spin, (ChildOf, $part), (ChildOf, ship1)", ALL).unwrap();
        assert!(out.starts_with("4 entities match"), "{out}");
        assert!(out.contains("$part=") && out.contains("(ship1)"), "{out}");
        let out = run(
            "Changed(mass)",
            Options {
                since: 1_000_000,
                ..ALL
            },
        )
        .unwrap();
        assert!(out.starts_with("0 entities match"), "{out}");
        let out = run(
            "mass",
            Options {
                values: true,
                limit: 1,
                ..ALL
            },
        )
        .unwrap();
        assert!(out.contains("    mass = "), "{out}");
        assert!(
            out.contains("… and 2 more (--offset 1 shows the next"),
            "{out}"
        );
    }

    #[test]
    fn errors_name_the_column() {
        let bad = run("position, (ChildOf, $p", ALL).unwrap_err();
        assert_eq!(
            bad,
            "query: expected ')' at column 23, found the end of the query"
        );
        let unknown = run("position, nope", ALL).unwrap_err();
        assert!(unknown.starts_with("query: unknown component \"nope\" at column 11"));
        // A bad query is refused before the level is read.
        let early = query("(", || panic!("not read"), Path::new("x"), ALL).unwrap_err();
        assert!(early.contains("column 2"), "{early}");
    }
}
