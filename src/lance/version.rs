//! [`FileVersion`]: which Lance v2 format a file is written in, read from its footer.
//!
//! Below the container ([`crate::lance::file`]) and the page layouts
//! ([`crate::lance::page`]): the footer names the version, and which page encodings a page
//! may use depends on it.

use crate::error::{Error, Result};

/// What the v2 reader says of a legacy v1 footer (the legacy reader takes such files over).
pub(crate) const LEGACY_FOOTER_MESSAGE: &str = "legacy Lance v1 file";

/// Version of a Lance v2 file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum FileVersion {
    /// 2.0 (footer `(0,3)` or `(2,0)`): pages use `lance.encodings.ArrayEncoding`.
    V2_0,
    /// 2.1: structural `PageLayout` pages with u16 chunk words.
    V2_1,
    /// 2.2: structural `PageLayout` pages with u32 chunk words.
    V2_2,
    /// 2.3 (unstable): `PlanarLayout` pages.
    V2_3,
}

impl FileVersion {
    /// Map the footer's (major, minor) pair to a version.
    pub(crate) fn from_footer(major: u16, minor: u16) -> Result<Self> {
        match (major, minor) {
            (0, 3) | (2, 0) => Ok(Self::V2_0),
            (2, 1) => Ok(Self::V2_1),
            (2, 2) => Ok(Self::V2_2),
            (2, 3) => Ok(Self::V2_3),
            (0, 0..=2) => Err(Error::unsupported(format!(
                "{LEGACY_FOOTER_MESSAGE} (footer version {major}.{minor}); the v2 reader reads 2.0-2.3 files"
            ))),
            _ => Err(Error::unsupported(format!("unknown Lance file version {major}.{minor}"))),
        }
    }

    /// `"2.0"` .. `"2.3"`.
    pub(crate) fn as_str(&self) -> &'static str {
        match self {
            Self::V2_0 => "2.0",
            Self::V2_1 => "2.1",
            Self::V2_2 => "2.2",
            Self::V2_3 => "2.3",
        }
    }
}

impl std::fmt::Display for FileVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_map_and_reject() {
        assert_eq!(FileVersion::from_footer(0, 3).unwrap(), FileVersion::V2_0);
        assert_eq!(FileVersion::from_footer(2, 3).unwrap(), FileVersion::V2_3);
        assert!(matches!(
            FileVersion::from_footer(0, 1),
            Err(Error::Unsupported { .. })
        ));
        assert!(matches!(
            FileVersion::from_footer(2, 4),
            Err(Error::Unsupported { .. })
        ));
    }
}
