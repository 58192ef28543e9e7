//! Finding the latest version of a dataset, without LIST where the dataset allows it.
//!
//! Lance writes `_versions/latest_version_hint.json` (`{"version":N}`) after each commit on
//! stores that do not list in lexical order (local disks, S3 Express; pylance 14.0.2 writes
//! it on local disks, so datasets written locally and copied to a bucket carry it), and
//! reads it only there: on S3, GCS and Azure pylance 14.0.2 LISTs `_versions/` (its first
//! page, up to 1,000 names) and takes the newest; on other remote stores it reads the hint
//! and then HEADs version N+1, N+2, ... until one is missing; on local disks it reads the
//! directory.
//!
//! lakeseek reads the hint everywhere, because a LIST costs 12.5 GETs on S3 and far more
//! server time than a GET on small self-hosted stores:
//!
//! 1. GET the hint — in the same round trip, when this session opened the dataset before
//!    (a warm open), GET the manifest after the last version it saw; when another process
//!    sharing the disk tier did (a note of the version it found, [`SEEN_NOTE`]), GET that
//!    version's manifest (from the store) and the one after it;
//! 2. GET (a 64 KiB suffix of) the manifest of version N and of N+1 together. Versions are
//!    committed one after another (N+1 is created put-if-absent on top of N), so when N+1
//!    does not exist, N is the latest. When N+1 exists (the hint is stale: a writer that
//!    does not write hints committed since), N+2 is probed next, and so on for a few
//!    steps;
//! 3. fall back to the LIST where there is no hint, it does not parse, its version has no
//!    manifest under either naming scheme, or it is more than a few versions behind.
//!
//! Manifests found this way are read from the store, never from the disk tier (a dataset
//! deleted and recreated at the same path reuses version names); they are written there
//! for later pinned opens.
//!
//! Cost: a cold open is 2 round trips (hint; manifest + probe: 3 GETs), as with a LIST (LIST;
//! manifest); a warm open whose version did not change is 1 round trip (hint + probe, the
//! manifest from the session's cache), as with a LIST; an open in a new process whose disk
//! tier noted the version, unchanged since, is 1 round trip (hint, manifest, probe: 3 GETs
//! together). No LIST either way. The note is only a guess: the hint must name the noted
//! version and the next version must be missing, else the open goes on as a cold one.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use object_store::path::Path;

use super::versions::{parse_version_hint, ManifestNaming, VERSIONS_DIR, VERSION_HINT_FILE};
use super::{join, load_manifest, DatasetSession, DatasetStore, Manifest, ManifestLocation};
use crate::error::{Error, Result};
use crate::io::IoStats;

/// The disk tier's note of the latest version a process found (a name Lance never writes).
pub(crate) const SEEN_NOTE: &str = "_versions/.lakeseek-latest-seen";

/// Versions probed past a stale hint (one round trip each) before falling back to the LIST.
const MAX_PROBE_STEPS: usize = 3;

/// The hint file is tiny; anything larger is not a hint.
const MAX_HINT_BYTES: usize = 4096;

/// The latest version a session saw of each dataset root (what a warm open probes past).
#[derive(Debug, Default)]
pub(crate) struct LatestSeen {
    roots: Mutex<HashMap<String, (u64, ManifestNaming)>>,
}

impl LatestSeen {
    fn get(&self, root: &Path) -> Option<(u64, ManifestNaming)> {
        let roots = self.roots.lock().unwrap_or_else(|p| p.into_inner());
        roots.get(root.as_ref()).copied()
    }

    fn set(&self, root: &Path, version: u64, naming: ManifestNaming) {
        let mut roots = self.roots.lock().unwrap_or_else(|p| p.into_inner());
        if roots.len() >= 4096 && !roots.contains_key(root.as_ref()) {
            roots.clear();
        }
        let entry = roots.entry(root.to_string()).or_insert((version, naming));
        if version >= entry.0 {
            *entry = (version, naming);
        }
    }
}

/// The latest version of the dataset at `root` and its manifest, found through the version
/// hint; `None` when the hint cannot settle it (then the caller LISTs).
pub(crate) async fn latest_from_hint(
    store: &DatasetStore,
    session: &DatasetSession,
    root: &Path,
    stats: &IoStats,
) -> Result<Option<(ManifestLocation, Arc<Manifest>)>> {
    let seen = session.extensions.get_or_init(LatestSeen::default);
    let known = seen.get(root);
    let noted = match known {
        Some(_) => None,
        None => read_note(store, root).await,
    };
    // Round trip 1: the hint, and (warm) the version after the last one seen, or (noted on
    // disk) the noted version and the one after it.
    let hint = read_hint(store, root, stats);
    let after_known = async {
        match known.or(noted) {
            Some((v, naming)) => Some(probe(store, session, root, v + 1, naming, stats).await),
            None => None,
        }
    };
    let at_noted = async {
        match noted {
            Some((v, naming)) => probe(store, session, root, v, naming, stats).await.ok(),
            None => None,
        }
    };
    // Sent together: one round trip, however the answers interleave.
    let wave = stats.start_wave();
    let (hint, after_known, at_noted) = futures::join!(hint, after_known, at_noted);
    drop(wave);
    let Some(hinted) = hint? else {
        return Ok(None);
    };
    let found = match (known, noted, after_known, at_noted) {
        // Warm, nothing newer than what the session saw, and the hint agrees.
        (Some((v, naming)), _, Some(Ok(None)), _) if hinted <= v => {
            let location = location(root, v, naming);
            let manifest = load_manifest(store, session, root, &location, stats).await?;
            Some((location, manifest))
        }
        (Some(_), _, Some(Err(e)), _) => return Err(e),
        // Warm and newer versions exist, or cold: start from the hint.
        (Some((v, naming)), _, Some(Ok(Some(next))), _) => {
            climb(store, session, root, next, v + 1, naming, stats).await?
        }
        // Noted on disk, the hint names it, it exists and the next one does not.
        (None, Some((v, naming)), Some(Ok(None)), Some(Some(at))) if hinted == v => {
            Some((location(root, v, naming), at))
        }
        // Noted, it exists and newer versions too.
        (None, Some((v, naming)), Some(Ok(Some(next))), Some(Some(_))) if hinted >= v => {
            climb(store, session, root, next, v + 1, naming, stats).await?
        }
        _ => from_hinted(store, session, root, hinted, known.map(|k| k.1), stats).await?,
    };
    if let Some((location, _)) = &found {
        seen.set(root, location.version, location.naming);
        if noted != Some((location.version, location.naming)) {
            write_note(store, root, location.version, location.naming).await;
        }
    }
    Ok(found)
}

