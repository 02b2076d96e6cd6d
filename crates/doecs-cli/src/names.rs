//! Names in `doecs inspect`: a blob's named entities as a tree, and
//! `--find` by name or by path.
//!
//! A level's `"name"`s are the blob's `name` block, and a path follows the
//! hierarchy ("ship3/ship3.part1"). Rather than rebuild paths from the
//! bytes, [`Level::spawn`] spawns the blob into a fresh `World` with the
//! spawner `doecs run` uses, and the world's own name API answers
//! (`name_of`, `path_of`, `lookup`): the inspector finds exactly what a
//! running program finds, ambiguities included. Blob entity `i` is the
//! `i`th spawned entity, and the lines name entities by that blob index,
//! as the prefab lines do. An entity's components are read from the blob's
//! blocks, under the names of the summary's table (a block's entity
//! indices are strictly increasing, so each is searched by halves).
//!
//! Output is bounded whatever the level's size: the tree stops after
//! `--names N` lines and counts the rest, and so do the matches of a name
//! (a level may give one name to thousands of entities). The tree walks the
//! hierarchy depth first from the roots in blob order, children in blob
//! order; only named entities are printed, indented by their depth (up to
//! [`MAX_INDENT`] levels, so a deep chain cannot widen every line).
//!
//! A query is checked before the blob is read ([`Query::parse`]): not
//! empty, at most [`MAX_QUERY_BYTES`], and no name in it longer than the
//! level loader's limit ([`MAX_NAME_BYTES`]), which no entity can match.
//! Every failure is a [`FindError`], printed as one line.

use doecs::{Entity, LookupError, World};
use doecs_resource::name::{MAX_NAME_BYTES, NAME};
use doecs_resource::{BlobView, BlockView, LeU32s, SpawnOptions, Spawner, NO_PARENT};
use std::fmt::Write;

/// The default `--names`: named entities listed, and matches of `--find`.
pub const DEFAULT_NAMES: usize = 20;
/// The longest `--find` query, in bytes: a path of eight names of the
/// longest length a level allows. Each name in it is at most
/// [`MAX_NAME_BYTES`].
pub const MAX_QUERY_BYTES: usize = 8 * MAX_NAME_BYTES;
/// The tree indents at most this many levels; deeper lines say their depth.
pub const MAX_INDENT: usize = 16;

/// What `--find` looks for.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Query<'q> {
    /// Every entity with this name.
    Name(&'q str),
    /// The one entity at this path of names (it contains a `/`).
    Path(&'q str),
}

/// Why `--find` found nothing, or was not asked right.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum FindError {
    /// The query is empty.
    #[error("--find needs a name or a path of names (\"ship3/ship3.part1\"), got an empty query")]
    Empty,
    /// The query is longer than [`MAX_QUERY_BYTES`].
    #[error("--find takes at most {MAX_QUERY_BYTES} bytes, got {0}")]
    TooLong(usize),
    /// A name in the query is longer than a level allows.
    #[error(
        "--find: a name is at most {MAX_NAME_BYTES} bytes (levels allow no longer), \
         the query has one of {0}"
    )]
    NameTooLong(usize),
    /// No entity has the name.
    #[error("no entity is named {0:?}")]
    NoSuchName(String),
    /// No entity is at the path.
    #[error("no entity at path {query:?} (nothing at {missing:?})")]
    NoSuchPath {
        /// The path asked for.
        query: String,
        /// Its part up to the first name not found.
        missing: String,
    },
    /// Several entities are at the path.
    #[error(
        "{count} entities at path {path:?}: the path is ambiguous \
         (--find with the last name alone lists every entity of that name)"
    )]
    Ambiguous {
        /// The ambiguous part of the path.
        path: String,
        /// How many entities it leads to.
        count: usize,
    },
    /// The path has an empty name (`"a//b"`, `"/a"`, `"a/"`).
    #[error("{0:?} is not a path of names separated by `/`: it has an empty name")]
    BadPath(String),
}

impl<'q> Query<'q> {
    /// Checks `query` (see the module docs): a path if it contains `/`,
    /// else a name.
    pub fn parse(query: &'q str) -> Result<Self, FindError> {
        if query.is_empty() {
            return Err(FindError::Empty);
        }
        if query.len() > MAX_QUERY_BYTES {
            return Err(FindError::TooLong(query.len()));
        }
        if let Some(long) = query.split('/').map(str::len).find(|&n| n > MAX_NAME_BYTES) {
            return Err(FindError::NameTooLong(long));
        }
        Ok(if query.contains('/') {
            Query::Path(query)
        } else {
            Query::Name(query)
        })
    }
}

