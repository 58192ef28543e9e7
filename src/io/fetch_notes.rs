//! Notes: small fixed-size records the disk tier keeps for a path that names no immutable
//! object (e.g. the last version of a dataset this cache directory saw), so a later process
//! can make a first guess without a request. A note is only ever a guess: callers check it
//! against the store before they rely on it.

use bytes::Bytes;
use object_store::path::Path;

use super::RangeFetcher;
use crate::io::disk::Wanted;
use crate::io::source::ObjectVersion;

/// Bytes of every note (fixed, so a newer note replaces the older one's disk entry).
pub(crate) const NOTE_BYTES: usize = 32;

impl RangeFetcher {
    /// The disk key of the note `name` (no immutability check: notes are guesses).
    fn note_key(&self, name: &Path) -> Option<String> {
        let disk = self.disk.as_ref()?;
        Some(format!("{}\n{name}", disk.store))
    }

    /// The note `name` from the disk tier (no request, nothing counted); `None` without a
    /// disk tier or note.
    pub(crate) async fn disk_note(&self, name: &Path) -> Option<Bytes> {
        let key = self.note_key(name)?;
        let disk = self.disk.as_ref()?;
        let known = ObjectVersion {
            size: NOTE_BYTES as u64,
            etag: None,
        };
        let hit = disk.cache.lookup(key, Wanted::Whole, Some(known)).await?;
        (hit.bytes.len() == NOTE_BYTES).then_some(hit.bytes)
    }

    /// Keep `note` (padded or cut to [`NOTE_BYTES`]) as the note `name` on the disk tier,
    /// replacing the previous one; nothing without a disk tier.
    pub(crate) async fn set_disk_note(&self, name: &Path, note: &[u8]) {
        let (Some(key), Some(disk)) = (self.note_key(name), self.disk.as_ref()) else {
            return;
        };
        let mut bytes = vec![b' '; NOTE_BYTES];
        let n = note.len().min(NOTE_BYTES);
        bytes[..n].copy_from_slice(&note[..n]);
        let version = ObjectVersion {
            size: NOTE_BYTES as u64,
            etag: None,
        };
        disk.cache.store(key, version, 0, Bytes::from(bytes)).await;
    }
}
