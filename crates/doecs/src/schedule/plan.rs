//! The schedule's plan: which systems may overlap, and why the others are ordered.
//!
//! Sync points and exclusive systems cut the schedule into segments that run
//! one after another, with command buffers applied between them. A sync
//! point falls where the schedule needs one: before a system ordered after
//! one that records commands (so it sees them, as bevy's automatic
//! `ApplyDeferred` does), around every exclusive system, and where
//! [`add_sync_point`](super::Schedule::add_sync_point) put one in insertion
//! order. Ordering crosses automatic sync points freely; a manual one or an
//! exclusive system is a barrier in insertion order. Inside a segment the plan is a dependency graph (the task
//! graph of Jungwan Byun's "Data-oriented Entity Component System"): an edge `a -> b` means `b` starts only after `a` ends.
//! Edges come from three places, in this order:
//! 1. explicit `before`/`after` constraints (a cycle among them is an error);
//! 2. a system that sends events of some type runs before the systems that
//!    read them, when rule 1 does not order the pair already;
//! 3. every pair of systems whose accesses conflict and that the graph does not
//!    already order (directly or transitively) gets an edge in insertion order.
//!
//! Rules 2 and 3 never add a cycle: they only add `a -> b` when `b` cannot yet reach
//! `a`. A reachability bit matrix, kept transitively closed as edges are added,
//! answers those questions in O(1). Every edge remembers its reason, so
//! [`Plan`]'s `Display` can explain the order.

use super::ScheduleError;
use crate::dyn_value::DynValue;
use crate::query::AccessKey;
use crate::system::set::{OrderTarget, SetConfig};
use crate::system::{Conflict, SystemAccess};
use std::collections::HashMap;
use std::fmt::{self, Write as _};

/// One item of the schedule in insertion order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Step {
    /// The system with this index.
    System(usize),
    /// Apply the command buffers recorded so far.
    Sync,
}

/// What the plan needs to know of one system.
pub(crate) struct SystemFacts<'a> {
    pub name: &'a str,
    pub access: &'a SystemAccess,
    pub before: &'a [OrderTarget],
    pub after: &'a [OrderTarget],
    pub labels: &'a [String],
    pub sets: &'a [DynValue],
    pub type_id: Option<std::any::TypeId>,
}

/// Why an edge exists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum EdgeReason {
    /// A `before`/`after` constraint.
    Explicit,
    /// The two conflict and were inserted in this order.
    Conflict(Conflict),
    /// The first sends events of this type that the second reads.
    Events(AccessKey),
}

/// A dependency: `to` waits for `from` (indices local to the segment).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Edge {
    pub from: u32,
    pub to: u32,
    pub reason: EdgeReason,
}

/// Systems that run concurrently as their dependencies allow.
#[derive(Debug, Default)]
pub(crate) struct Graph {
    /// Global system indices, in insertion order.
    pub systems: Vec<usize>,
    /// For each local node, the nodes that wait for it.
    pub dependents: Vec<Vec<u32>>,
    /// For each local node, how many nodes it waits for.
    pub in_degree: Vec<u32>,
    /// A topological order, lowest insertion index first among ready nodes.
    pub order: Vec<u32>,
    /// Every edge with its reason.
    pub edges: Vec<Edge>,
    /// Conflicting pairs already ordered by explicit constraints: (first, second, conflict).
    pub implied: Vec<(u32, u32, Conflict)>,
}

/// One piece of the schedule between sync points.
#[derive(Debug)]
pub(crate) enum Segment {
    /// Ordinary systems, then their command buffers are applied.
    Parallel(Graph),
    /// One exclusive system with the whole world.
    Exclusive(usize),
}

/// The built schedule. Its `Display` lists the stages and the reasons for
/// every ordering.
#[derive(Debug)]
pub struct Plan {
    pub(crate) segments: Vec<Segment>,
    names: Vec<String>,
}

/// A square bit matrix: `reach[x]` has bit `y` iff `x` must run before `y`.
struct Reach {
    words: usize,
    bits: Vec<u64>,
}

