//! The query language's syntax tree, and its printer.
//!
//! Design. The tree is what the parser produces and the resolver reads:
//! plain data, each node carrying the column it came from so that a
//! resolver error can point at it. A tree can also be built by hand (the
//! API's old `with=`/`without=` form is turned into one), so the resolver
//! checks the rules that the grammar alone does not (a variable in a `!`
//! term must be bound elsewhere: [`Query::check`]) rather than trusting
//! the parser.
//!
//! Printing ([`std::fmt::Display`]) writes the canonical text: terms
//! joined by `", "`, names bare when the grammar reads them back as the
//! same name and quoted otherwise, entity ids as `INDEXvGENERATION`. The
//! printed text parses back to the same tree, columns aside
//! ([`Query::without_columns`]); a property test checks this on random
//! trees.

use doecs::Entity;
use std::fmt;

/// A parsed query: its terms, in order. See the [module docs](super).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Query {
    /// The terms.
    pub terms: Vec<Term>,
}

/// One term: an operator, what it tests, and where it starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Term {
    /// Required, `!` or `?`.
    pub oper: Oper,
    /// What the term tests.
    pub kind: TermKind,
    /// The column of its first character (the operator's, if any).
    pub column: usize,
}

/// A term's operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Oper {
    /// No operator: the term must match.
    And,
    /// `!`: the term must not match.
    Not,
    /// `?`: the term never filters; results say whether it matched.
    Optional,
}

/// What a term tests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TermKind {
    /// A component.
    Component(Ident),
    /// A pair `(relation, target)`.
    Pair {
        /// The relation's name.
        relation: Ident,
        /// The pair's target.
        target: Target,
    },
    /// `Changed(X)` or `Added(X)`.
    Change {
        /// Which filter.
        kind: ChangeKind,
        /// The component.
        component: Ident,
    },
}

/// The two change filters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeKind {
    /// Written (or added) in the window.
    Changed,
    /// Added in the window.
    Added,
}

impl ChangeKind {
    /// Its keyword.
    pub fn as_str(self) -> &'static str {
        match self {
            ChangeKind::Changed => "Changed",
            ChangeKind::Added => "Added",
        }
    }
}

/// A name as written, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ident {
    /// The name (unquoted, escapes resolved).
    pub text: String,
    /// The column of its first character (the opening quote, if quoted).
    pub column: usize,
}

impl Ident {
    /// A name at `column`.
    pub fn new(text: impl Into<String>, column: usize) -> Self {
        Ident {
            text: text.into(),
            column,
        }
    }
}

/// A pair's target, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// Which target.
    pub kind: TargetKind,
    /// The column of its first character.
    pub column: usize,
}

/// The kinds of pair targets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TargetKind {
    /// `*`: any target.
    Any,
    /// `$name`: a variable.
    Variable(String),
    /// An entity by name, or path of names.
    Name(String),
    /// An entity by id.
    Id(Entity),
}

impl Query {
    /// The same query with every column set to 0, for comparing trees
    /// that came from different text.
    pub fn without_columns(&self) -> Query {
        let ident = |i: &Ident| Ident::new(i.text.clone(), 0);
        let terms = self
            .terms
            .iter()
            .map(|t| Term {
                oper: t.oper,
                column: 0,
                kind: match &t.kind {
                    TermKind::Component(c) => TermKind::Component(ident(c)),
                    TermKind::Pair { relation, target } => TermKind::Pair {
                        relation: ident(relation),
                        target: Target {
                            kind: target.kind.clone(),
                            column: 0,
                        },
                    },
                    TermKind::Change { kind, component } => TermKind::Change {
                        kind: *kind,
                        component: ident(component),
                    },
                },
            })
            .collect();
        Query { terms }
    }

    /// The variables, in the order they first appear.
    pub fn variables(&self) -> Vec<String> {
        let mut vars: Vec<String> = Vec::new();
        for t in &self.terms {
            if let TermKind::Pair {
                target:
                    Target {
                        kind: TargetKind::Variable(v),
                        ..
                    },
                ..
            } = &t.kind
            {
                if !vars.contains(v) {
                    vars.push(v.clone());
                }
            }
        }
        vars
    }