/// The version the disk tier's note names for `root` (none without a disk tier or note).
async fn read_note(store: &DatasetStore, root: &Path) -> Option<(u64, ManifestNaming)> {
    let bytes = store.fetcher.disk_note(&join(root, SEEN_NOTE)).await?;
    let text = std::str::from_utf8(&bytes).ok()?;
    let mut words = text.split_whitespace();
    let version = words.next()?.parse().ok()?;
    let naming = match words.next()? {
        "v1" => ManifestNaming::V1,
        "v2" => ManifestNaming::V2,
        _ => return None,
    };
    Some((version, naming))
}

/// Note `version` as the latest of `root` on the disk tier, for later processes.
async fn write_note(store: &DatasetStore, root: &Path, version: u64, naming: ManifestNaming) {
    let naming = match naming {
        ManifestNaming::V1 => "v1",
        ManifestNaming::V2 => "v2",
    };
    let note = format!("{version} {naming}");
    store
        .fetcher
        .set_disk_note(&join(root, SEEN_NOTE), note.as_bytes())
        .await;
}

/// Note the version an open by LIST found (a later open probes past it).
pub(crate) fn remember_latest(session: &DatasetSession, root: &Path, location: &ManifestLocation) {
    let seen = session.extensions.get_or_init(LatestSeen::default);
    seen.set(root, location.version, location.naming);
}

/// Cold (or hint newer than what the session saw): the hinted version and the next one
/// together, under the naming the dataset uses (V2 first when unknown, then V1).
async fn from_hinted(
    store: &DatasetStore,
    session: &DatasetSession,
    root: &Path,
    hinted: u64,
    naming: Option<ManifestNaming>,
    stats: &IoStats,
) -> Result<Option<(ManifestLocation, Arc<Manifest>)>> {
    let namings = match naming {
        Some(n) => vec![n],
        None => vec![ManifestNaming::V2, ManifestNaming::V1],
    };
    for naming in namings {
        let wave = stats.start_wave();
        let (at, next) = futures::join!(
            probe(store, session, root, hinted, naming, stats),
            probe(store, session, root, hinted + 1, naming, stats)
        );
        drop(wave);
        let Some(at) = at? else { continue };
        return match next? {
            None => Ok(Some((location(root, hinted, naming), at))),
            Some(next) => climb(store, session, root, next, hinted + 1, naming, stats).await,
        };
    }
    Ok(None)
}

/// `version` exists (its manifest is `manifest`): probe the next ones, one round trip each,
/// until one is missing (`None` after [`MAX_PROBE_STEPS`]: the caller LISTs).
async fn climb(
    store: &DatasetStore,
    session: &DatasetSession,
    root: &Path,
    mut manifest: Arc<Manifest>,
    mut version: u64,
    naming: ManifestNaming,
    stats: &IoStats,
) -> Result<Option<(ManifestLocation, Arc<Manifest>)>> {
    for _ in 0..MAX_PROBE_STEPS {
        match probe(store, session, root, version + 1, naming, stats).await? {
            None => return Ok(Some((location(root, version, naming), manifest))),
            Some(next) => {
                manifest = next;
                version += 1;
            }
        }
    }
    Ok(None)
}

/// The manifest of `version` under `naming`, `None` when there is none.
async fn probe(
    store: &DatasetStore,
    session: &DatasetSession,
    root: &Path,
    version: u64,
    naming: ManifestNaming,
    stats: &IoStats,
) -> Result<Option<Arc<Manifest>>> {
    let location = location(root, version, naming);
    // Boxed: an open holds several of these at once (small futures on the caller's stack).
    match futures::FutureExt::boxed(load_manifest(store, session, root, &location, stats)).await {
        Ok(m) => Ok(Some(m)),
        Err(Error::NotFound { .. }) => Ok(None),
        Err(e) => Err(e),
    }
}

/// The version the hint names; `None` when there is no hint or it is not one.
async fn read_hint(store: &DatasetStore, root: &Path, stats: &IoStats) -> Result<Option<u64>> {
    let path = join(root, &format!("{VERSIONS_DIR}/{VERSION_HINT_FILE}"));
    let whole = match store.fetcher.whole(&path, stats).await {
        Ok(w) => w,
        Err(Error::NotFound { .. }) => return Ok(None),
        Err(e) => return Err(e),
    };
    if whole.bytes.len() > MAX_HINT_BYTES {
        return Ok(None);
    }
    Ok(parse_version_hint(&whole.bytes))
}

fn location(root: &Path, version: u64, naming: ManifestNaming) -> ManifestLocation {
    ManifestLocation {
        path: join(
            root,
            &format!("{VERSIONS_DIR}/{}", naming.file_name(version)),
        ),
        version,
        naming,
        object: None,
        fresh: true,
    }
}
