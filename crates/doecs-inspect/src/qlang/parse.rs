//! The query language's parser: text to a [`Query`].
//!
//! Design. A hand-written lexer turns the text into tokens, each with the
//! column of its first character (in characters, 1-based), and a
//! recursive-descent parser reads them with one token of look-ahead, one
//! function per rule of the grammar:
//!
//! ```text
//! query  = term { "," term }
//! term   = [ "!" | "?" ] atom
//! atom   = "(" name "," target ")"
//!        | ( "Changed" | "Added" ) "(" name ")"
//!        | name
//! target = "*" | "$" var | entity-id | name
//! name   = bare-word | quoted-string
//! ```
//!
//! `Changed` and `Added` are keywords only before `(`, so a component
//! of either name can still be a term. The parser is total: every input
//! gives a tree or a [`QueryError`] at a column, never a panic. Its work
//! is linear in the text, which is at most [`MAX_QUERY_BYTES`] long, and
//! its recursion is at most three calls deep whatever the input; a query
//! has at most [`MAX_TERMS`] terms. A fuzz target (`fuzz/`) and property
//! tests (`tests/qlang_props.rs`) throw arbitrary text at it.

use super::ast::{
    is_name_char, is_name_start, is_var_char, ChangeKind, Ident, Oper, Query, Target, TargetKind,
    Term, TermKind,
};
use super::{QueryError, MAX_QUERY_BYTES, MAX_TERMS};

/// One token and the column it starts at.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Token {
    kind: Tok,
    column: usize,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Tok {
    /// A bare word.
    Word(String),
    /// A quoted string, unescaped.
    Quoted(String),
    /// A word starting with a digit (an entity id, if well formed).
    Number(String),
    /// `$name`.
    Var(String),
    Bang,
    Question,
    LParen,
    RParen,
    Comma,
    Star,
    End,
}

impl Tok {
    /// The token as an error message shows it.
    fn describe(&self) -> String {
        let short = |s: &str| s.chars().take(40).collect::<String>();
        match self {
            Tok::Word(w) => format!("'{}'", short(w)),
            Tok::Quoted(q) => format!("\"{}\"", short(q)),
            Tok::Number(n) => format!("'{}'", short(n)),
            Tok::Var(v) => format!("'${}'", short(v)),
            Tok::Bang => "'!'".into(),
            Tok::Question => "'?'".into(),
            Tok::LParen => "'('".into(),
            Tok::RParen => "')'".into(),
            Tok::Comma => "','".into(),
            Tok::Star => "'*'".into(),
            Tok::End => "the end of the query".into(),
        }
    }
}

/// Splits `text` into tokens.
fn lex(text: &str) -> Result<Vec<Token>, QueryError> {
    let mut tokens = Vec::new();
    let mut chars = text.chars().peekable();
    let mut column = 0usize;
    // Takes the next character, counting columns.
    macro_rules! bump {
        () => {{
            column += 1;
            chars.next()
        }};
    }
    while let Some(&c) = chars.peek() {
        let start = column + 1;
        let simple = match c {
            '!' => Some(Tok::Bang),
            '?' => Some(Tok::Question),
            '(' => Some(Tok::LParen),
            ')' => Some(Tok::RParen),
            ',' => Some(Tok::Comma),
            '*' => Some(Tok::Star),
            _ => None,
        };
        if let Some(kind) = simple {
            bump!();
            tokens.push(Token {
                kind,
                column: start,
            });
            continue;
        }
        if c.is_whitespace() {
            bump!();
            continue;
        }
        let kind = if is_name_start(c) || c.is_ascii_digit() {
            let mut word = String::new();
            while let Some(&c) = chars.peek() {
                if !is_name_char(c) {
                    break;
                }
                word.push(c);
                bump!();
            }
            if word.starts_with(|c: char| c.is_ascii_digit()) {
                Tok::Number(word)
            } else {
                Tok::Word(word)
            }
        } else if c == '$' {
            bump!();
            let mut name = String::new();
            while let Some(&c) = chars.peek() {
                let fits = if name.is_empty() {
                    is_name_start(c)
                } else {
                    is_var_char(c)
                };
                if !fits {
                    break;
                }
                name.push(c);
                bump!();
            }
            if name.is_empty() {
                let found = chars
                    .peek()
                    .map_or("the end of the query".to_owned(), |c| format!("{c:?}"));
                return Err(QueryError::Expected {
                    expected: "a variable name after '$'",
                    found,
                    column: column + 1,
                });
            }
            Tok::Var(name)
        } else if c == '"' {
            bump!();
            let mut s = String::new();
            loop {
                match bump!() {
                    None => return Err(QueryError::UnterminatedString { column: start }),
                    Some('"') => break,
                    Some('\\') => match bump!() {
                        Some(e @ ('"' | '\\')) => s.push(e),
                        _ => return Err(QueryError::BadEscape { column: column - 1 }),
                    },
                    Some(c) => s.push(c),
                }
            }
            if s.is_empty() {
                return Err(QueryError::EmptyName { column: start });
            }
            Tok::Quoted(s)
        } else {
            return Err(QueryError::BadCharacter {
                found: c,
                column: start,
            });
        };
        tokens.push(Token {
            kind,
            column: start,
        });
    }
    tokens.push(Token {
        kind: Tok::End,
        column: column + 1,
    });
    Ok(tokens)
}

