//! Object paths named by a manifest must stay inside the dataset root.
//!
//! A manifest is untrusted input: its data-file paths and index file names are joined under
//! the dataset root, so a name like `../other.lance/data/x.lance`, `/etc/passwd`,
//! `s3://other-bucket/x` or `C:\x` must be refused with a clear error rather than read.
//! (object_store's `Path::join` would already percent-encode a `..` segment instead of
//! climbing, but the result would be a confusing `NotFound` for a nonsense object; the
//! manifest is refused up front instead.) Base paths (`base_id`) are refused elsewhere as
//! unsupported.

use crate::error::{Error, Result};

/// Whether `path` names an object lance writes once and never replaces under the same
/// name: a data file (`data/<uuid>.lance`), a file of an index (`_indices/<uuid>/…`), a
/// deletion file (`_deletions/…`) or the manifest of one version (`_versions/N.manifest`).
/// Only these may be kept in a disk tier across processes; `_latest.manifest` and anything
/// else a dataset reads are not.
pub(crate) fn is_immutable_object(path: &object_store::path::Path) -> bool {
    let parts: Vec<String> = path.parts().map(|p| p.as_ref().to_string()).collect();
    let Some((name, dirs)) = parts.split_last() else {
        return false;
    };
    let parent = dirs.last().map(String::as_str);
    match parent {
        Some("data") => name.ends_with(".lance"),
        Some("_deletions") => true,
        Some("_versions") => name.ends_with(".manifest") && name != "_latest.manifest",
        _ => dirs.len() >= 2 && dirs[dirs.len() - 2] == "_indices",
    }
}

/// Check that `relative` (a path from a manifest, relative to a directory of the dataset)
/// names an object below that directory: non-empty `/`-separated segments, none of them
/// `.` or `..` (also percent-encoded), no leading `/`, no URL scheme or drive prefix
/// (`s3:`, `file:`, `C:`), no backslash and no control characters. `what` names the
/// entry in the error (e.g. "data file of fragment 3").
pub(crate) fn check_relative_path(what: &str, relative: &str) -> Result<()> {
    let refuse = |why: &str| {
        Err(Error::corrupt(format!(
            "{what} has path {relative:?}, which {why}; refusing to read outside the dataset root"
        )))
    };
    if relative.is_empty() {
        return refuse("is empty");
    }
    if relative.starts_with('/') {
        return refuse("is absolute");
    }
    if relative.contains('\\') {
        return refuse("contains a backslash");
    }
    if relative.chars().any(|c| c.is_control()) {
        return refuse("contains control characters");
    }
    if has_scheme_prefix(relative) {
        return refuse("starts with a URL scheme or drive");
    }
    for segment in relative.split('/') {
        if segment.is_empty() {
            return refuse("has an empty segment");
        }
        let decoded = segment.to_ascii_lowercase().replace("%2e", ".");
        if decoded == "." || decoded == ".." {
            return refuse("climbs out of its directory");
        }
    }
    Ok(())
}

/// `scheme:` before the first `/` (RFC 3986 scheme characters), e.g. `s3:`, `gs:`,
/// `file:`, or a drive letter `C:`.
fn has_scheme_prefix(path: &str) -> bool {
    let first = path.split('/').next().unwrap_or("");
    let Some((scheme, _)) = first.split_once(':') else {
        return false;
    };
    let mut chars = scheme.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_write_once_objects_are_immutable() {
        let yes = [
            "t.lance/data/0a1b.lance",
            "a/b/t.lance/_indices/5f0e/page_data.lance",
            "t.lance/_indices/5f0e/page_lookup.lance",
            "t.lance/_deletions/0-3-99.arrow",
            "t.lance/_versions/18446744073709551614.manifest",
            "t.lance/_versions/2.manifest",
        ];
        let no = [
            "t.lance/_latest.manifest",
            "t.lance/_versions/_latest.manifest",
            "t.lance/_versions/2.txn",
            "t.lance/data/notes.txt",
            "t.lance/_indices/stray.lance",
            "t.lance/_transactions/1-x.txn",
            "file.lance",
            "",
        ];
        for p in yes {
            assert!(
                is_immutable_object(&object_store::path::Path::from(p)),
                "{p}"
            );
        }
        for p in no {
            assert!(
                !is_immutable_object(&object_store::path::Path::from(p)),
                "{p}"
            );
        }
    }

    #[test]
    fn plain_relative_paths_pass() {
        for ok in [
            "0b3e6e0c-1f5d-4c11-9f3c-3c8a4c6b1a2d.lance",
            "sub/dir/file.lance",
            "part_0_page_lookup.lance",
            "a..b.lance",
            "...",
        ] {
            check_relative_path("x", ok).unwrap();
        }
    }

    #[test]
    fn escaping_paths_are_refused() {
        for bad in [
            "",
            "../x.lance",
            "a/../../x.lance",
            "./x.lance",
            "a//b",
            "/etc/passwd",
            "s3://other-bucket/x.lance",
            "gs:x",
            "file:///etc/passwd",
            "C:\\x",
            "c:/x",
            "a\\..\\x",
            "%2e%2E/x",
            "a/%2E",
            "x\n.lance",
        ] {
            let e = check_relative_path("data file of fragment 0", bad).unwrap_err();
            assert!(matches!(e, Error::Corrupt { .. }), "{bad:?}: {e}");
            assert!(e.to_string().contains("outside the dataset root"), "{e}");
        }
    }
}
