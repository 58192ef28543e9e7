//! String predicates: `col [NOT] LIKE 'pattern'`, `col [NOT] ILIKE 'pattern'`,
//! `contains(col, 'needle')` and `starts_with(col, 'prefix')`, as lance 14 (DataFusion and
//! arrow's `like` kernels) evaluates them — verified with pylance 14.0.2
//! (`tests/fixtures/ngram/answers.json`):
//!
//! * `%` matches any run of characters, `_` exactly one character (not one byte);
//! * a backslash escapes the next character (`\%`, `\_`, `\\`; `\x` is a literal `x`), a
//!   trailing backslash is a literal backslash; string literals keep backslashes as
//!   written (`'a\%'` is the three characters `a`, `\`, `%`);
//! * `ESCAPE '\'` is accepted, any other escape character is refused (as pylance does);
//! * `ILIKE` compares Unicode case-insensitively; `contains` / `starts_with` are
//!   case-sensitive and treat `%`, `_` and `\` literally;
//! * a NULL value or a NULL pattern gives NULL.
//!
//! A pattern is compiled once (at bind time) into a byte regex, anchored for `LIKE`.

use regex::bytes::{Regex, RegexBuilder};
use sqlparser::ast::{Expr, FunctionArg, FunctionArgExpr, FunctionArguments, Value};

use arrow_schema::DataType;

use super::expr::{Literal, SqlExpr};
use crate::error::{Error, Result};

/// Which string test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum StringTest {
    /// `LIKE` (`case_insensitive`: `ILIKE`).
    Like {
        /// `ILIKE`.
        case_insensitive: bool,
    },
    /// `contains(col, 'needle')`.
    Contains,
    /// `starts_with(col, 'prefix')`.
    StartsWith,
}

impl StringTest {
    /// The test as messages name it.
    pub(crate) fn name(self) -> &'static str {
        match self {
            StringTest::Like {
                case_insensitive: false,
            } => "LIKE",
            StringTest::Like {
                case_insensitive: true,
            } => "ILIKE",
            StringTest::Contains => "contains()",
            StringTest::StartsWith => "starts_with()",
        }
    }
}

/// Whether `t` is a string type (`Utf8`, `LargeUtf8`, `Utf8View`).
fn is_string(t: &DataType) -> bool {
    matches!(t, DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View)
}

/// The compiled test of `column` (of type `data_type`) against `pattern`; `None` when the
/// pattern is the NULL literal (the test is then NULL on every row). A non-string column
/// or pattern is an error (as in pylance 14).
pub(crate) fn bind_pattern(
    text: &str,
    test: StringTest,
    column: &str,
    data_type: &DataType,
    pattern: &SqlExpr,
) -> Result<Option<StringMatcher>> {
    if !is_string(data_type) {
        return Err(invalid(
            text,
            format!(
                "{} tests a string column; {column:?} has type {data_type}",
                test.name()
            ),
        ));
    }
    match pattern {
        SqlExpr::Literal(Literal::String(p)) => StringMatcher::new(text, test, p).map(Some),
        SqlExpr::Literal(Literal::Null) => Ok(None),
        other => Err(invalid(
            text,
            format!(
                "the pattern of {} must be a string literal, got {}",
                test.name(),
                match other {
                    SqlExpr::Literal(l) => l.to_string(),
                    SqlExpr::Field(f) => f.clone(),
                    other => format!("{other:?}"),
                }
            ),
        )),
    }
}

/// The escape character LIKE patterns use (the only one lance accepts).
const ESCAPE: char = '\\';

fn invalid(text: &str, what: impl std::fmt::Display) -> Error {
    Error::InvalidArgument(format!("filter {text:?}: {what}"))
}

/// `LIKE` / `ILIKE` / `contains(..)` / `starts_with(..)` as an untyped
/// [`SqlExpr::StringMatch`] (`NOT LIKE` as `NOT` of it); `Ok(None)` for any other
/// expression.
pub(crate) fn convert_string_match(
    text: &str,
    expr: &Expr,
    convert: &dyn Fn(&Expr) -> Result<SqlExpr>,
) -> Result<Option<SqlExpr>> {
    let (negated, test, operand, pattern) = match expr {
        Expr::Like {
            negated,
            any,
            expr: e,
            pattern,
            escape_char,
        }
        | Expr::ILike {
            negated,
            any,
            expr: e,
            pattern,
            escape_char,
        } => {
            if *any {
                return Err(invalid(text, "LIKE ANY is not supported"));
            }
            if let Some(escape) = escape_char {
                check_escape(text, &escape.value)?;
            }
            let case_insensitive = matches!(expr, Expr::ILike { .. });
            let test = StringTest::Like { case_insensitive };
            (*negated, test, e.as_ref(), pattern.as_ref())
        }
        Expr::Function(_) => match string_function(text, expr)? {
            Some((test, operand, pattern)) => (false, test, operand, pattern),
            None => return Ok(None),
        },
        _ => return Ok(None),
    };
    let node = SqlExpr::StringMatch {
        expr: Box::new(convert(operand)?),
        test,
        pattern: Box::new(convert(pattern)?),
    };
    Ok(Some(if negated {
        SqlExpr::Not(Box::new(node))
    } else {
        node
    }))
}