    /// Checks what the grammar does not: at most
    /// [`MAX_TERMS`](super::MAX_TERMS) terms (a tree built by hand may have
    /// more), no `!` or `?` on a change filter, and every variable of a
    /// `!` term bound by a required term.
    ///
    /// # Errors
    /// [`super::QueryError::TooManyTerms`],
    /// [`super::QueryError::OperatorOnChange`] and
    /// [`super::QueryError::UnboundVariable`], at the first offender.
    pub fn check(&self) -> Result<(), super::QueryError> {
        if let Some(t) = self.terms.get(super::MAX_TERMS) {
            return Err(super::QueryError::TooManyTerms {
                max: super::MAX_TERMS,
                count: super::MAX_TERMS + 1,
                column: t.column,
            });
        }
        let required: Vec<&str> = self
            .terms
            .iter()
            .filter(|t| t.oper == Oper::And)
            .filter_map(|t| match &t.kind {
                TermKind::Pair {
                    target:
                        Target {
                            kind: TargetKind::Variable(v),
                            ..
                        },
                    ..
                } => Some(v.as_str()),
                _ => None,
            })
            .collect();
        for t in &self.terms {
            match (&t.kind, t.oper) {
                (TermKind::Change { .. }, Oper::Not | Oper::Optional) => {
                    return Err(super::QueryError::OperatorOnChange {
                        oper: if t.oper == Oper::Not { '!' } else { '?' },
                        column: t.column,
                    })
                }
                (
                    TermKind::Pair {
                        target:
                            Target {
                                kind: TargetKind::Variable(v),
                                column,
                            },
                        ..
                    },
                    Oper::Not,
                ) if !required.contains(&v.as_str()) => {
                    return Err(super::QueryError::UnboundVariable {
                        name: v.clone(),
                        column: *column,
                    })
                }
                _ => {}
            }
        }
        Ok(())
    }
}

/// Whether `c` may start a bare name.
pub(crate) fn is_name_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_'
}

/// Whether `c` may continue a bare name.
pub(crate) fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | ':' | '/' | '<' | '>' | '-')
}

/// Whether `c` may continue a variable's name (after the first, which is
/// a name start).
pub(crate) fn is_var_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Whether `text` reads back as itself when written bare.
fn is_bare(text: &str) -> bool {
    let mut chars = text.chars();
    chars.next().is_some_and(is_name_start) && chars.all(is_name_char)
}

/// Writes a name bare when it can be, else quoted.
fn write_name(f: &mut fmt::Formatter<'_>, text: &str) -> fmt::Result {
    if is_bare(text) {
        return f.write_str(text);
    }
    f.write_str("\"")?;
    for c in text.chars() {
        if c == '"' || c == '\\' {
            f.write_str("\\")?;
        }
        write!(f, "{c}")?;
    }
    f.write_str("\"")
}

impl fmt::Display for Query {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, t) in self.terms.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{t}")?;
        }
        Ok(())
    }
}

impl fmt::Display for Term {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.oper {
            Oper::And => {}
            Oper::Not => f.write_str("!")?,
            Oper::Optional => f.write_str("?")?,
        }
        match &self.kind {
            TermKind::Component(c) => write_name(f, &c.text),
            TermKind::Pair { relation, target } => {
                f.write_str("(")?;
                write_name(f, &relation.text)?;
                f.write_str(", ")?;
                match &target.kind {
                    TargetKind::Any => f.write_str("*")?,
                    TargetKind::Variable(v) => write!(f, "${v}")?,
                    TargetKind::Name(n) => write_name(f, n)?,
                    TargetKind::Id(e) => write!(f, "{}v{}", e.index(), e.generation())?,
                }
                f.write_str(")")
            }
            TermKind::Change { kind, component } => {
                write!(f, "{}(", kind.as_str())?;
                write_name(f, &component.text)?;
                f.write_str(")")
            }
        }
    }
}
