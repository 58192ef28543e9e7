//! Fuzz bodies for what a user types: filters of extreme size and depth
//! ([`filter_extremes`]) and CLI argument values ([`cli_values`]). Each must return without
//! panicking (or overflowing the stack) whatever the bytes; errors are expected.

use crate::index::sql::bind::BoundPredicate;
use crate::index::sql::expr::{parse_sql, SqlContext};

/// The largest repetition a [`filter_extremes`] input asks for.
const MAX_REPEAT: usize = 20_000;

/// A filter built from a shape and a fragment, far beyond what a byte-level fuzzer reaches:
/// byte 0 picks the shape (nested parentheses, `NOT` chain, `OR` chain, arithmetic chain,
/// `IN` list, long literal), bytes 1-2 the repetition (up to 20,000), the rest (UTF-8) is
/// the fragment repeated or wrapped. Parsed as a filter and an element predicate and bound
/// against the fuzzing schema.
pub fn filter_extremes(data: &[u8]) {
    let [shape, hi, lo, rest @ ..] = data else {
        return;
    };
    let Ok(fragment) = std::str::from_utf8(rest) else {
        return;
    };
    if fragment.len() > 256 {
        return;
    }
    let n = usize::from(u16::from_be_bytes([*hi, *lo])) % (MAX_REPEAT + 1);
    let text = match shape % 6 {
        0 => format!("{}{fragment}{}", "(".repeat(n), ")".repeat(n)),
        1 => format!("{}{fragment}", "NOT ".repeat(n)),
        2 => vec![fragment; n.max(1)].join(" OR "),
        3 => format!("i32 = {}", vec![fragment; n.max(1)].join(" + ")),
        4 => format!("i32 IN ({})", vec![fragment; n.max(1)].join(", ")),
        _ => format!("s = '{}'", fragment.repeat(n)),
    };
    let _ = parse_sql(&text, SqlContext::Filter);
    let _ = parse_sql(&text, SqlContext::ElementPredicate);
    let _ = BoundPredicate::parse_filter(&text, super::schema());
}

/// CLI argument values: the input is split at 0 bytes into values, each given to the
/// parsers of the command line (`--storage-option`, `--rows`, the rows and filter files),
/// to lakeseek's storage-option parsing, and (with the first value as the URL and the rest
/// as `key=value` options) to opening a store — which must fail cleanly for malformed URLs
/// and options (no request is sent: only local and in-memory stores, or a builder error).
pub fn cli_values(data: &[u8]) {
    if data.len() > 8192 {
        return;
    }
    let values: Vec<String> = data
        .split(|b| *b == 0)
        .map(|v| String::from_utf8_lossy(v).into_owned())
        .collect();
    let mut options = Vec::new();
    for v in &values {
        #[cfg(feature = "args")]
        {
            let _ = crate::args::parse_rows(v);
            if let Ok(kv) = crate::args::parse_key_value(v) {
                options.push(kv);
            }
        }
        #[cfg(not(feature = "args"))]
        if let Some((k, val)) = v.split_once('=') {
            options.push((k.to_string(), val.to_string()));
        }
    }
    let _ = crate::io::store::split_options(&options);
    let Some(url) = values.first() else { return };
    // Only URLs that open no network client: a fuzzer must not reach out.
    let local = !url.contains("://") || url.starts_with("memory://") || url.starts_with("file://");
    if local {
        let _ = crate::io::open_url(url, &options[options.len().min(1)..]);
    }
}