/// Whether the strictly increasing `indices` hold `i` (searched by halves).
fn holds(indices: &LeU32s<'_>, i: u32) -> bool {
    let (mut lo, mut hi) = (0, indices.len());
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        match indices.get(mid) {
            Some(x) if x == i => return true,
            Some(x) if x < i => lo = mid + 1,
            _ => hi = mid,
        }
    }
    false
}

/// The blob's name for a block's component, as the summary's table shows it.
pub fn component_name(spawner: &Spawner, block: &BlockView<'_>) -> String {
    spawner
        .name_of(block.component)
        .map(str::to_owned)
        .unwrap_or_else(|| format!("unknown {:#018x}", block.component))
}

/// How many entities the blob names (instances of its `name` block).
pub fn named_count(view: &BlobView<'_>) -> usize {
    let hash = doecs::raw::name_hash(NAME);
    view.blocks()
        .iter()
        .find(|b| b.component == hash)
        .map_or(0, BlockView::num_instances)
}

/// A blob spawned into a fresh world, to ask it for names.
pub struct Level<'a> {
    view: BlobView<'a>,
    spawner: &'a Spawner,
    world: World,
    /// The world's entity for each blob entity, in blob order.
    entities: Vec<Entity>,
}

impl<'a> Level<'a> {
    /// Spawns `view`'s blob with `spawner` (unknown component types are
    /// skipped, as the summary lists them anyway).
    pub fn spawn(view: &BlobView<'a>, spawner: &'a Spawner) -> Result<Self, String> {
        let mut world = World::new();
        let spawned = spawner
            .spawn(&mut world, view.bytes(), SpawnOptions::default())
            .map_err(|e| format!("cannot spawn the blob to read its names: {e}"))?;
        Ok(Level {
            view: view.clone(),
            spawner,
            world,
            entities: spawned.entities,
        })
    }

    /// The world's entity of blob entity `i`.
    fn entity(&self, i: usize) -> Option<Entity> {
        self.entities.get(i).copied()
    }

    /// The blob index of a world entity.
    fn index_of(&self, entity: Entity) -> Option<usize> {
        self.entities.iter().position(|&e| e == entity)
    }

    /// The name of blob entity `i`.
    fn name(&self, i: usize) -> Option<&str> {
        self.world.name_of(self.entity(i)?)
    }

    /// Blob entity `i`'s components, by name, in spawn order.
    fn components(&self, i: usize) -> Vec<String> {
        let Ok(i) = u32::try_from(i) else {
            return Vec::new();
        };
        self.view
            .blocks()
            .iter()
            .filter(|b| holds(&b.entity_index, i))
            .map(|b| component_name(self.spawner, b))
            .collect()
    }

    /// The path of a named entity: its names from the root down, or, when
    /// an ancestor has no name (no path reaches it), `…/` and its name.
    fn path(&self, entity: Entity) -> Option<String> {
        let name = self.world.name_of(entity)?;
        Some(
            self.world
                .path_of(entity)
                .unwrap_or_else(|| format!("…/{name}")),
        )
    }

    /// "entity 7, 3 components" for blob entity `i`, with the note of a
    /// path that does not lead to it.
    fn summary(&self, i: usize, entity: Entity) -> String {
        let n = self.components(i).len();
        let plural = if n == 1 { "" } else { "s" };
        let note = if self.world.path_of(entity).is_none() {
            "; no path: an ancestor has no name"
        } else {
            ""
        };
        format!("entity {i}, {n} component{plural}{note}")
    }

    /// The blob's children lists, by parent: `(start, children)`, the
    /// children of `p` being `children[start[p]..start[p + 1]]`, in blob
    /// order.
    fn children_lists(&self) -> (Vec<usize>, Vec<u32>) {
        let n = self.view.num_entities();
        let parents = self.view.parent_index();
        let mut start = vec![0usize; n + 1];
        for p in parents.iter().filter(|&p| p != NO_PARENT) {
            if let Some(count) = start.get_mut(p as usize + 1) {
                *count += 1;
            }
        }
        for k in 1..start.len() {
            start[k] += start[k - 1];
        }
        let mut fill = start.clone();
        let mut children = vec![0u32; start[n]];
        for (i, p) in parents.iter().enumerate() {
            if p == NO_PARENT {
                continue;
            }
            if let Some(at) = fill.get_mut(p as usize) {
                if let Some(slot) = children.get_mut(*at) {
                    *slot = i as u32;
                }
                *at += 1;
            }
        }
        (start, children)
    }

