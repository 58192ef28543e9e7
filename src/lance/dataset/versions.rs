//! Manifest file naming: which file holds version N, and which listed name is the latest.
//!
//! * V2 naming (default since lance 0.17): `_versions/{u64::MAX - N:020}.manifest`. Newer
//!   versions get smaller numbers, so on stores that list in lexical order (S3, GCS, Azure)
//!   the first listed manifest is the latest: finding it costs ONE LIST request (its first
//!   page), whatever the number of versions.
//! * V1 naming: `_versions/{N}.manifest` (no padding). Names do not sort by version, so every
//!   LIST page must be read (ceil(versions / 1000) requests on S3).
//! * Detached versions `d{N}.manifest` and names that do not parse are skipped.
//!
//! * `_versions/latest_version_hint.json` (`{"version":N}`) names the latest version when
//!   the writer wrote it ([`parse_version_hint`]; how opens use it: `super::latest`).
//!
//! All functions here are pure.

use crate::error::{Error, Result};

/// Directory (relative to the dataset root) that holds the manifests.
pub(crate) const VERSIONS_DIR: &str = "_versions";

/// File name (in [`VERSIONS_DIR`]) of the version hint lance writes after a commit.
pub(crate) const VERSION_HINT_FILE: &str = "latest_version_hint.json";

/// The version a version hint names: a JSON object with an unsigned integer `version`
/// (other fields ignored). `None` for anything else (the hint is only a hint: the caller
/// then lists).
pub(crate) fn parse_version_hint(bytes: &[u8]) -> Option<u64> {
    #[derive(serde::Deserialize)]
    struct Hint {
        version: u64,
    }
    serde_json::from_slice::<Hint>(bytes)
        .ok()
        .map(|h| h.version)
}

/// How manifest files are named.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum ManifestNaming {
    /// `{N}.manifest`.
    V1,
    /// `{u64::MAX - N:020}.manifest`.
    V2,
}

impl ManifestNaming {
    /// File name (without directory) of the manifest of `version`.
    pub(crate) fn file_name(self, version: u64) -> String {
        match self {
            ManifestNaming::V1 => format!("{version}.manifest"),
            ManifestNaming::V2 => format!("{:020}.manifest", u64::MAX - version),
        }
    }
}

/// Parse a manifest file name into (version, naming). `None` for detached versions,
/// temporary files, the version hint and anything else that is not a manifest.
pub(crate) fn parse_manifest_name(file_name: &str) -> Option<(u64, ManifestNaming)> {
    let stem = file_name.strip_suffix(".manifest")?;
    if stem.is_empty() || !stem.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let number: u64 = stem.parse().ok()?;
    if stem.len() == 20 {
        Some((u64::MAX - number, ManifestNaming::V2))
    } else {
        Some((number, ManifestNaming::V1))
    }
}

/// Running choice of the latest manifest while a listing is consumed.
#[derive(Debug, Clone, Default)]
pub(crate) struct LatestManifestChooser<T> {
    best: Option<(u64, ManifestNaming, T)>,
    naming: Option<ManifestNaming>,
    mixed: bool,
}

impl<T> LatestManifestChooser<T> {
    /// A chooser that has seen nothing yet.
    pub(crate) fn new() -> Self {
        Self {
            best: None,
            naming: None,
            mixed: false,
        }
    }

    /// Offer one listed file. Returns true when the listing can stop: the store lists in
    /// lexical order and the first manifest seen uses V2 naming, so it is the latest.
    pub(crate) fn offer(&mut self, file_name: &str, item: T, lexically_ordered: bool) -> bool {
        let Some((version, naming)) = parse_manifest_name(file_name) else {
            return false;
        };
        let first = self.naming.is_none();
        match self.naming {
            None => self.naming = Some(naming),
            Some(n) if n != naming => self.mixed = true,
            Some(_) => {}
        }
        if self.best.as_ref().is_none_or(|(v, _, _)| version > *v) {
            self.best = Some((version, naming, item));
        }
        first && lexically_ordered && naming == ManifestNaming::V2
    }

    /// The latest manifest seen: (version, naming, item). `dir` names the directory in
    /// errors.
    pub(crate) fn finish(self, dir: &str) -> Result<(u64, ManifestNaming, T)> {
        if self.mixed {
            return Err(Error::Corrupt {
                path: dir.to_string(),
                range: None,
                what: "manifests use both V1 and V2 naming in one directory".into(),
                source: None,
            });
        }
        self.best.ok_or_else(|| Error::NotFound {
            path: dir.to_string(),
            what: "no manifest (is this a Lance dataset?)".into(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        assert_eq!(
            ManifestNaming::V2.file_name(1),
            "18446744073709551614.manifest"
        );
        assert_eq!(
            ManifestNaming::V2.file_name(3),
            "18446744073709551612.manifest"
        );
        assert_eq!(ManifestNaming::V1.file_name(12), "12.manifest");
        for v in [0u64, 1, 2, 99, 1 << 40] {
            for n in [ManifestNaming::V1, ManifestNaming::V2] {
                assert_eq!(parse_manifest_name(&n.file_name(v)), Some((v, n)));
            }
        }
    }

    #[test]
    fn version_hints_parse_or_are_ignored() {
        assert_eq!(parse_version_hint(br#"{"version":2}"#), Some(2));
        assert_eq!(
            parse_version_hint(br#" {"version": 18, "x": 1} "#),
            Some(18)
        );
        for bad in [
            &b""[..],
            b"{}",
            b"2",
            br#"{"version":-1}"#,
            br#"{"version":"2"}"#,
            br#"{"version":1.5}"#,
            br#"{"version":99999999999999999999999}"#,
            b"\xff\xfe",
        ] {
            assert_eq!(parse_version_hint(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn skips_non_manifests() {
        for name in [
            "latest_version_hint.json",
            "d5.manifest",
            "5.manifest-tmp",
            ".manifest",
            "x5.manifest",
            "-1.manifest",
            "99999999999999999999999.manifest",
        ] {
            assert_eq!(parse_manifest_name(name), None, "{name}");
        }
    }

    #[test]
    fn ordered_v2_listing_stops_at_first() {
        let mut c = LatestManifestChooser::new();
        assert!(!c.offer("latest_version_hint.json", 0, true));
        assert!(c.offer(&ManifestNaming::V2.file_name(7), 1, true));
        assert_eq!(c.finish("d").unwrap(), (7, ManifestNaming::V2, 1));
    }

    #[test]
    fn unordered_or_v1_listing_takes_max() {
        let mut c = LatestManifestChooser::new();
        for (i, v) in [3u64, 10, 2].iter().enumerate() {
            assert!(!c.offer(&ManifestNaming::V1.file_name(*v), i, true));
        }
        assert_eq!(c.finish("d").unwrap(), (10, ManifestNaming::V1, 1));
        let mut c = LatestManifestChooser::new();
        for (i, v) in [3u64, 10, 2].iter().enumerate() {
            assert!(!c.offer(&ManifestNaming::V2.file_name(*v), i, false));
        }
        assert_eq!(c.finish("d").unwrap().0, 10);
    }

    #[test]
    fn empty_and_mixed_are_errors() {
        let c: LatestManifestChooser<()> = LatestManifestChooser::new();
        assert!(matches!(c.finish("d"), Err(Error::NotFound { .. })));
        let mut c = LatestManifestChooser::new();
        c.offer("1.manifest", (), false);
        c.offer(&ManifestNaming::V2.file_name(2), (), false);
        assert!(matches!(c.finish("d"), Err(Error::Corrupt { .. })));
    }
}
