//! Lance datasets: find a version's manifest, decode it (schema, fragments, data files,
//! deletion files, index segments) and load deletion vectors.
//!
//! Request cost of [`DatasetVersion::open`]:
//! * latest version of a dataset with a version hint (`latest` module): the hint, then the
//!   manifest it names and a probe of the next one together (a 64 KiB suffix read brings the
//!   whole manifest and its index section) = 3 GETs, 2 round trips, no LIST; a warm open
//!   of an unchanged dataset is 1 round trip (hint + probe). pylance 14.0.2 spends 1 LIST +
//!   1 GET on S3 (it neither writes nor reads the hint there).
//! * latest version without a (usable) hint, V2 manifest names, on S3/GCS/Azure: + 1 LIST
//!   (first page only) + 1 GET.
//! * latest version without a hint, V1 names or on a store that does not list in order
//!   (local disk): + every LIST page + 1 GET.
//! * pinned version (`version = Some(n)`): 1 GET (a second one only when the dataset uses
//!   V1 names); lance spends HEAD + GET.
//! * a manifest larger than 64 KiB, or whose index section lies outside the tail: +1 GET.
//! * manifests of the earliest releases (no fragment row counts, no index details): one
//!   more concurrent wave reading the data file metadata / index directories they lack
//!   (cached with the manifest, and the file metadata with the file caches).
//!
//! Decoded manifests and deletion vectors are cached in a [`DatasetSession`]; manifest
//! and deletion file names are write-once in lance, so their paths (plus the size/etag the
//! listing reports, when there was a listing) identify their content.

pub(crate) mod blobs;
pub(crate) mod commit;
pub(crate) mod deletion;
mod files;
pub(crate) use files::IndexFileReads;
mod index_details;
mod latest;
pub(crate) mod manifest;
pub(crate) mod paths;
pub(crate) mod rows;
pub(crate) mod schema;
pub(crate) mod take;
pub(crate) mod take_row_ids;
pub(crate) mod versions;

use std::collections::HashMap;
use std::sync::Arc;

use futures::future::try_join_all;
use object_store::path::Path;

use crate::error::{Error, Result};
use crate::io::budget::{CacheBudget, CacheRegistry, CacheShare};
use crate::io::cache::{CacheKey, SizedCache};
use crate::io::cache_extensions::CacheExtensions;
use crate::io::disk::DiskCache;
use crate::io::fetch::DiskTier;
use crate::io::list::{ListControl, ObjectLister, ObjectStoreLister};
use crate::io::{
    open_url, FetchOptions, IoStats, ObjectVersion, OpenedUrl, RangeFetcher, RangeSource,
};
use crate::lance::reader::ReaderCaches;

pub(crate) use deletion::DeletionVector;
#[cfg_attr(not(test), allow(unused_imports))] // used by the tests
pub(crate) use manifest::{DataFile, DeletionKind, Fragment, IndexSegment, Manifest};
pub(crate) use schema::{Schema, SchemaField};
pub(crate) use versions::ManifestNaming;

use manifest::{decode_manifest_file, KnownBytes, ManifestStep, MANIFEST_TAIL_BYTES};
use versions::{LatestManifestChooser, VERSIONS_DIR};

/// Requests of one wave a dataset keeps in flight: as many as the per-store admission
/// bound ([`crate::DEFAULT_MAX_REQUESTS`]), which caps what every query of a session sends
/// together and shares it fairly. At 64 a 100-row take of a 2.0 or legacy file (about one
/// GET per row) took two round trips per wave.
pub(crate) const DATASET_FETCH_CONCURRENCY: usize = 256;

/// Default of [`DatasetSession::eager_deletion_files`].
pub(crate) const DEFAULT_EAGER_DELETION_FILES: usize = 64;

/// Default capacity of a [`DatasetSession`]'s caches.
pub(crate) const DEFAULT_SESSION_CACHE_BYTES: u64 = 256 << 20;

