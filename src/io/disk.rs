//! The disk tier: a byte-range cache of immutable objects in a local directory, shared by
//! every process pointed at it.
//!
//! **What is cached.** Raw byte ranges exactly as a GET returned them (a merged range read,
//! a suffix read, a whole object), one file per range, for objects the caller declares
//! immutable (a Lance dataset's data, index and deletion files and its versions' manifests,
//! whose names are never reused for other content). Never a listing; "which version is
//! latest" only as a *note* (`RangeFetcher::disk_note`): a fixed-size guess a later process
//! checks against the store (the version hint and the next manifest name) before using it.
//!
//! **Keying.** An object is its store identity (scheme + bucket/host + endpoint, see
//! `OpenedUrl::store_identity`) and path; its directory is named by the xxh64 of both and
//! every entry repeats them in its header, so a hash collision is a miss, never another
//! object's bytes. An entry also records the object's size and etag as the read saw them.
//! A lookup that knows the size (from the manifest, or the listing that found the version)
//! only takes an entry of that size, and with a known etag only an entry without an etag or
//! with the same one. A lookup that knows nothing (a suffix read of a pinned version's
//! manifest, a deletion file) takes the newest entry of the path: that is what "immutable by
//! name" buys.
//!
//! **Granularity.** Entries are the GETs as sent; a later read hits when one entry contains
//! its whole range (the fetcher asks per requested range, before coalescing), so a query
//! that coalesces differently still hits on ranges an earlier one fetched.
//!
//! **Integrity.** An entry is `magic | header (key, etag, size, range) | payload | xxh64`; its
//! file name repeats range, size and etag hash. A short, garbled, renamed or foreign file
//! is a miss (it is removed, and the refetched range rewrites it), never a wrong answer.
//!
//! **Concurrency.** An entry is written to a unique temporary file and renamed into place,
//! so readers (in this or another process) see a whole entry or none; two writers of one
//! range write the same bytes and the last rename wins. Deleting an entry another process
//! is reading is harmless on Unix (the open file stays readable).
//!
//! **Budget.** Hits refresh an entry's modification time; when the bytes this process
//! believes are on disk pass the budget, it lists the directory and removes the
//! least-recently-used entries until the total is under 90% of it (the on-disk total is
//! re-measured each time, so several processes keep it near the budget together).

use std::fs;
use std::io::Write;
use std::ops::Range;
use std::path::{Path as FsPath, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use bytes::Bytes;
use twox_hash::XxHash64;

use crate::error::{Error, Result};
use crate::io::source::ObjectVersion;

/// Leading bytes of every entry file.
const MAGIC: &[u8; 8] = b"LSKDSK01";
/// Directory (under the user's cache directory) holding this layout's files.
const LAYOUT_DIR: &str = "lakeseek-disk-v1";
/// Temporary files older than this are left-overs of a crashed writer.
const STALE_TEMP: Duration = Duration::from_secs(3600);
/// Marker of "no etag" in an entry header.
const NO_ETAG: u32 = u32::MAX;
/// Longest key or etag an entry may carry (guards allocations sized from disk).
const MAX_HEADER_FIELD: u32 = 64 * 1024;

/// What a lookup wants of an object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Wanted {
    /// This byte range.
    Range(Range<u64>),
    /// The last `n` bytes (all of a shorter object).
    Suffix(u64),
    /// The whole object.
    Whole,
}

/// Bytes served from disk.
#[derive(Debug, Clone)]
pub(crate) struct DiskHit {
    /// The wanted bytes (zero-copy slice of the entry).
    pub bytes: Bytes,
    /// Absolute offset of `bytes[0]` in the object.
    #[cfg_attr(not(test), allow(dead_code))] // the tests check it
    pub start: u64,
    /// The object's size and etag as recorded by the read that filled the entry.
    pub version: ObjectVersion,
}

/// One entry's name, parsed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct EntryName {
    start: u64,
    end: u64,
    size: u64,
    etag_hash: u64,
}

impl EntryName {
    fn file_name(&self) -> String {
        format!(
            "{:016x}-{:016x}-{:016x}-{:016x}.bin",
            self.start, self.end, self.size, self.etag_hash
        )
    }

    fn parse(name: &str) -> Option<Self> {
        let stem = name.strip_suffix(".bin")?;
        let mut parts = stem.split('-');
        let mut next = || u64::from_str_radix(parts.next()?, 16).ok();
        let parsed = Self {
            start: next()?,
            end: next()?,
            size: next()?,
            etag_hash: next()?,
        };
        (parsed.start < parsed.end && parsed.end <= parsed.size && parsed.file_name() == name)
            .then_some(parsed)
    }
}

fn hash64(bytes: &[u8]) -> u64 {
    XxHash64::oneshot(0, bytes)
}