/// Parses `text` into a query. See the module docs for the grammar.
///
/// ```
/// use doecs_inspect::qlang::{parse, Oper};
/// let q = parse("position, !spin, (ChildOf, $parent)").unwrap();
/// assert_eq!(q.terms.len(), 3);
/// assert_eq!(q.terms[1].oper, Oper::Not);
/// assert_eq!(q.to_string(), "position, !spin, (ChildOf, $parent)");
/// let e = parse("position, (ChildOf, $parent").unwrap_err();
/// assert_eq!(e.to_string(), "expected ')' at column 28, found the end of the query");
/// assert_eq!(e.column(), 28);
/// ```
///
/// # Errors
/// A [`QueryError`] at the column of the first problem.
pub fn parse(text: &str) -> Result<Query, QueryError> {
    if text.len() > MAX_QUERY_BYTES {
        let mut end = MAX_QUERY_BYTES;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        return Err(QueryError::TooLong {
            len: text.len(),
            max: MAX_QUERY_BYTES,
            column: text[..end].chars().count() + 1,
        });
    }
    let tokens = lex(text)?;
    let mut p = Parser { tokens, at: 0 };
    let query = p.query()?;
    query.check()?;
    Ok(query)
}

struct Parser {
    tokens: Vec<Token>,
    at: usize,
}

impl Parser {
    /// The current token (the last one is always `End`).
    fn peek(&self) -> &Token {
        let last = self.tokens.len().saturating_sub(1);
        &self.tokens[self.at.min(last)]
    }

    /// The token after the current one.
    fn peek2(&self) -> &Tok {
        let last = self.tokens.len().saturating_sub(1);
        &self.tokens[(self.at + 1).min(last)].kind
    }

    fn bump(&mut self) -> Token {
        let t = self.peek().clone();
        if self.at < self.tokens.len() {
            self.at += 1;
        }
        t
    }

    /// The error for the current token when `expected` would have fitted.
    fn expected(&self, expected: &'static str) -> QueryError {
        let t = self.peek();
        QueryError::Expected {
            expected,
            found: t.kind.describe(),
            column: t.column,
        }
    }

    fn eat(&mut self, kind: &Tok, expected: &'static str) -> Result<(), QueryError> {
        if &self.peek().kind == kind {
            self.bump();
            Ok(())
        } else {
            Err(self.expected(expected))
        }
    }

    fn query(&mut self) -> Result<Query, QueryError> {
        let mut terms = Vec::new();
        loop {
            if terms.len() == MAX_TERMS {
                return Err(QueryError::TooManyTerms {
                    max: MAX_TERMS,
                    count: MAX_TERMS + 1,
                    column: self.peek().column,
                });
            }
            terms.push(self.term()?);
            match self.peek().kind {
                Tok::Comma => {
                    self.bump();
                }
                Tok::End => return Ok(Query { terms }),
                _ => return Err(self.expected("',' or the end of the query")),
            }
        }
    }

    fn term(&mut self) -> Result<Term, QueryError> {
        let column = self.peek().column;
        let oper = match self.peek().kind {
            Tok::Bang => Oper::Not,
            Tok::Question => Oper::Optional,
            _ => Oper::And,
        };
        if oper != Oper::And {
            self.bump();
        }
        let kind = self.atom()?;
        if let (TermKind::Change { .. }, Oper::Not | Oper::Optional) = (&kind, oper) {
            return Err(QueryError::OperatorOnChange {
                oper: if oper == Oper::Not { '!' } else { '?' },
                column,
            });
        }
        Ok(Term { oper, kind, column })
    }

