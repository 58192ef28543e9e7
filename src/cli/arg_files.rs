//! `--rows-file F` and `--filter-file F` (`F` = `-` reads stdin): long row-address lists and
//! filters without Linux's 128 KiB cap on one argument. They are expanded before the
//! command line is parsed into the `--rows` / `--filter` they stand for, so every command
//! that takes `--rows` (`take`, `read`) or `--filter` (`query`) takes them too.
//!
//! A rows file holds numbers (or a `a..b` range) separated by commas, spaces or newlines;
//! a filter file holds one SQL predicate (surrounding whitespace is dropped).

use std::ffi::OsString;
use std::io::Read;

use crate::{Error, Result};

/// Largest file accepted by either flag (256 MiB): bounds memory for a mistaken path.
const MAX_ARG_FILE_BYTES: u64 = 256 << 20;

/// `args` with every `--rows-file F` / `--filter-file F` (or `--flag-file=F`) replaced by
/// `--rows <contents>` / `--filter <contents>`.
pub(crate) fn expand(args: Vec<OsString>) -> Result<Vec<OsString>> {
    let mut out = Vec::with_capacity(args.len());
    let mut stdin_used = false;
    let mut iter = args.into_iter();
    while let Some(arg) = iter.next() {
        let text = arg.to_string_lossy().into_owned();
        if text == "--" {
            out.push(arg);
            out.extend(iter);
            break;
        }
        let Some((flag, target)) = [("--rows-file", "--rows"), ("--filter-file", "--filter")]
            .into_iter()
            .find(|(flag, _)| text == *flag || text.starts_with(&format!("{flag}=")))
        else {
            out.push(arg);
            continue;
        };
        let path = match text.strip_prefix(&format!("{flag}=")) {
            Some(inline) => OsString::from(inline),
            None => iter.next().ok_or_else(|| {
                Error::InvalidArgument(format!("{flag} needs a file name (or -)"))
            })?,
        };
        let contents = read_arg_file(flag, &path, &mut stdin_used)?;
        let value = if target == "--rows" {
            rows_value(flag, &contents)?
        } else {
            filter_value(flag, &contents)?
        };
        out.push(OsString::from(target));
        out.push(OsString::from(value));
    }
    Ok(out)
}

fn read_arg_file(flag: &str, path: &OsString, stdin_used: &mut bool) -> Result<String> {
    let mut bytes = Vec::new();
    let shown = path.to_string_lossy();
    if path == "-" {
        if std::mem::replace(stdin_used, true) {
            return Err(Error::InvalidArgument(format!(
                "{flag} -: stdin was already read by another flag"
            )));
        }
        std::io::stdin()
            .lock()
            .take(MAX_ARG_FILE_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| Error::InvalidArgument(format!("{flag} -: cannot read stdin: {e}")))?;
    } else {
        let file = std::fs::File::open(path)
            .map_err(|e| Error::InvalidArgument(format!("{flag} {shown}: {e}")))?;
        file.take(MAX_ARG_FILE_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| Error::InvalidArgument(format!("{flag} {shown}: {e}")))?;
    }
    if bytes.len() as u64 > MAX_ARG_FILE_BYTES {
        return Err(Error::InvalidArgument(format!(
            "{flag} {shown}: larger than {MAX_ARG_FILE_BYTES} bytes"
        )));
    }
    String::from_utf8(bytes)
        .map_err(|_| Error::InvalidArgument(format!("{flag} {shown}: not UTF-8 text")))
}

/// The `--rows` value of a rows file: its items joined by commas.
fn rows_value(flag: &str, contents: &str) -> Result<String> {
    let items: Vec<&str> = contents
        .split(|c: char| c == ',' || c.is_whitespace())
        .filter(|s| !s.is_empty())
        .collect();
    if items.is_empty() {
        return Err(Error::InvalidArgument(format!(
            "{flag}: the file lists no rows"
        )));
    }
    Ok(items.join(","))
}

/// The `--filter` value of a filter file.
fn filter_value(flag: &str, contents: &str) -> Result<String> {
    let filter = contents.trim();
    if filter.is_empty() {
        return Err(Error::InvalidArgument(format!(
            "{flag}: the file holds no filter"
        )));
    }
    Ok(filter.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(args: &[&str]) -> Vec<OsString> {
        args.iter().map(OsString::from).collect()
    }

    #[test]
    fn files_become_the_flags_they_stand_for() {
        let dir = tempfile::tempdir().unwrap();
        let rows = dir.path().join("rows.txt");
        std::fs::write(&rows, "1, 2\n3\n\n4294967296 ").unwrap();
        let filter = dir.path().join("f.sql");
        std::fs::write(&filter, "  id IN (1, 2)\n").unwrap();
        let args = os(&[
            "lakeseek",
            "take",
            "ds",
            "--rows-file",
            rows.to_str().unwrap(),
            &format!("--filter-file={}", filter.display()),
            "--",
            "--rows-file",
        ]);
        let out = expand(args).unwrap();
        assert_eq!(
            out,
            os(&[
                "lakeseek",
                "take",
                "ds",
                "--rows",
                "1,2,3,4294967296",
                "--filter",
                "id IN (1, 2)",
                "--",
                "--rows-file"
            ])
        );
    }

    #[test]
    fn missing_empty_and_unreadable_files_are_clear_errors() {
        let dir = tempfile::tempdir().unwrap();
        let empty = dir.path().join("empty");
        std::fs::write(&empty, " \n").unwrap();
        let cases = [
            (os(&["x", "--rows-file"]), "needs a file name"),
            (
                os(&["x", "--rows-file", "/nonexistent/rows"]),
                "/nonexistent/rows",
            ),
            (
                os(&["x", "--rows-file", empty.to_str().unwrap()]),
                "lists no rows",
            ),
            (
                os(&["x", "--filter-file", empty.to_str().unwrap()]),
                "holds no filter",
            ),
        ];
        for (args, want) in cases {
            let err = expand(args).unwrap_err().to_string();
            assert!(err.contains(want), "{err}");
        }
        std::fs::write(&empty, [0xff, 0xfe]).unwrap();
        let err = expand(os(&["x", "--filter-file", empty.to_str().unwrap()])).unwrap_err();
        assert!(err.to_string().contains("UTF-8"), "{err}");
    }
}