/// `ESCAPE '\'` is lance's default; any other escape character is refused, as pylance 14
/// refuses it.
fn check_escape(text: &str, escape: &Value) -> Result<()> {
    let Value::SingleQuotedString(s) = escape else {
        return Err(invalid(
            text,
            format!("the ESCAPE character must be a string, got {escape}"),
        ));
    };
    let mut chars = s.chars();
    match (chars.next(), chars.next()) {
        (Some(ESCAPE), None) => Ok(()),
        (Some(_), None) => Err(invalid(
            text,
            format!("LIKE supports no escape character but the backslash (\\), got {s:?}"),
        )),
        _ => Err(invalid(
            text,
            format!("the ESCAPE character must be a single character, got {s:?}"),
        )),
    }
}

/// `contains(a, b)` / `starts_with(a, b)`: the test and the two arguments.
fn string_function<'e>(
    text: &str,
    expr: &'e Expr,
) -> Result<Option<(StringTest, &'e Expr, &'e Expr)>> {
    let Expr::Function(f) = expr else {
        return Ok(None);
    };
    let [name] = f.name.0.as_slice() else {
        return Ok(None);
    };
    let Some(name) = name.as_ident() else {
        return Ok(None);
    };
    let test = match name.value.to_ascii_lowercase().as_str() {
        "contains" => StringTest::Contains,
        "starts_with" => StringTest::StartsWith,
        _ => return Ok(None),
    };
    let usage = || {
        invalid(
            text,
            format!("expected {}(string_column, 'text'), got {expr}", name.value),
        )
    };
    let FunctionArguments::List(list) = &f.args else {
        return Err(usage());
    };
    let args: Vec<&Expr> = list
        .args
        .iter()
        .map(|a| match a {
            FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => Ok(e),
            _ => Err(usage()),
        })
        .collect::<Result<_>>()?;
    match args.as_slice() {
        [operand, pattern] => Ok(Some((test, operand, pattern))),
        _ => Err(usage()),
    }
}

/// A compiled string test: the pattern as written and its regex.
#[derive(Debug, Clone)]
pub(crate) struct StringMatcher {
    /// Which test.
    pub(crate) test: StringTest,
    /// The pattern, needle or prefix as written (backslashes kept).
    pub(crate) pattern: String,
    regex: Regex,
}

impl PartialEq for StringMatcher {
    fn eq(&self, other: &Self) -> bool {
        self.test == other.test && self.pattern == other.pattern
    }
}

/// One element of a LIKE pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LikeToken {
    /// A character matched as itself (an escaped one included).
    Char(char),
    /// `_`.
    One,
    /// `%`.
    Any,
}

/// The elements of a LIKE pattern (backslash escapes resolved).
fn like_tokens(pattern: &str) -> Vec<LikeToken> {
    let mut out = Vec::with_capacity(pattern.len());
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        out.push(match c {
            // A trailing backslash is a literal backslash.
            ESCAPE => LikeToken::Char(chars.next().unwrap_or(ESCAPE)),
            '%' => LikeToken::Any,
            '_' => LikeToken::One,
            c => LikeToken::Char(c),
        });
    }
    out
}

/// The regex of a test (dot matches newlines; `_` is one character).
fn regex_source(test: StringTest, pattern: &str) -> String {
    let mut out = String::from("(?s)");
    match test {
        StringTest::Contains => out.push_str(&regex::escape(pattern)),
        StringTest::StartsWith => {
            out.push('^');
            out.push_str(&regex::escape(pattern));
        }
        StringTest::Like { case_insensitive } => {
            if case_insensitive {
                out.push_str("(?i)");
            }
            out.push('^');
            let mut buf = [0u8; 4];
            for t in like_tokens(pattern) {
                match t {
                    LikeToken::Char(c) => out.push_str(&regex::escape(c.encode_utf8(&mut buf))),
                    LikeToken::One => out.push('.'),
                    LikeToken::Any => out.push_str(".*"),
                }
            }
            out.push('$');
        }
    }
    out
}

impl StringMatcher {
    /// Compile `pattern` for `test` (`text` is the filter, for errors).
    pub(crate) fn new(text: &str, test: StringTest, pattern: &str) -> Result<Self> {
        let regex = RegexBuilder::new(&regex_source(test, pattern))
            .size_limit(1 << 22)
            .build()
            .map_err(|e| invalid(text, format!("pattern {pattern:?} cannot be compiled: {e}")))?;
        Ok(Self {
            test,
            pattern: pattern.to_string(),
            regex,
        })
    }