/// Hash of an etag in entry names (0: no etag).
fn etag_hash(etag: Option<&str>) -> u64 {
    etag.map_or(0, |e| hash64(e.as_bytes()).max(1))
}

/// Whether an entry recorded as `name` may answer a lookup of an object known as `known`.
fn matches_version(name: &EntryName, known: Option<&ObjectVersion>) -> bool {
    let Some(known) = known else { return true };
    if name.size != known.size {
        return false;
    }
    match &known.etag {
        Some(etag) => name.etag_hash == 0 || name.etag_hash == etag_hash(Some(etag)),
        None => true,
    }
}

/// The byte range of the object `wanted` names in an entry `name`, if the entry holds it.
fn wanted_range(name: &EntryName, wanted: &Wanted) -> Option<Range<u64>> {
    let range = match wanted {
        Wanted::Range(r) => r.clone(),
        Wanted::Suffix(n) => name.size.saturating_sub(*n)..name.size,
        Wanted::Whole => 0..name.size,
    };
    (range.start < range.end && name.start <= range.start && range.end <= name.end).then_some(range)
}

/// Serialize an entry: magic, header, payload, checksum.
fn encode_entry(key: &str, version: &ObjectVersion, start: u64, payload: &[u8]) -> Vec<u8> {
    let etag = version.etag.as_deref();
    let mut out = Vec::with_capacity(payload.len() + key.len() + 64);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&(key.len() as u32).to_le_bytes());
    out.extend_from_slice(key.as_bytes());
    match etag {
        Some(e) => {
            out.extend_from_slice(&(e.len() as u32).to_le_bytes());
            out.extend_from_slice(e.as_bytes());
        }
        None => out.extend_from_slice(&NO_ETAG.to_le_bytes()),
    }
    out.extend_from_slice(&version.size.to_le_bytes());
    out.extend_from_slice(&start.to_le_bytes());
    out.extend_from_slice(&(start + payload.len() as u64).to_le_bytes());
    out.extend_from_slice(payload);
    let sum = hash64(&out);
    out.extend_from_slice(&sum.to_le_bytes());
    out
}

/// A bounds-checked reader over an entry's bytes.
struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.at.checked_add(n)?;
        let out = self.bytes.get(self.at..end)?;
        self.at = end;
        Some(out)
    }

    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }

    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
}

/// A decoded, verified entry: its version and the payload's place in `bytes`.
#[derive(Debug)]
struct DecodedEntry {
    version: ObjectVersion,
    range: Range<u64>,
    payload: Range<usize>,
}

/// Verify an entry file's bytes against the key and name it was looked up by. `None` for
/// anything short, garbled or foreign.
fn decode_entry(bytes: &[u8], key: &str, name: &EntryName) -> Option<DecodedEntry> {
    let body_len = bytes.len().checked_sub(8)?;
    let (body, sum) = bytes.split_at(body_len);
    if hash64(body) != u64::from_le_bytes(sum.try_into().ok()?) {
        return None;
    }
    let mut c = Cursor { bytes: body, at: 0 };
    if c.take(MAGIC.len())? != MAGIC {
        return None;
    }
    let key_len = c.u32()?;
    if key_len > MAX_HEADER_FIELD || c.take(key_len as usize)? != key.as_bytes() {
        return None;
    }
    let etag = match c.u32()? {
        NO_ETAG => None,
        n if n <= MAX_HEADER_FIELD => Some(String::from_utf8(c.take(n as usize)?.to_vec()).ok()?),
        _ => return None,
    };
    let (size, start, end) = (c.u64()?, c.u64()?, c.u64()?);
    let payload_start = c.at;
    let payload_len = usize::try_from(end.checked_sub(start)?).ok()?;
    c.take(payload_len)?;
    let consistent = c.at == body.len()
        && (start, end, size) == (name.start, name.end, name.size)
        && etag_hash(etag.as_deref()) == name.etag_hash;
    consistent.then(|| DecodedEntry {
        version: ObjectVersion { size, etag },
        range: start..end,
        payload: payload_start..payload_start + payload_len,
    })
}

/// A local directory of cached byte ranges with a byte budget; cheap to clone (clones share
/// the directory and the byte count).
#[derive(Debug, Clone)]
pub(crate) struct DiskCache {
    inner: Arc<DiskInner>,
}

#[derive(Debug)]
struct DiskInner {
    /// `<dir>/lakeseek-disk-v1`.
    root: PathBuf,
    budget: u64,
    /// Bytes this process believes are on disk (re-measured by every sweep).
    approx_bytes: AtomicU64,
    sweeping: AtomicBool,
}