/// Caches shared by the datasets opened with one session: decoded manifests, deletion
/// vectors, Lance file metadata and page init data; the index layer keeps its caches (page
/// lookups, decoded index pages) in [`DatasetSession::extensions`].
#[derive(Debug, Clone)]
pub(crate) struct DatasetSession {
    manifests: SizedCache<(), Manifest>,
    deletions: SizedCache<(), DeletionVector>,
    /// File metadata and page-init caches of the file reader.
    pub reader_caches: Arc<ReaderCaches>,
    /// Caches of higher layers (index lookups and pages), created on first use.
    pub extensions: CacheExtensions,
    /// The one table sizing every cache of the session (those of higher layers too) and the
    /// registry weighing them.
    pub caches: CacheRegistry,
    /// Budget of the decoded index page cache; `None` caches no pages (test sessions only).
    pub index_page_cache_bytes: Option<u64>,
    /// Queries read every deletion file in the same wave as the index pages when the
    /// version has at most this many; beyond it only those of fragments with results,
    /// after the pages (one more round trip instead of a request per fragment).
    pub eager_deletion_files: usize,
    /// Byte ranges of immutable objects on local disk, shared across processes (off unless
    /// asked for).
    pub disk: Option<DiskCache>,
}

impl DatasetSession {
    /// A session whose caches hold about `capacity_bytes` each and that caches no index
    /// pages (tests compare against it; every session the library and CLI create is
    /// budgeted, [`DatasetSession::with_budget`]).
    #[cfg(test)]
    pub(crate) fn new(capacity_bytes: u64) -> Self {
        Self {
            manifests: SizedCache::new(capacity_bytes),
            deletions: SizedCache::new(capacity_bytes),
            reader_caches: Arc::new(ReaderCaches::new(capacity_bytes, capacity_bytes)),
            extensions: CacheExtensions::default(),
            caches: CacheRegistry::new(CacheBudget::Each(capacity_bytes)),
            index_page_cache_bytes: None,
            eager_deletion_files: DEFAULT_EAGER_DELETION_FILES,
            disk: None,
        }
    }

    /// Caches that together hold at most about `total_bytes`, each its share of it
    /// ([`CacheShare`]: the one table, which sizes the index and ecpfs caches too); index
    /// pages are cached.
    pub(crate) fn with_budget(total_bytes: u64) -> Self {
        let caches = CacheRegistry::new(CacheBudget::Shared(total_bytes));
        let reader_caches = ReaderCaches::new(
            caches.bytes(CacheShare::FileMetadata),
            caches.bytes(CacheShare::PageInits),
        );
        caches.register(CacheShare::FileMetadata, &reader_caches.file_metadata);
        caches.register(CacheShare::PageInits, &reader_caches.page_init);
        Self {
            manifests: caches.cache(CacheShare::Manifests),
            deletions: caches.cache(CacheShare::Deletions),
            reader_caches: Arc::new(reader_caches),
            extensions: CacheExtensions::default(),
            index_page_cache_bytes: Some(caches.bytes(CacheShare::BTreePages)),
            caches,
            eager_deletion_files: DEFAULT_EAGER_DELETION_FILES,
            disk: None,
        }
    }

    /// Readers of this session read every page buffer from the store, also those inside a
    /// file's suffix read ([`ReaderCaches::without_data_tails`]).
    #[cfg(test)]
    pub(crate) fn without_data_tails(mut self) -> Self {
        let caches = ReaderCaches::clone(&self.reader_caches).without_data_tails();
        self.reader_caches = Arc::new(caches);
        self
    }

    /// Read immutable objects through the disk tier `disk` too.
    pub(crate) fn with_disk(mut self, disk: Option<DiskCache>) -> Self {
        self.disk = disk;
        self
    }

    /// Set [`DatasetSession::eager_deletion_files`].
    #[cfg(test)]
    pub(crate) fn with_eager_deletion_files(mut self, max_files: usize) -> Self {
        self.eager_deletion_files = max_files;
        self
    }

    /// Also cache decoded index pages, up to about `capacity_bytes` (warm lookups of keys
    /// on cached pages then need no request at all).
    #[cfg(test)]
    pub(crate) fn with_page_cache(mut self, capacity_bytes: u64) -> Self {
        self.index_page_cache_bytes = Some(capacity_bytes);
        self
    }
}

impl Default for DatasetSession {
    /// [`DatasetSession::with_budget`] of the default budget: index pages, page inits and
    /// structural plans are cached, so a warm repeat of a lookup needs no request.
    fn default() -> Self {
        Self::with_budget(DEFAULT_SESSION_CACHE_BYTES)
    }
}