    /// Whether the string `value` (UTF-8 bytes) passes the test.
    pub(crate) fn matches(&self, value: &[u8]) -> bool {
        self.regex.is_match(value)
    }

    /// Whether the test ignores case (`ILIKE`).
    pub(crate) fn case_insensitive(&self) -> bool {
        matches!(
            self.test,
            StringTest::Like {
                case_insensitive: true
            }
        )
    }

    /// Substrings every matching value contains, case-sensitively (the literal runs of a
    /// LIKE pattern, the needle, the prefix); none for `ILIKE`.
    pub(crate) fn required_substrings(&self) -> Vec<String> {
        match self.test {
            StringTest::Contains | StringTest::StartsWith => vec![self.pattern.clone()],
            StringTest::Like {
                case_insensitive: true,
            } => Vec::new(),
            StringTest::Like { .. } => {
                let mut runs = vec![String::new()];
                for t in like_tokens(&self.pattern) {
                    match t {
                        LikeToken::Char(c) => runs.last_mut().into_iter().for_each(|r| r.push(c)),
                        LikeToken::One | LikeToken::Any => runs.push(String::new()),
                    }
                }
                runs.retain(|r| !r.is_empty());
                runs
            }
        }
    }

    /// SQL text of the test on `column`.
    pub(crate) fn describe(&self, column: &str) -> String {
        let quoted = format!("'{}'", self.pattern.replace('\'', "''"));
        match self.test {
            StringTest::Contains => format!("contains({column}, {quoted})"),
            StringTest::StartsWith => format!("starts_with({column}, {quoted})"),
            StringTest::Like { case_insensitive } => {
                let op = if case_insensitive { "ILIKE" } else { "LIKE" };
                format!("{column} {op} {quoted}")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn like(p: &str) -> StringMatcher {
        StringMatcher::new(
            p,
            StringTest::Like {
                case_insensitive: false,
            },
            p,
        )
        .unwrap()
    }

    fn ilike(p: &str) -> StringMatcher {
        StringMatcher::new(
            p,
            StringTest::Like {
                case_insensitive: true,
            },
            p,
        )
        .unwrap()
    }

    #[test]
    fn like_wildcards_and_escapes() {
        assert!(like("p%t_rn").matches(b"pattern"));
        assert!(like("p%t_rn").matches(b"ptxrn"));
        assert!(!like("p%t_rn").matches(b"pattern!"));
        assert!(like("Zo_").matches("Zoë".as_bytes()), "_ is one character");
        assert!(!like("Zo__").matches("Zoë".as_bytes()));
        assert!(like("100\\%").matches(b"100%"));
        assert!(!like("100\\%").matches(b"1000"));
        assert!(like("a\\_b").matches(b"a_b"));
        assert!(!like("a\\_b").matches(b"axb"));
        assert!(like("a\\b").matches(b"ab"), "\\x is a literal x");
        assert!(
            like("ends \\").matches(b"ends \\"),
            "a trailing backslash is literal"
        );
        assert!(like("c:\\\\d%").matches(b"c:\\dir"));
        assert!(
            like("a.b*").matches(b"a.b*"),
            "regex characters are literal"
        );
        assert!(!like("a.b").matches(b"axb"));
        assert!(like("%").matches(b""));
        assert!(like("").matches(b"") && !like("").matches(b"x"));
        assert!(like("a%").matches(b"a\nb"), "% crosses newlines");
    }

    #[test]
    fn ilike_contains_starts_with() {
        assert!(ilike("élodie").matches("Élodie".as_bytes()));
        assert!(ilike("%ALI%").matches(b"mixed Ali Case"));
        assert!(!ilike("%STRASSE%").matches("straße".as_bytes()));
        let c = StringMatcher::new("", StringTest::Contains, "a%").unwrap();
        assert!(c.matches(b"xa%y") && !c.matches(b"xaby"));
        let s = StringMatcher::new("", StringTest::StartsWith, "_x").unwrap();
        assert!(s.matches(b"_xy") && !s.matches(b"axy") && !s.matches(b"y_x"));
        let empty = StringMatcher::new("", StringTest::Contains, "").unwrap();
        assert!(empty.matches(b""));
    }

    #[test]
    fn required_substrings_are_the_literal_runs() {
        assert_eq!(like("%ali%").required_substrings(), ["ali"]);
        assert_eq!(
            like("tr_nt%ab\\%c").required_substrings(),
            ["tr", "nt", "ab%c"]
        );
        assert!(ilike("%ali%").required_substrings().is_empty());
        let c = StringMatcher::new("", StringTest::Contains, "a%b").unwrap();
        assert_eq!(c.required_substrings(), ["a%b"]);
    }
}