impl DiskCache {
    /// Use (create if needed) `dir` as a disk tier holding about `budget_bytes` at most.
    pub(crate) fn open(dir: impl AsRef<FsPath>, budget_bytes: u64) -> Result<Self> {
        let root = dir.as_ref().join(LAYOUT_DIR);
        for sub in ["objects", "tmp"] {
            fs::create_dir_all(root.join(sub)).map_err(|e| {
                Error::InvalidArgument(format!(
                    "cannot use {} as a cache directory: {e}",
                    dir.as_ref().display()
                ))
            })?;
        }
        let cache = Self {
            inner: Arc::new(DiskInner {
                root,
                budget: budget_bytes,
                approx_bytes: AtomicU64::new(0),
                sweeping: AtomicBool::new(false),
            }),
        };
        cache.sweep();
        Ok(cache)
    }

    /// The directory this tier's files live in.
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) fn root(&self) -> &FsPath {
        &self.inner.root
    }

    fn object_dir(&self, key: &str) -> PathBuf {
        let h = format!("{:016x}", hash64(key.as_bytes()));
        self.inner.root.join("objects").join(&h[..2]).join(&h)
    }

    /// Look `wanted` of the object `key` (store identity + path) up, blocking. `known` is
    /// the object's version when the caller knows it.
    pub(crate) fn lookup_blocking(
        &self,
        key: &str,
        wanted: &Wanted,
        known: Option<&ObjectVersion>,
    ) -> Option<DiskHit> {
        let dir = self.object_dir(key);
        let mut candidates: Vec<(EntryName, Range<u64>, SystemTime)> = fs::read_dir(&dir)
            .ok()?
            .filter_map(|e| e.ok())
            .filter_map(|e| {
                let name = EntryName::parse(e.file_name().to_str()?)?;
                let range = wanted_range(&name, wanted)?;
                matches_version(&name, known).then_some(())?;
                let modified = e.metadata().ok()?.modified().ok()?;
                Some((name, range, modified))
            })
            .collect();
        // Newest first (for unknown versions), then the smallest entry.
        candidates.sort_by(|a, b| {
            b.2.cmp(&a.2)
                .then((a.0.end - a.0.start).cmp(&(b.0.end - b.0.start)))
        });
        for (name, range, _) in candidates {
            let path = dir.join(name.file_name());
            let Ok(bytes) = fs::read(&path) else { continue };
            let Some(entry) = decode_entry(&bytes, key, &name) else {
                let _ = fs::remove_file(&path); // garbled: refetched and rewritten
                continue;
            };
            touch(&path);
            let lo = entry.payload.start + (range.start - entry.range.start) as usize;
            let hi = lo + (range.end - range.start) as usize;
            let bytes = Bytes::from(bytes).slice(lo..hi);
            return Some(DiskHit {
                bytes,
                start: range.start,
                version: entry.version,
            });
        }
        None
    }

    /// Store `bytes` read at `start` of the object `key` whose version is `version`,
    /// blocking. Failures are ignored (the cache only ever loses an entry).
    pub(crate) fn store_blocking(
        &self,
        key: &str,
        version: &ObjectVersion,
        start: u64,
        bytes: &[u8],
    ) {
        let Some(end) = start.checked_add(bytes.len() as u64) else {
            return;
        };
        if bytes.is_empty() || end > version.size {
            return;
        }
        let name = EntryName {
            start,
            end,
            size: version.size,
            etag_hash: etag_hash(version.etag.as_deref()),
        };
        let encoded = encode_entry(key, version, start, bytes);
        if encoded.len() as u64 > self.inner.budget {
            return;
        }
        let dir = self.object_dir(key);
        if self
            .write_atomically(&dir, &name.file_name(), &encoded)
            .is_ok()
        {
            let total = self
                .inner
                .approx_bytes
                .fetch_add(encoded.len() as u64, Ordering::SeqCst)
                + encoded.len() as u64;
            if total > self.inner.budget {
                self.sweep();
            }
        }
    }

    fn write_atomically(&self, dir: &FsPath, name: &str, encoded: &[u8]) -> std::io::Result<()> {
        let tmp = self.inner.root.join("tmp").join(format!(
            "{}-{}.tmp",
            std::process::id(),
            uuid::Uuid::new_v4().simple()
        ));
        let written = (|| {
            let mut f = fs::File::create(&tmp)?;
            f.write_all(encoded)?;
            f.flush()?;
            fs::create_dir_all(dir)?;
            fs::rename(&tmp, dir.join(name))
        })();
        if written.is_err() {
            let _ = fs::remove_file(&tmp);
        }
        written
    }

    /// Measure the directory, drop left-over temporary files, and remove the
    /// least-recently-used entries while the total is over the budget (down to 90% of it).
    /// One sweep at a time per process.
    pub(crate) fn sweep(&self) {
        if self.inner.sweeping.swap(true, Ordering::SeqCst) {
            return;
        }
        let mut entries = Vec::new();
        let objects = self.inner.root.join("objects");
        for fan in read_dir_paths(&objects) {
            for object in read_dir_paths(&fan) {
                for entry in read_dir_paths(&object) {
                    if let Ok(meta) = fs::metadata(&entry) {
                        let modified = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
                        entries.push((modified, meta.len(), entry));
                    }
                }
            }
        }
        let now = SystemTime::now();
        for tmp in read_dir_paths(&self.inner.root.join("tmp")) {
            let stale = fs::metadata(&tmp)
                .and_then(|m| m.modified())
                .is_ok_and(|m| now.duration_since(m).unwrap_or_default() > STALE_TEMP);
            if stale {
                let _ = fs::remove_file(&tmp);
            }
        }
        let mut total: u64 = entries.iter().map(|e| e.1).sum();
        if total > self.inner.budget {
            let target = self.inner.budget / 10 * 9;
            entries.sort_by_key(|e| e.0);
            for (_, len, path) in &entries {
                if total <= target {
                    break;
                }
                if fs::remove_file(path).is_ok() {
                    total = total.saturating_sub(*len);
                }
            }
        }
        self.inner.approx_bytes.store(total, Ordering::SeqCst);
        self.inner.sweeping.store(false, Ordering::SeqCst);
    }

    /// Whether any entry of the object `key` is on disk (names only, nothing verified).
    pub(crate) fn has_entries_blocking(&self, key: &str) -> bool {
        fs::read_dir(self.object_dir(key)).is_ok_and(|mut d| {
            d.any(|e| {
                e.ok()
                    .and_then(|e| e.file_name().to_str().and_then(EntryName::parse))
                    .is_some()
            })
        })
    }

    /// [`has_entries_blocking`](Self::has_entries_blocking) on the blocking thread pool.
    pub(crate) async fn has_entries(&self, key: String) -> bool {
        let this = self.clone();
        tokio::task::spawn_blocking(move || this.has_entries_blocking(&key))
            .await
            .unwrap_or(false)
    }

    /// (valid, invalid) entries on disk: every file is decoded against the key its header
    /// names, and must sit in that key's directory under its own name.
    #[cfg(test)]
    pub(crate) fn verify_all(&self) -> (usize, usize) {
        let (mut valid, mut invalid) = (0, 0);
        for fan in read_dir_paths(&self.inner.root.join("objects")) {
            for object in read_dir_paths(&fan) {
                for entry in read_dir_paths(&object) {
                    let ok = (|| {
                        let bytes = fs::read(&entry).ok()?;
                        let mut c = Cursor {
                            bytes: &bytes,
                            at: MAGIC.len(),
                        };
                        let len = c.u32()?;
                        let key = std::str::from_utf8(c.take(len as usize)?).ok()?;
                        let name = EntryName::parse(entry.file_name()?.to_str()?)?;
                        decode_entry(&bytes, key, &name)?;
                        (self.object_dir(key) == object).then_some(())
                    })();
                    if ok.is_some() {
                        valid += 1;
                    } else {
                        invalid += 1;
                    }
                }
            }
        }
        (valid, invalid)
    }

    /// Bytes of entries on disk (measured now).
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) fn measured_bytes(&self) -> u64 {
        let mut total = 0;
        for fan in read_dir_paths(&self.inner.root.join("objects")) {
            for object in read_dir_paths(&fan) {
                for entry in read_dir_paths(&object) {
                    total += fs::metadata(&entry).map_or(0, |m| m.len());
                }
            }
        }
        total
    }

    /// [`lookup_blocking`](Self::lookup_blocking) on the blocking thread pool.
    pub(crate) async fn lookup(
        &self,
        key: String,
        wanted: Wanted,
        known: Option<ObjectVersion>,
    ) -> Option<DiskHit> {
        let this = self.clone();
        tokio::task::spawn_blocking(move || this.lookup_blocking(&key, &wanted, known.as_ref()))
            .await
            .ok()
            .flatten()
    }

    /// [`store_blocking`](Self::store_blocking) on the blocking thread pool (awaited, so
    /// a process that exits after its query leaves its entries behind).
    pub(crate) async fn store(
        &self,
        key: String,
        version: ObjectVersion,
        start: u64,
        bytes: Bytes,
    ) {
        let this = self.clone();
        let _ =
            tokio::task::spawn_blocking(move || this.store_blocking(&key, &version, start, &bytes))
                .await;
    }
}

fn read_dir_paths(dir: &FsPath) -> Vec<PathBuf> {
    fs::read_dir(dir)
        .map(|d| d.filter_map(|e| e.ok()).map(|e| e.path()).collect())
        .unwrap_or_default()
}

/// Mark an entry as just used (its modification time orders eviction).
fn touch(path: &FsPath) {
    if let Ok(f) = fs::File::options().append(true).open(path) {
        let _ = f.set_modified(SystemTime::now());
    }
}

#[cfg(test)]
#[path = "disk_tests.rs"]
mod tests;