/// The I/O handles a dataset reads through.
#[derive(Debug, Clone)]
pub(crate) struct DatasetStore {
    /// Ranged reads.
    #[allow(dead_code)] // kept for debugging output (Debug) and future callers
    pub source: Arc<dyn RangeSource>,
    /// Listing (only used to find the latest version).
    pub lister: Arc<dyn ObjectLister>,
    /// Coalescing, concurrent fetcher over `source`.
    pub fetcher: RangeFetcher,
}

impl DatasetStore {
    /// Handles over `source` and `lister`; up to [`DATASET_FETCH_CONCURRENCY`] requests of
    /// one wave in flight (an IN list touches two chunks per page, plus chunk metadata:
    /// with fewer slots one wave would take two round trips).
    pub(crate) fn new(source: Arc<dyn RangeSource>, lister: Arc<dyn ObjectLister>) -> Self {
        let options = FetchOptions {
            max_concurrency: DATASET_FETCH_CONCURRENCY,
            ..FetchOptions::default()
        };
        let fetcher = RangeFetcher::new(Arc::clone(&source), options);
        Self {
            source,
            lister,
            fetcher,
        }
    }
}

/// Where a version's manifest lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ManifestLocation {
    /// Full object path.
    pub path: Path,
    /// Dataset version.
    pub version: u64,
    /// Naming scheme of the file.
    pub naming: ManifestNaming,
    /// Size/etag when a listing reported them.
    pub object: Option<ObjectVersion>,
    /// Read its bytes from the store, never from the disk tier (written there still): the
    /// version hint named it, and a dataset deleted and recreated at the same path reuses
    /// version names, so only a listing's size/etag or a pinned version trust the disk.
    pub fresh: bool,
}

/// One version of an opened dataset.
#[derive(Debug, Clone)]
pub(crate) struct DatasetVersion {
    root: Path,
    store: DatasetStore,
    session: Arc<DatasetSession>,
    manifest: Arc<Manifest>,
    #[cfg_attr(not(test), allow(dead_code))] // read by the tests
    location: ManifestLocation,
}

impl DatasetVersion {
    /// Open the dataset at `url` (`s3://bucket/t.lance`, `gs://...`, a local path, ...)
    /// with `key=value` storage options; `version` pins a version, `None` opens the latest.
    #[cfg_attr(not(test), allow(dead_code))] // the tests'; the API opens through `api`
    pub(crate) async fn open_url(
        url: &str,
        storage_options: &[(String, String)],
        version: Option<u64>,
        session: Arc<DatasetSession>,
        stats: &IoStats,
    ) -> Result<Self> {
        let opened = open_url(url, storage_options)?;
        Self::open_opened(&opened, version, session, stats).await
    }

    /// Open the dataset at an already opened URL (store handle + root path).
    pub(crate) async fn open_opened(
        opened: &OpenedUrl,
        version: Option<u64>,
        session: Arc<DatasetSession>,
        stats: &IoStats,
    ) -> Result<Self> {
        let admission = crate::io::admission::registry_of(&session.extensions).for_opened(opened);
        let lister: Arc<dyn ObjectLister> = Arc::new(
            ObjectStoreLister::for_scheme(Arc::clone(&opened.read_store), &opened.scheme)
                .with_admission(Some(Arc::clone(&admission)))
                .with_retry_policy(opened.source.retry_policy()),
        );
        let mut store = DatasetStore::new(Arc::clone(&opened.source), lister);
        store.fetcher = store.fetcher.with_admission(Some(admission));
        if let (Some(cache), Some(identity)) = (&session.disk, &opened.store_identity) {
            store.fetcher = store.fetcher.with_disk(Some(DiskTier {
                cache: cache.clone(),
                store: identity.clone(),
                immutable: paths::is_immutable_object,
            }));
        }
        Self::open(store, opened.path.clone(), version, session, stats).await
    }