    /// The named entities as a tree, at most `limit` lines, then how many
    /// more there are (see the module docs).
    pub fn tree(&self, limit: usize) -> String {
        let mut out = String::new();
        let total = (0..self.entities.len())
            .filter(|&i| self.name(i).is_some())
            .count();
        let (start, children) = self.children_lists();
        let parents = self.view.parent_index();
        let mut stack: Vec<(usize, usize)> = (0..self.view.num_entities())
            .rev()
            .filter(|&i| parents.get(i) == Some(NO_PARENT))
            .map(|i| (i, 0))
            .collect();
        let mut shown = 0;
        while let Some((i, depth)) = stack.pop() {
            if shown == limit {
                break;
            }
            if let Some(entity) = self.entity(i) {
                if let Some(path) = self.path(entity) {
                    let indent = "  ".repeat(1 + depth.min(MAX_INDENT));
                    let deeper = if depth > MAX_INDENT {
                        format!("[depth {depth}] ")
                    } else {
                        String::new()
                    };
                    let summary = self.summary(i, entity);
                    let _ = writeln!(out, "{indent}{deeper}{path}  ({summary})");
                    shown += 1;
                }
            }
            let kids = children
                .get(start[i]..start[i + 1])
                .unwrap_or_default()
                .iter()
                .rev()
                .map(|&c| (c as usize, depth + 1));
            stack.extend(kids);
        }
        if total > shown {
            let _ = writeln!(out, "  … and {} more (--names N lists more)", total - shown);
        }
        out
    }

    /// What `--find` prints for `query`: every match (at most `limit`, then
    /// how many more) with its path, components and parent.
    pub fn find(&self, query: Query<'_>, limit: usize) -> Result<String, FindError> {
        let mut out = String::new();
        match query {
            Query::Path(path) => {
                let entity = self.world.lookup(path).map_err(|e| match e {
                    LookupError::NotFound(missing) => FindError::NoSuchPath {
                        query: path.to_owned(),
                        missing,
                    },
                    LookupError::Ambiguous { path, count } => FindError::Ambiguous { path, count },
                    LookupError::BadPath(path) => FindError::BadPath(path),
                })?;
                let _ = writeln!(out, "found 1 entity at path {path:?}:");
                match self.index_of(entity) {
                    Some(i) => self.detail(&mut out, i, entity),
                    None => {
                        let _ = writeln!(out, "{path}  (id {entity}, not a blob entity)");
                    }
                }
            }
            Query::Name(name) => {
                let matches: Vec<(usize, Entity)> = self
                    .entities
                    .iter()
                    .enumerate()
                    .filter(|&(_, &e)| self.world.name_of(e) == Some(name))
                    .map(|(i, &e)| (i, e))
                    .collect();
                if matches.is_empty() {
                    return Err(FindError::NoSuchName(name.to_owned()));
                }
                let n = matches.len();
                let plural = if n == 1 { "entity" } else { "entities" };
                let _ = writeln!(out, "found {n} {plural} named {name:?}:");
                for &(i, entity) in matches.iter().take(limit) {
                    self.detail(&mut out, i, entity);
                }
                if n > limit {
                    let _ = writeln!(out, "… and {} more (--names N lists more)", n - limit);
                }
            }
        }
        Ok(out)
    }

