//! Bounds on a filter's size and shape, checked on the tokens before anything is parsed, so
//! no input makes the parser, binder or evaluator (all recursive over the expression tree)
//! overflow the stack or hold unbounded memory.
//!
//! * Nesting (parentheses, `NOT` chains) is bounded by sqlparser's own recursion limit (its
//!   default, 50 levels): deeper input is an `InvalidArgument` naming the limit.
//! * Chains of binary operators (`a OR b OR c ...`, `1 + 1 + ...`) parse without recursion
//!   but build a tree as deep as the chain: at most [`MAX_FILTER_OPERATORS`] binary
//!   operators are accepted (a long list of values belongs in `IN (...)`, which is flat).
//! * The text itself is at most [`MAX_FILTER_BYTES`].

use sqlparser::dialect::GenericDialect;
use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::{Token, Tokenizer};

use crate::error::{Error, Result};

/// Largest filter text accepted (64 MiB: an `IN` list of millions of values fits).
pub(crate) const MAX_FILTER_BYTES: usize = 64 << 20;

/// Most binary operators (`AND`, `OR`, comparisons, arithmetic) in one filter.
pub(crate) const MAX_FILTER_OPERATORS: usize = 256;

/// Deepest nesting accepted: open parentheses plus prefix operators (`NOT`, unary minus)
/// in a row. sqlparser's own limit (50) still lets a debug build overflow a 2 MiB thread
/// stack, so lakeseek stops earlier.
pub(crate) const MAX_FILTER_NESTING: usize = 24;

/// Check `text` against the bounds above; `label` names the input in errors.
pub(crate) fn check_filter_shape(text: &str, label: &str) -> Result<()> {
    if text.len() > MAX_FILTER_BYTES {
        return Err(Error::InvalidArgument(format!(
            "{label} of {} bytes is longer than the {MAX_FILTER_BYTES} bytes accepted",
            text.len()
        )));
    }
    let tokens = Tokenizer::new(&GenericDialect {}, text)
        .tokenize()
        .map_err(|e| Error::InvalidArgument(format!("{label}: {e}")))?;
    let mut operators = 0usize;
    let mut after_operand = false;
    let (mut parens, mut prefixes) = (0usize, 0usize);
    for token in tokens.iter().filter(|t| !matches!(t, Token::Whitespace(_))) {
        let (binary, operand) = classify(token);
        match token {
            Token::LParen => parens += 1,
            Token::RParen => parens = parens.saturating_sub(1),
            _ => {}
        }
        let prefix = !after_operand && (is_keyword(token, Keyword::NOT) || *token == Token::Minus);
        prefixes = if prefix { prefixes + 1 } else { 0 };
        if parens + prefixes > MAX_FILTER_NESTING {
            return Err(Error::InvalidArgument(format!(
                "{label} nests deeper than {MAX_FILTER_NESTING} levels (parentheses, NOT)"
            )));
        }
        if binary && after_operand {
            operators += 1;
            if operators > MAX_FILTER_OPERATORS {
                return Err(Error::InvalidArgument(format!(
                    "{label} chains more than {MAX_FILTER_OPERATORS} operators (AND, OR, \
                     comparisons, arithmetic); list many values with IN (...) instead"
                )));
            }
        }
        after_operand = operand;
    }
    Ok(())
}

fn is_keyword(token: &Token, keyword: Keyword) -> bool {
    matches!(token, Token::Word(w) if w.keyword == keyword)
}

/// (whether the token is a binary operator when it follows an operand, whether it ends an
/// operand).
fn classify(token: &Token) -> (bool, bool) {
    match token {
        Token::Word(w) => match w.keyword {
            Keyword::AND | Keyword::OR | Keyword::XOR => (true, false),
            Keyword::NOT | Keyword::IN | Keyword::IS | Keyword::LIKE | Keyword::BETWEEN => {
                (false, false)
            }
            _ => (false, true),
        },
        Token::Number(..)
        | Token::SingleQuotedString(_)
        | Token::DoubleQuotedString(_)
        | Token::NationalStringLiteral(_)
        | Token::HexStringLiteral(_)
        | Token::RParen
        | Token::RBracket => (false, true),
        Token::Eq
        | Token::DoubleEq
        | Token::Neq
        | Token::Lt
        | Token::Gt
        | Token::LtEq
        | Token::GtEq
        | Token::Plus
        | Token::Minus
        | Token::Mul
        | Token::Div
        | Token::Mod
        | Token::StringConcat
        | Token::Ampersand
        | Token::Pipe
        | Token::Caret => (true, false),
        _ => (false, false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_in_lists_pass_and_long_operator_chains_do_not() {
        let values: Vec<String> = (0..100_000).map(|i| format!("-{i}")).collect();
        let in_list = format!("x IN ({})", values.join(", "));
        assert!(check_filter_shape(&in_list, "filter").is_ok());
        let chain = |n: usize| {
            (0..n)
                .map(|i| format!("x = {i}"))
                .collect::<Vec<_>>()
                .join(" OR ")
        };
        // n terms: n comparisons + (n - 1) ORs.
        assert!(check_filter_shape(&chain(128), "filter").is_ok());
        let err = check_filter_shape(&chain(200), "filter").unwrap_err();
        assert!(err.to_string().contains("IN (...)"), "{err}");
        let sum = vec!["1"; 2000].join(" + ");
        assert!(check_filter_shape(&format!("x = {sum}"), "filter").is_err());
    }

    #[test]
    fn extreme_filters_parse_or_fail_clearly_without_overflowing_the_stack() {
        use crate::index::sql::expr::{parse_sql, SqlContext};
        let parse = |text: &str| parse_sql(text, SqlContext::Filter);
        let nested = format!("{}x = 1{}", "(".repeat(10_000), ")".repeat(10_000));
        let err = parse(&nested).unwrap_err().to_string();
        assert!(err.contains("nests deeper"), "{err}");
        let just_enough = format!("{}x = 1{}", "(".repeat(20), ")".repeat(20));
        assert!(parse(&just_enough).is_ok());
        let nots = format!("{}x = 1", "NOT ".repeat(10_000));
        assert!(parse(&nots)
            .unwrap_err()
            .to_string()
            .contains("nests deeper"));
        assert!(parse(&format!("{}x = 1", "NOT ".repeat(20))).is_ok());
        let literal = format!("x = {}", "9".repeat(100_000));
        let _ = parse(&literal); // a right answer or a clear error, never a panic
        let string = format!("x = '{}'", "a".repeat(1 << 20));
        assert!(parse(&string).is_ok());
        let values: Vec<String> = (0..200_000).map(|i| i.to_string()).collect();
        let in_list = format!("x IN ({})", values.join(","));
        assert!(in_list.len() > 1 << 20);
        assert!(parse(&in_list).is_ok());
        // The longest chain accepted parses on a test thread's stack.
        let chain = (0..128)
            .map(|i| format!("x = {i}"))
            .collect::<Vec<_>>()
            .join(" OR ");
        assert!(parse(&chain).is_ok());
        let err = parse(&format!("{chain} OR x = 1 OR x = 2 OR x = 3")).unwrap_err();
        assert!(err.to_string().contains("operators"), "{err}");
    }
}