    /// Open the dataset rooted at `root` in `store`.
    pub(crate) async fn open(
        store: DatasetStore,
        root: Path,
        version: Option<u64>,
        session: Arc<DatasetSession>,
        stats: &IoStats,
    ) -> Result<Self> {
        let (location, manifest) = match version {
            None => match futures::FutureExt::boxed(latest::latest_from_hint(
                &store, &session, &root, stats,
            ))
            .await?
            {
                Some(found) => found,
                None => {
                    let location = find_latest(&store, &root, stats).await?;
                    let manifest = load_manifest(&store, &session, &root, &location, stats).await?;
                    latest::remember_latest(&session, &root, &location);
                    (location, manifest)
                }
            },
            Some(v) => load_pinned(&store, &session, &root, v, stats).await?,
        };
        if manifest.version != location.version {
            return Err(Error::Corrupt {
                path: location.path.to_string(),
                range: None,
                what: format!(
                    "manifest says version {} but its name says {}",
                    manifest.version, location.version
                ),
                source: None,
            });
        }
        Ok(Self {
            root,
            store,
            session,
            manifest,
            location,
        })
    }

    /// The same version seen through only the fragments in `keep` (a view for engines
    /// that split a dataset by fragment: filters and takes on it touch only those).
    pub(crate) fn with_fragments(&self, keep: &roaring::RoaringBitmap) -> Self {
        let mut manifest = Manifest::clone(&self.manifest);
        manifest
            .fragments
            .retain(|f| u32::try_from(f.id).is_ok_and(|id| keep.contains(id)));
        Self {
            manifest: Arc::new(manifest),
            ..self.clone()
        }
    }

    /// The decoded manifest.
    pub(crate) fn manifest(&self) -> &Arc<Manifest> {
        &self.manifest
    }

    /// Dataset version.
    pub(crate) fn version(&self) -> u64 {
        self.manifest.version
    }

    /// Dataset root path inside the store.
    pub(crate) fn root(&self) -> &Path {
        &self.root
    }

    /// Where the manifest was read from.
    pub(crate) fn manifest_location(&self) -> &ManifestLocation {
        &self.location
    }

    /// I/O handles.
    pub(crate) fn store(&self) -> &DatasetStore {
        &self.store
    }

    /// The session (caches).
    pub(crate) fn session(&self) -> &Arc<DatasetSession> {
        &self.session
    }

    /// Path of a file relative to the dataset root.
    pub(crate) fn child(&self, relative: &str) -> Path {
        join(&self.root, relative)
    }

    /// Path of a data file.
    pub(crate) fn data_file_path(&self, file: &DataFile) -> Path {
        self.child(&format!("data/{}", file.path))
    }

    /// Path of file `name` of an index segment (`_indices/<uuid>/<name>`).
    pub(crate) fn index_file_path(&self, segment: &IndexSegment, name: &str) -> Result<Path> {
        if segment.base_id.is_some() {
            return Err(Error::unsupported(format!(
                "index {} ({}) lives under another base path",
                segment.name,
                segment.uuid_string()
            )));
        }
        paths::check_relative_path(&format!("file of index {:?}", segment.name), name)?;
        Ok(self.child(&format!("_indices/{}/{name}", segment.uuid_string())))
    }

    /// Deleted offsets of every listed fragment that has a deletion file, read in one wave
    /// (cached). Fragments without deletions are absent from the map.
    pub(crate) async fn deletion_vectors(
        &self,
        fragments: &[&Fragment],
        stats: &IoStats,
    ) -> Result<HashMap<u64, Arc<DeletionVector>>> {
        let loads = fragments
            .iter()
            .filter_map(|f| f.deletion.as_ref().map(|d| (f.id, d)))
            .map(|(id, d)| {
                let path = self.child(&d.relative_path(id));
                let key = CacheKey {
                    path: path.to_string(),
                    version: immutable_object(),
                    item: (),
                };
                let kind = d.kind;
                async move {
                    let v = self
                        .session
                        .deletions
                        .get_or_try_load(key, async {
                            let tail = self.store.fetcher.whole(&path, stats).await?;
                            deletion::decode_deletion_file(kind, &tail.bytes)
                                .map_err(|e| e.at(path.as_ref(), None))
                        })
                        .await?;
                    Ok::<_, Error>((id, v))
                }
            });
        // Issued together: one round trip however the answers interleave.
        let wave = stats.start_wave();
        let loaded = try_join_all(loads).await;
        drop(wave);
        Ok(loaded?.into_iter().collect())
    }
}

/// Cache version marker for objects whose names are never reused with other content.
fn immutable_object() -> ObjectVersion {
    ObjectVersion {
        size: 0,
        etag: None,
    }
}

fn join(root: &Path, relative: &str) -> Path {
    let mut p = root.clone();
    for part in relative.split('/').filter(|s| !s.is_empty()) {
        p = p.clone().join(part);
    }
    p
}

