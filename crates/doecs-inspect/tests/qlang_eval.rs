//! The evaluator's bounds and its pages, on small hand-made worlds: a
//! join whose bindings multiply is refused at its term's column, a tree
//! built by hand (not parsed) gets the parser's checks, and a page reads
//! back each result's bindings, unbound ones included.

use doecs::{ChangeWindow, Entity, Relation, World};
use doecs_inspect::qlang::{
    parse, Ident, Oper, Plan, Query, QueryError, Target, TargetKind, Term, TermKind,
};
use doecs_registry::ComponentRegistry;

#[derive(Clone)]
struct Likes;
impl Relation for Likes {}

#[test]
fn joins_that_multiply_are_refused_at_their_column() {
    let mut world = World::new();
    let fan = world.spawn(());
    for _ in 0..300 {
        let idol = world.spawn(());
        world.add_pair(fan, idol, Likes).unwrap();
    }
    let registry = ComponentRegistry::new();
    let run = |text: &str| {
        let plan = Plan::new(&world, &registry, &parse(text).unwrap()).unwrap();
        plan.run(&world, ChangeWindow::default(), 0, 10)
    };
    // 300 × 300 bindings for one entity: past the bound.
    let err = run("(Likes, $a), (Likes, $b)").unwrap_err();
    assert!(
        matches!(err, QueryError::TooManyBindings { column: 14, .. }),
        "{err}"
    );
    // 300 is fine, and a join on one variable stays at 300.
    assert_eq!(run("(Likes, $a)").unwrap().total, 300);
    assert_eq!(run("(Likes, $a), ?(Likes, $a)").unwrap().total, 300);
}

#[test]
fn hand_built_trees_are_checked_too() {
    let world = World::new();
    let registry = ComponentRegistry::new();
    let term = |column| Term {
        oper: Oper::And,
        kind: TermKind::Component(Ident::new("Name", column)),
        column,
    };
    let many = Query {
        terms: (1..=40).map(term).collect(),
    };
    let err = Plan::new(&world, &registry, &many).unwrap_err();
    assert_eq!(err.column(), 33);
    let unbound = Query {
        terms: vec![Term {
            oper: Oper::Not,
            kind: TermKind::Pair {
                relation: Ident::new("ChildOf", 3),
                target: Target {
                    kind: TargetKind::Variable("p".into()),
                    column: 12,
                },
            },
            column: 1,
        }],
    };
    let err = Plan::new(&world, &registry, &unbound).unwrap_err();
    assert!(matches!(
        err,
        QueryError::UnboundVariable { column: 12, .. }
    ));
}

#[test]
fn pages_read_back_their_bindings() {
    let mut world = World::new();
    let a = world.spawn((1u32,));
    let b = world.spawn((2u32,));
    world.add_pair(b, a, Likes).unwrap();
    world.add_pair(a, a, Likes).unwrap();
    let registry = ComponentRegistry::new();
    let q = parse("u32, ?(Likes, $x)").unwrap();
    let plan = Plan::new(&world, &registry, &q).unwrap();
    let page = plan.run(&world, ChangeWindow::default(), 0, 10).unwrap();
    let got: Vec<(Entity, Option<Entity>)> =
        page.iter().map(|m| (m.entity, m.binding(0))).collect();
    assert_eq!(got, [(a, Some(a)), (b, Some(a))]);
    assert_eq!(page.get(0).unwrap().binding(1), None);
    assert_eq!(page.get(2), None);
    // An entity without the pair: the optional term leaves it unbound.
    let c = world.spawn((3u32,));
    let plan = Plan::new(&world, &registry, &q).unwrap();
    let page = plan.run(&world, ChangeWindow::default(), 2, 10).unwrap();
    assert_eq!(page.total, 3);
    let last = page.get(0).unwrap();
    assert_eq!(
        (last.entity, last.bindings().collect::<Vec<_>>()),
        (c, vec![None])
    );
}