    /// One found entity, blob entity `i`: its path and index, components
    /// and parent (the blob's parent of `i`, which the spawner made its
    /// `ChildOf` parent).
    fn detail(&self, out: &mut String, i: usize, entity: Entity) {
        let path = self.path(entity).unwrap_or_default();
        let _ = writeln!(out, "{path}  ({})", self.summary(i, entity));
        let _ = writeln!(out, "  components: {}", self.components(i).join(", "));
        let parent = match self.view.parent_of(i) {
            None => "none (a root)".to_owned(),
            Some(p) => match self.entity(p as usize).and_then(|e| self.path(e)) {
                Some(path) => format!("{path}  (entity {p})"),
                None => format!("entity {p}, no name"),
            },
        };
        let _ = writeln!(out, "  parent: {parent}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queries_are_names_or_paths_within_the_limits() {
        assert_eq!(Query::parse("ship3"), Ok(Query::Name("ship3")));
        assert_eq!(Query::parse("ship3/part"), Ok(Query::Path("ship3/part")));
        // Malformed paths go to `lookup`, which names what is wrong.
        assert_eq!(Query::parse("a//b"), Ok(Query::Path("a//b")));
        assert_eq!(Query::parse(""), Err(FindError::Empty));
        let longest = "n".repeat(MAX_NAME_BYTES);
        assert_eq!(Query::parse(&longest), Ok(Query::Name(&longest)));
        let long = "n".repeat(MAX_NAME_BYTES + 1);
        assert_eq!(
            Query::parse(&long),
            Err(FindError::NameTooLong(MAX_NAME_BYTES + 1))
        );
        assert_eq!(
            Query::parse(&format!("a/{long}")),
            Err(FindError::NameTooLong(MAX_NAME_BYTES + 1))
        );
        let huge = [longest.as_str(); 9].join("/");
        assert_eq!(Query::parse(&huge), Err(FindError::TooLong(huge.len())));
    }

    #[test]
    fn holds_searches_strictly_increasing_indices() {
        let bytes: Vec<u8> = [1u32, 4, 9, 10]
            .iter()
            .flat_map(|i| i.to_le_bytes())
            .collect();
        let indices = LeU32s::new(&bytes);
        for i in [1, 4, 9, 10] {
            assert!(holds(&indices, i), "{i}");
        }
        for i in [0, 2, 5, 11, u32::MAX] {
            assert!(!holds(&indices, i), "{i}");
        }
        assert!(!holds(&LeU32s::new(&[]), 0));
    }

    /// The demo level of `ships` ships, compiled.
    fn demo_blob(ships: usize) -> doecs_resource::AlignedBytes {
        let json = crate::demo_level::demo_level_json(ships, |_| {});
        let (compiler, _) = crate::registry::compiler_and_spawner();
        let text = std::str::from_utf8(&json).expect("UTF-8");
        doecs_resource::AlignedBytes::from_slice(&compiler.compile_str(text).expect("compiles"))
    }

    #[test]
    fn the_tree_is_depth_first_and_bounded() {
        let blob = demo_blob(3);
        let view = BlobView::parse(&blob).expect("valid");
        let (_, spawner) = crate::registry::compiler_and_spawner();
        let level = Level::spawn(&view, &spawner).expect("spawns");
        assert_eq!(named_count(&view), 15);
        let tree = level.tree(6);
        let lines: Vec<&str> = tree.lines().collect();
        assert_eq!(
            lines,
            [
                "  ship0  (entity 0, 6 components)",
                "    ship0/ship0.part0  (entity 1, 3 components)",
                "    ship0/ship0.part1  (entity 4, 3 components)",
                "    ship0/ship0.part2  (entity 7, 3 components)",
                "    ship0/ship0.part3  (entity 10, 3 components)",
                "  ship1  (entity 13, 6 components)",
                "  … and 9 more (--names N lists more)",
            ]
        );
        assert_eq!(level.tree(100).lines().count(), 15);
        assert_eq!(
            level.tree(0).lines().collect::<Vec<_>>(),
            ["  … and 15 more (--names N lists more)"]
        );
    }

    #[test]
    fn find_answers_by_name_and_by_path() {
        let blob = demo_blob(3);
        let view = BlobView::parse(&blob).expect("valid");
        let (_, spawner) = crate::registry::compiler_and_spawner();
        let level = Level::spawn(&view, &spawner).expect("spawns");
        let by_path = level
            .find(Query::Path("ship1/ship1.part2"), 20)
            .expect("found");
        let by_name = level.find(Query::Name("ship1.part2"), 20).expect("found");
        let detail = "ship1/ship1.part2  (entity 20, 3 components)\n  \
                      components: name, transform, spin\n  \
                      parent: ship1  (entity 13)\n";
        assert_eq!(
            by_path,
            format!("found 1 entity at path \"ship1/ship1.part2\":\n{detail}")
        );
        assert_eq!(
            by_name,
            format!("found 1 entity named \"ship1.part2\":\n{detail}")
        );
        assert_eq!(
            level.find(Query::Name("ship9"), 20),
            Err(FindError::NoSuchName("ship9".into()))
        );
        assert_eq!(
            level.find(Query::Path("ship1/ship2.part0"), 20),
            Err(FindError::NoSuchPath {
                query: "ship1/ship2.part0".into(),
                missing: "ship1/ship2.part0".into()
            })
        );
        assert_eq!(
            level.find(Query::Path("ship1//x"), 20),
            Err(FindError::BadPath("ship1//x".into()))
        );
    }
}