async fn find_latest(
    store: &DatasetStore,
    root: &Path,
    stats: &IoStats,
) -> Result<ManifestLocation> {
    let dir = join(root, VERSIONS_DIR);
    let ordered = store.lister.lexically_ordered();
    let mut chooser = LatestManifestChooser::new();
    store
        .lister
        .list(&dir, stats, &mut |o| {
            let name = o.path.filename().unwrap_or("").to_string();
            if chooser.offer(&name, o, ordered) {
                ListControl::Stop
            } else {
                ListControl::Continue
            }
        })
        .await?;
    let (version, naming, listed) = chooser.finish(dir.as_ref())?;
    Ok(ManifestLocation {
        path: listed.path,
        version,
        naming,
        object: Some(ObjectVersion {
            size: listed.size,
            etag: listed.etag,
        }),
        fresh: false,
    })
}

async fn load_pinned(
    store: &DatasetStore,
    session: &DatasetSession,
    root: &Path,
    version: u64,
    stats: &IoStats,
) -> Result<(ManifestLocation, Arc<Manifest>)> {
    let path_of = |naming: ManifestNaming| {
        join(
            root,
            &format!("{VERSIONS_DIR}/{}", naming.file_name(version)),
        )
    };
    // A disk tier that holds the V1-named manifest saves the V2 probe (a NotFound request).
    let mut order = [ManifestNaming::V2, ManifestNaming::V1];
    if store.fetcher.on_disk(&path_of(ManifestNaming::V1)).await
        && !store.fetcher.on_disk(&path_of(ManifestNaming::V2)).await
    {
        order.reverse();
    }
    let mut last_err = None;
    for naming in order {
        let location = ManifestLocation {
            path: path_of(naming),
            version,
            naming,
            object: None,
            fresh: false,
        };
        match load_manifest(store, session, root, &location, stats).await {
            Ok(m) => return Ok((location, m)),
            Err(Error::NotFound { .. }) => last_err = Some(location.path),
            Err(e) => return Err(e),
        }
    }
    Err(Error::NotFound {
        path: last_err.map(|p| p.to_string()).unwrap_or_default(),
        what: format!("version {version} of the dataset (no manifest under either naming scheme)"),
    })
}

async fn load_manifest(
    store: &DatasetStore,
    session: &DatasetSession,
    root: &Path,
    location: &ManifestLocation,
    stats: &IoStats,
) -> Result<Arc<Manifest>> {
    let key = CacheKey {
        path: location.path.to_string(),
        version: location.object.clone().unwrap_or_else(immutable_object),
        item: (),
    };
    let path = &location.path;
    session
        .manifests
        .get_or_try_load(key, async {
            let tail = if location.fresh {
                store
                    .fetcher
                    .tail_fresh(path, MANIFEST_TAIL_BYTES, stats)
                    .await?
            } else {
                let known = location.object.as_ref();
                store
                    .fetcher
                    .tail_of(path, MANIFEST_TAIL_BYTES, known, stats)
                    .await?
            };
            let mut known = KnownBytes::new(tail.version.size);
            known.add(tail.start(), tail.bytes.clone());
            // At most: rest of the manifest, then the index section.
            for _ in 0..3 {
                match decode_manifest_file(&known).map_err(|e| e.at(path.as_ref(), None))? {
                    ManifestStep::Done(mut m) => {
                        // Old releases wrote indices without details: infer their kinds
                        // once, with the manifest (cached together).
                        index_details::infer_missing_details(&mut m, store, root, stats).await?;
                        // The earliest releases recorded no fragment row counts.
                        rows::fill_missing_physical_rows(&mut m, store, session, root, stats)
                            .await?;
                        return Ok(*m);
                    }
                    ManifestStep::NeedRange(range) => {
                        let req = crate::io::ReadRequest {
                            path: path.clone(),
                            range: range.clone(),
                            object_size: Some(known.size()),
                        };
                        let mut got = store.fetcher.fetch(&[req], stats).await?;
                        known.add(range.start, got.pop().unwrap_or_default());
                    }
                }
            }
            Err(Error::Corrupt {
                path: path.to_string(),
                range: None,
                what: "manifest framing loops".into(),
                source: None,
            })
        })
        .await
}