impl Reach {
    fn new(n: usize) -> Self {
        let words = n.div_ceil(64).max(1);
        Reach {
            words,
            bits: vec![0; words * n],
        }
    }
    fn get(&self, x: usize, y: usize) -> bool {
        self.bits[x * self.words + y / 64] & (1 << (y % 64)) != 0
    }
    /// Records `from -> to` and keeps the relation transitively closed.
    fn add(&mut self, from: usize, to: usize, n: usize) {
        let mut row: Vec<u64> = self.bits[to * self.words..(to + 1) * self.words].to_vec();
        row[to / 64] |= 1 << (to % 64);
        for x in 0..n {
            if x == from || self.get(x, from) {
                let dst = &mut self.bits[x * self.words..(x + 1) * self.words];
                for (d, r) in dst.iter_mut().zip(&row) {
                    *d |= r;
                }
            }
        }
    }
}

impl Plan {
    /// Builds the plan for systems `facts` laid out as `steps`.
    pub(crate) fn build(
        facts: &[SystemFacts<'_>],
        steps: &[Step],
        sets: &[SetConfig],
    ) -> Result<Plan, ScheduleError> {
        let mut by_name = HashMap::with_capacity(facts.len());
        for (i, f) in facts.iter().enumerate() {
            if by_name.insert(f.name, i).is_some() {
                return Err(ScheduleError::DuplicateName(f.name.to_owned()));
            }
        }
        // Resolve constraints into (before, after) pairs of global indices.
        let resolve = |i: usize, target: &OrderTarget| -> Result<Vec<usize>, ScheduleError> {
            let found: Vec<usize> = (0..facts.len())
                .filter(|&j| {
                    let f = &facts[j];
                    // A name or a function finds its own system too (a
                    // self-loop is an error); labels and sets find others.
                    match target {
                        OrderTarget::Name(n) => f.name == n || (j != i && f.labels.contains(n)),
                        OrderTarget::System(..) => names(target, f),
                        OrderTarget::Set(_) => j != i && names(target, f),
                    }
                })
                .collect();
            match target {
                OrderTarget::Name(n) if found.is_empty() => Err(ScheduleError::UnknownSystem {
                    system: facts.get(i).map_or("a set", |f| f.name).to_owned(),
                    missing: n.clone(),
                }),
                OrderTarget::System(_, name) if found.is_empty() => {
                    Err(ScheduleError::UnknownSystem {
                        system: facts.get(i).map_or("a set", |f| f.name).to_owned(),
                        missing: (*name).to_owned(),
                    })
                }
                _ => Ok(found),
            }
        };
        let mut constraints = Vec::new();
        for (i, f) in facts.iter().enumerate() {
            for target in f.before {
                for j in resolve(i, target)? {
                    constraints.push((i, j));
                }
            }
            for target in f.after {
                for j in resolve(i, target)? {
                    constraints.push((j, i));
                }
            }
        }
        // A set's ordering applies to each member (`usize::MAX`: no system
        // is the one asking, so a name or function may find any).
        for config in sets {
            let members: Vec<usize> = (0..facts.len())
                .filter(|&m| facts[m].sets.contains(&config.set))
                .collect();
            for target in &config.before {
                for j in resolve(usize::MAX, target)? {
                    for &m in members.iter().filter(|&&m| m != j) {
                        constraints.push((m, j));
                    }
                }
            }
            for target in &config.after {
                for j in resolve(usize::MAX, target)? {
                    for &m in members.iter().filter(|&&m| m != j) {
                        constraints.push((j, m));
                    }
                }
            }
        }
        for &(a, b) in &constraints {
            if a == b {
                return Err(ScheduleError::Cycle {
                    cycle: vec![facts[a].name.to_owned(), facts[a].name.to_owned()],
                });
            }
        }
        let level = Self::levels(facts, steps, &constraints)?;
        // One segment per level, in level order: an exclusive system alone,
        // the others as a graph of the constraints between them.
        let depth = level.iter().copied().max().map_or(0, |m| m + 1);
        let mut members: Vec<Vec<usize>> = vec![Vec::new(); depth];
        for step in steps {
            if let Step::System(i) = *step {
                members[level[i]].push(i);
            }
        }
        let mut segments = Vec::with_capacity(depth);
        for group in members.into_iter().filter(|m| !m.is_empty()) {
            if let [only] = group[..] {
                if facts[only].access.exclusive {
                    segments.push(Segment::Exclusive(only));
                    continue;
                }
            }
            let at = level[group[0]];
            let local: Vec<(usize, usize)> = constraints
                .iter()
                .copied()
                .filter(|&(a, b)| level[a] == at && level[b] == at)
                .collect();
            segments.push(Segment::Parallel(Self::build_graph(facts, group, &local)?));
        }
        Ok(Plan {
            segments,
            names: facts.iter().map(|f| f.name.to_owned()).collect(),
        })
    }

    /// Each system's level: segments run in level order, and command
    /// buffers are applied between them. A system is one level past every
    /// system that must run before it and records commands (so it sees
    /// them: an automatic sync point), past every system before a manual
    /// sync point inserted before it, and an exclusive system is alone on
    /// its level, past everything inserted before it and before
    /// everything inserted after. Other constraints keep the level.
    fn levels(
        facts: &[SystemFacts<'_>],
        steps: &[Step],
        constraints: &[(usize, usize)],
    ) -> Result<Vec<usize>, ScheduleError> {
        let n = facts.len();
        // (from, to, whether `to` must see `from`'s commands)
        let mut edges: Vec<(usize, usize, bool)> = constraints
            .iter()
            .map(|&(a, b)| {
                let sync = facts[a].access.commands
                    || facts[a].access.exclusive
                    || facts[b].access.exclusive;
                (a, b, sync)
            })
            .collect();
        // Barriers in insertion order: manual sync points and exclusive
        // systems. Each links the systems of the group before it to the
        // group after it (the edges chain the rest transitively).
        let mut groups: Vec<Vec<usize>> = vec![Vec::new()];
        for step in steps {
            match *step {
                Step::Sync => groups.push(Vec::new()),
                Step::System(i) if facts[i].access.exclusive => {
                    groups.push(vec![i]);
                    groups.push(Vec::new());
                }
                Step::System(i) => groups.last_mut().expect("never empty").push(i),
            }
        }
        groups.retain(|g| !g.is_empty());
        for pair in groups.windows(2) {
            for &a in &pair[0] {
                for &b in &pair[1] {
                    edges.push((a, b, true));
                }
            }
        }
        let mut dependents: Vec<Vec<(usize, bool)>> = vec![Vec::new(); n];
        let mut in_degree = vec![0usize; n];
        for &(a, b, sync) in &edges {
            dependents[a].push((b, sync));
            in_degree[b] += 1;
        }
        let mut level = vec![0usize; n];
        let mut ready: Vec<usize> = (0..n).filter(|&i| in_degree[i] == 0).collect();
        let mut done = 0;
        while let Some(a) = ready.pop() {
            done += 1;
            for &(b, sync) in &dependents[a] {
                level[b] = level[b].max(level[a] + usize::from(sync));
                in_degree[b] -= 1;
                if in_degree[b] == 0 {
                    ready.push(b);
                }
            }
        }
        if done == n {
            return Ok(level);
        }
        // A cycle. Barriers only point forward in insertion order, so either
        // an explicit constraint points backward across one, or the
        // explicit constraints form a cycle of their own (named by the
        // graph).
        let mut group_of = vec![0usize; n];
        for (g, members) in groups.iter().enumerate() {
            for &i in members {
                group_of[i] = g;
            }
        }
        if let Some(&(a, b)) = constraints
            .iter()
            .find(|&&(a, b)| group_of[a] > group_of[b])
        {
            return Err(ScheduleError::ContradictsSyncPoint {
                first: facts[a].name.to_owned(),
                second: facts[b].name.to_owned(),
            });
        }
        let stuck: Vec<usize> = (0..n).filter(|&i| in_degree[i] > 0).collect();
        let local: Vec<(usize, usize)> = constraints
            .iter()
            .copied()
            .filter(|&(a, b)| stuck.contains(&a) && stuck.contains(&b))
            .collect();
        Self::build_graph(facts, stuck, &local)?;
        unreachable!("a cycle among explicit constraints fails build_graph")
    }

    fn build_graph(
        facts: &[SystemFacts<'_>],
        systems: Vec<usize>,
        constraints: &[(usize, usize)],
    ) -> Result<Graph, ScheduleError> {
        let n = systems.len();
        let local_of: HashMap<usize, u32> = systems
            .iter()
            .enumerate()
            .map(|(l, &g)| (g, l as u32))
            .collect();
        let mut graph = Graph {
            dependents: vec![Vec::new(); n],
            in_degree: vec![0; n],
            systems,
            ..Graph::default()
        };
        let add_edge = |graph: &mut Graph, from: u32, to: u32, reason| {
            if graph.dependents[from as usize].contains(&to) {
                return;
            }
            graph.dependents[from as usize].push(to);
            graph.in_degree[to as usize] += 1;
            graph.edges.push(Edge { from, to, reason });
        };
        for &(a, b) in constraints {
            add_edge(&mut graph, local_of[&a], local_of[&b], EdgeReason::Explicit);
        }
        let order = topological_order(&graph).map_err(|stuck| ScheduleError::Cycle {
            cycle: find_cycle(&graph, &stuck)
                .into_iter()
                .map(|l| facts[graph.systems[l as usize]].name.to_owned())
                .collect(),
        })?;
        // Transitive closure of the explicit edges, in reverse topological order.
        let mut reach = Reach::new(n);
        for &node in order.iter().rev() {
            for &d in &graph.dependents[node as usize].clone() {
                reach.add(node as usize, d as usize, n);
            }
        }
        // Event writers before their readers, unless told otherwise.
        for i in 0..n {
            for j in 0..n {
                let (w, r) = (
                    facts[graph.systems[i]].access,
                    facts[graph.systems[j]].access,
                );
                let Some(&key) = w.event_writes.iter().find(|k| r.event_reads.contains(k)) else {
                    continue;
                };
                if i != j && !reach.get(i, j) && !reach.get(j, i) {
                    add_edge(&mut graph, i as u32, j as u32, EdgeReason::Events(key));
                    reach.add(i, j, n);
                }
            }
        }
        for i in 0..n {
            for j in i + 1..n {
                let (a, b) = (
                    facts[graph.systems[i]].access,
                    facts[graph.systems[j]].access,
                );
                let Some(conflict) = a.conflict_with(b) else {
                    continue;
                };
                if reach.get(i, j) {
                    graph.implied.push((i as u32, j as u32, conflict));
                } else if reach.get(j, i) {
                    graph.implied.push((j as u32, i as u32, conflict));
                } else {
                    add_edge(
                        &mut graph,
                        i as u32,
                        j as u32,
                        EdgeReason::Conflict(conflict),
                    );
                    reach.add(i, j, n);
                }
            }
        }
        graph.order = topological_order(&graph).expect("conflict edges never close a cycle");
        Ok(graph)
    }

    /// Names of the systems, by global index.
    pub(crate) fn name(&self, system: usize) -> &str {
        &self.names[system]
    }
}

/// Whether `target` names the system of `facts`.
fn names(target: &OrderTarget, facts: &SystemFacts<'_>) -> bool {
    crate::system::set::names(target, facts.name, facts.labels, facts.type_id, facts.sets)
}

/// Kahn's algorithm, taking the lowest ready index first. On a cycle, returns
/// the nodes that never became ready.
fn topological_order(graph: &Graph) -> Result<Vec<u32>, Vec<u32>> {
    let n = graph.in_degree.len();
    let mut remaining = graph.in_degree.clone();
    let mut ready: std::collections::BinaryHeap<std::cmp::Reverse<u32>> = (0..n as u32)
        .filter(|&l| remaining[l as usize] == 0)
        .map(std::cmp::Reverse)
        .collect();
    let mut order = Vec::with_capacity(n);
    while let Some(std::cmp::Reverse(node)) = ready.pop() {
        order.push(node);
        for &d in &graph.dependents[node as usize] {
            remaining[d as usize] -= 1;
            if remaining[d as usize] == 0 {
                ready.push(std::cmp::Reverse(d));
            }
        }
    }
    if order.len() == n {
        Ok(order)
    } else {
        Err((0..n as u32)
            .filter(|&l| remaining[l as usize] != 0)
            .collect())
    }
}

/// A cycle among `stuck` nodes (each has a predecessor among them), found by
/// walking predecessors until a node repeats. Returned in edge order, with the
/// first node repeated at the end.
fn find_cycle(graph: &Graph, stuck: &[u32]) -> Vec<u32> {
    let predecessor = |node: u32| {
        stuck
            .iter()
            .copied()
            .find(|&p| graph.dependents[p as usize].contains(&node))
            .expect("a stuck node waits for another stuck node")
    };
    let mut seen = vec![false; graph.in_degree.len()];
    let mut node = stuck[0];
    while !seen[node as usize] {
        seen[node as usize] = true;
        node = predecessor(node);
    }
    // `node` is on the cycle; walk it once more, backwards.
    let start = node;
    let mut cycle = vec![start];
    let mut current = predecessor(start);
    while current != start {
        cycle.push(current);
        current = predecessor(current);
    }
    cycle.push(start);
    cycle.reverse();
    cycle
}

impl Graph {
    /// Each node's stage: the length of the longest dependency chain before it.
    pub(crate) fn stages(&self) -> Vec<Vec<u32>> {
        let mut stage = vec![0usize; self.in_degree.len()];
        for &node in &self.order {
            for &d in &self.dependents[node as usize] {
                stage[d as usize] = stage[d as usize].max(stage[node as usize] + 1);
            }
        }
        let depth = stage.iter().copied().max().map_or(0, |m| m + 1);
        let mut stages = vec![Vec::new(); depth];
        for (node, &s) in stage.iter().enumerate() {
            stages[s].push(node as u32);
        }
        stages
    }
}

impl fmt::Display for Plan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (s, segment) in self.segments.iter().enumerate() {
            if s > 0 {
                writeln!(f, "-- sync point: command buffers applied")?;
            }
            match segment {
                Segment::Exclusive(i) => {
                    writeln!(f, "segment {s}: exclusive `{}`", self.names[*i])?
                }
                Segment::Parallel(graph) => {
                    writeln!(f, "segment {s}:")?;
                    let name = |l: u32| self.names[graph.systems[l as usize]].as_str();
                    for (k, stage) in graph.stages().iter().enumerate() {
                        let mut line = String::new();
                        for (i, &l) in stage.iter().enumerate() {
                            let _ = write!(line, "{}{}", if i > 0 { ", " } else { "" }, name(l));
                        }
                        writeln!(f, "  stage {k}: {line}")?;
                    }
                    for e in &graph.edges {
                        let why = match e.reason {
                            EdgeReason::Explicit => "explicit before/after constraint".to_owned(),
                            EdgeReason::Conflict(c) => {
                                format!("both access {c}; ordered by insertion")
                            }
                            EdgeReason::Events(key) => {
                                format!("sends `{}` that the other reads", key.name)
                            }
                        };
                        writeln!(f, "  {} -> {}: {why}", name(e.from), name(e.to))?;
                    }
                    for &(a, b, c) in &graph.implied {
                        writeln!(
                            f,
                            "  {} -> {}: both access {c}; already ordered by constraints",
                            name(a),
                            name(b)
                        )?;
                    }
                }
            }
        }
        Ok(())
    }
}