    fn atom(&mut self) -> Result<TermKind, QueryError> {
        const TERM: &str = "a term (a component name, '(' or Changed(...))";
        match &self.peek().kind {
            Tok::LParen => {
                self.bump();
                let relation = self.name("a relation name")?;
                self.eat(&Tok::Comma, "','")?;
                let target = self.target()?;
                self.eat(&Tok::RParen, "')'")?;
                Ok(TermKind::Pair { relation, target })
            }
            Tok::Word(w) if self.peek2() == &Tok::LParen => {
                let kind = match w.as_str() {
                    "Changed" => ChangeKind::Changed,
                    "Added" => ChangeKind::Added,
                    _ => {
                        // `position(` is a typo of `position,` or of a
                        // change filter: say what fits after the name.
                        self.bump();
                        return Err(self.expected("',' or the end of the query"));
                    }
                };
                self.bump();
                self.bump();
                let component = self.name("a component name")?;
                self.eat(&Tok::RParen, "')'")?;
                Ok(TermKind::Change { kind, component })
            }
            Tok::Word(_) | Tok::Quoted(_) => Ok(TermKind::Component(self.name(TERM)?)),
            _ => Err(self.expected(TERM)),
        }
    }

    fn name(&mut self, expected: &'static str) -> Result<Ident, QueryError> {
        match &self.peek().kind {
            Tok::Word(s) | Tok::Quoted(s) => {
                let ident = Ident::new(s.clone(), self.peek().column);
                self.bump();
                Ok(ident)
            }
            _ => Err(self.expected(expected)),
        }
    }

    fn target(&mut self) -> Result<Target, QueryError> {
        let column = self.peek().column;
        let kind = match &self.peek().kind {
            Tok::Star => TargetKind::Any,
            Tok::Var(v) => TargetKind::Variable(v.clone()),
            Tok::Number(n) => match crate::parse::parse_entity(n) {
                Ok(e) => TargetKind::Id(e),
                Err(_) => {
                    return Err(QueryError::BadEntity {
                        text: n.chars().take(40).collect(),
                        column,
                    })
                }
            },
            Tok::Word(s) | Tok::Quoted(s) => TargetKind::Name(s.clone()),
            _ => {
                return Err(self
                    .expected("a pair target ('*', a $variable, an entity id or an entity name)"))
            }
        };
        self.bump();
        Ok(Target { kind, column })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use doecs::Entity;

    fn err(text: &str) -> (String, usize) {
        let e = parse(text).unwrap_err();
        (e.to_string(), e.column())
    }

    #[test]
    fn every_construct() {
        let q = parse(
            "position, !spin, ?Name, (ChildOf, $p), (Likes, *), (ChildOf, ship3), \
             (IsA, 12v3), Changed(mass), Added( \"my comp\" ), (ChildOf, \"a b\"), \
             (ChildOf, ship3/ship3.part1), doecs::name::Name, Changed, (X, 4294967308)",
        )
        .unwrap();
        let kinds: Vec<String> = q.terms.iter().map(|t| format!("{t}")).collect();
        assert_eq!(
            kinds,
            [
                "position",
                "!spin",
                "?Name",
                "(ChildOf, $p)",
                "(Likes, *)",
                "(ChildOf, ship3)",
                "(IsA, 12v3)",
                "Changed(mass)",
                "Added(\"my comp\")",
                "(ChildOf, \"a b\")",
                "(ChildOf, ship3/ship3.part1)",
                "doecs::name::Name",
                "Changed",
                "(X, 12v1)",
            ]
        );
        assert_eq!(q.terms[0].column, 1);
        assert_eq!(q.terms[1].column, 11);
        assert_eq!(q.terms[1].oper, Oper::Not);
        assert_eq!(q.terms[2].oper, Oper::Optional);
        match &q.terms[3].kind {
            TermKind::Pair { relation, target } => {
                assert_eq!((relation.text.as_str(), relation.column), ("ChildOf", 26));
                assert_eq!(target.kind, TargetKind::Variable("p".into()));
                assert_eq!(target.column, 35);
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(
            q.terms[6].kind,
            TermKind::Pair {
                relation: Ident::new("IsA", 71),
                target: Target {
                    kind: TargetKind::Id(Entity::from_parts(12, 3)),
                    column: 76
                }
            }
        );
        assert_eq!(
            q.terms[8].kind,
            TermKind::Change {
                kind: ChangeKind::Added,
                component: Ident::new("my comp", 105)
            }
        );
        assert_eq!(q.variables(), ["p"]);
        assert_eq!(
            parse(&q.to_string()).unwrap().without_columns(),
            q.without_columns()
        );
    }

    #[test]
    fn whitespace_and_escapes() {
        let q = parse("\t position ,\n\"a \\\"q\\\" \\\\ b\"  ").unwrap();
        assert_eq!(q.to_string(), "position, \"a \\\"q\\\" \\\\ b\"");
        match &q.terms[1].kind {
            TermKind::Component(c) => assert_eq!(c.text, "a \"q\" \\ b"),
            other => panic!("{other:?}"),
        }
        // Columns count characters, not bytes.
        let e = parse("\"é\", )").unwrap_err();
        assert_eq!(e.column(), 6);
    }

    #[test]
    fn every_error_has_its_column() {
        let cases: &[(&str, &str, usize)] = &[
            ("", "expected a term (a component name, '(' or Changed(...)) at column 1, found the end of the query", 1),
            ("position,", "expected a term (a component name, '(' or Changed(...)) at column 10, found the end of the query", 10),
            ("a b", "expected ',' or the end of the query at column 3, found 'b'", 3),
            ("(ChildOf, $parent", "expected ')' at column 18, found the end of the query", 18),
            ("position, (ChildOf $p)", "expected ',' at column 20, found '$p'", 20),
            ("(, x)", "expected a relation name at column 2, found ','", 2),
            ("(ChildOf, )", "expected a pair target ('*', a $variable, an entity id or an entity name) at column 11, found ')'", 11),
            ("(ChildOf, 12x)", "\"12x\" at column 11 is not an entity id: expected INDEXvGENERATION (12v0) or the 64-bit form", 11),
            ("(ChildOf, 1v99999999999)", "\"1v99999999999\" at column 11 is not an entity id: expected INDEXvGENERATION (12v0) or the 64-bit form", 11),
            ("(ChildOf, $)", "expected a variable name after '$' at column 12, found ')'", 12),
            ("(ChildOf, $", "expected a variable name after '$' at column 12, found the end of the query", 12),
            ("Changed(", "expected a component name at column 9, found the end of the query", 9),
            ("Changed(x", "expected ')' at column 10, found the end of the query", 10),
            ("Added(*)", "expected a component name at column 7, found '*'", 7),
            ("position(x)", "expected ',' or the end of the query at column 9, found '('", 9),
            ("!!x", "expected a term (a component name, '(' or Changed(...)) at column 2, found '!'", 2),
            ("a, !Changed(x)", "'!' at column 4 cannot apply to a change filter", 4),
            ("?Added(x)", "'?' at column 1 cannot apply to a change filter", 1),
            ("a; b", "unexpected character ';' at column 2", 2),
            ("a, 'b'", "unexpected character '\\'' at column 4", 4),
            ("x, \"abc", "the name quoted at column 4 has no closing '\"'", 4),
            ("\"a\\nb\"", "bad escape at column 3: inside quotes, '\\' is followed by '\"' or '\\'", 3),
            ("x, \"\"", "empty name at column 4", 4),
            ("*", "expected a term (a component name, '(' or Changed(...)) at column 1, found '*'", 1),
            ("$x", "expected a term (a component name, '(' or Changed(...)) at column 1, found '$x'", 1),
            ("12v0", "expected a term (a component name, '(' or Changed(...)) at column 1, found '12v0'", 1),
            ("!(Likes, $x)", "variable $x at column 10 is not bound by a required term", 10),
            ("?(Likes, $x), !(ChildOf, $x)", "variable $x at column 26 is not bound by a required term", 26),
        ];
        for &(text, message, column) in cases {
            assert_eq!(err(text), (message.to_owned(), column), "{text:?}");
        }
        // A variable bound by a required term may be checked by a `!` one.
        assert!(parse("(ChildOf, $p), !(Likes, $p)").is_ok());
    }

    #[test]
    fn limits() {
        let many = vec!["a"; MAX_TERMS + 1].join(", ");
        let column = 3 * MAX_TERMS + 1;
        assert_eq!(
            err(&many),
            (
                format!("a query takes at most 32 terms; term 33 is at column {column}"),
                column
            )
        );
        assert!(parse(&vec!["a"; MAX_TERMS].join(", ")).is_ok());
        let long = "a".repeat(MAX_QUERY_BYTES + 1);
        assert_eq!(err(&long).1, MAX_QUERY_BYTES + 1);
        let wide = "é".repeat(MAX_QUERY_BYTES);
        assert_eq!(err(&wide).1, MAX_QUERY_BYTES / 2 + 1);
        assert!(parse(&"a".repeat(MAX_QUERY_BYTES)).is_ok());
    }
}
