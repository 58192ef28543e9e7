"""Shared helpers: fixture paths, pylance's answers, Arrow comparison, and an S3 server
(the repository's s3s-based benchmark server, `benches/rig/s3_rig.rs`) started and stopped
by the tests themselves."""

import json
import math
import os
import socket
import struct
import subprocess
import tempfile
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.ipc
import pytest

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures"
DATASETS = FIXTURES / "datasets"


def load_json(path):
    with open(path) as f:
        return json.load(f)


def from_deltas(deltas):
    """Row addresses from the answers' `addr_deltas` (a running sum)."""
    out, acc = [], 0
    for d in deltas:
        acc += d
        out.append(acc)
    return out


def read_ipc(path):
    """Every record batch of an Arrow IPC file (pylance's answers)."""
    with pa.ipc.open_file(str(path)) as reader:
        return [reader.get_batch(i) for i in range(reader.num_record_batches)]


def _normalized(value):
    """A value comparable by bits: floats by their IEEE pattern (NaN, -0.0), recursively."""
    if isinstance(value, float):
        return ("float", struct.pack("<d", value)) if math.isnan(value) else ("float", value, math.copysign(1, value))
    if isinstance(value, list):
        return [_normalized(v) for v in value]
    if isinstance(value, tuple):
        return tuple(_normalized(v) for v in value)
    if isinstance(value, dict):
        return {k: _normalized(v) for k, v in value.items()}
    return value


def assert_same_column(ours, theirs, what):
    """Same Arrow type and the same values (null slots ignored, floats by bits)."""
    if isinstance(ours, pa.ChunkedArray):
        ours = ours.combine_chunks()
    if isinstance(theirs, pa.ChunkedArray):
        theirs = theirs.combine_chunks()
    assert ours.type == theirs.type, f"{what}: type {ours.type} != {theirs.type}"
    assert len(ours) == len(theirs), f"{what}: {len(ours)} rows != {len(theirs)}"
    if ours.equals(theirs):
        return
    a, b = _normalized(ours.to_pylist()), _normalized(theirs.to_pylist())
    assert a == b, f"{what}: values differ"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _s3_rig_binary():
    """The s3_rig example binary: `LAKESEEK_S3_RIG`, else under the cargo target dir (built
    by `cargo test`, which builds the examples), else built now."""
    if os.environ.get("LAKESEEK_S3_RIG"):
        return Path(os.environ["LAKESEEK_S3_RIG"])
    target = Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target"))
    for profile in ("debug", "release"):
        candidate = target / profile / "examples" / "s3_rig"
        if candidate.exists():
            return candidate
    subprocess.run(["cargo", "build", "--example", "s3_rig"], cwd=REPO, check=True)
    return target / "debug" / "examples" / "s3_rig"


class S3Server:
    """A running s3_rig: endpoint, bucket and the storage options that reach it."""

    def __init__(self, process, port, bucket, log):
        self.process, self.port, self.bucket, self.log = process, port, bucket, log
        self.endpoint = f"http://127.0.0.1:{port}"

    def url(self, name):
        return f"s3://{self.bucket}/{name}"

    @property
    def storage_options(self):
        return {
            "aws_endpoint": self.endpoint,
            "aws_access_key_id": "dummy",
            "aws_secret_access_key": "dummy",
            "aws_region": "us-east-1",
            "allow_http": True,
        }


S3_LOADS = {
    "bitmap_del.lance": DATASETS / "bitmap_del.lance",
    "take_v2_3_sparse.lance": DATASETS / "take" / "v2_3_sparse.lance",
    "ecp_l2_l2_f32": FIXTURES / "ecp" / "l2_l2_f32",
    "nested_v2_3_sparse": FIXTURES / "files" / "nested" / "v2_3_sparse",
    "ivf_pq_l2": FIXTURES / "vector" / "datasets" / "ivf_pq_l2",
    "fts_default": FIXTURES / "fts" / "datasets" / "default",
    "blobs_v22": FIXTURES / "blobs" / "v22",
    "srid.lance": FIXTURES / "rowids" / "srid.lance",
}


@pytest.fixture(scope="session")
def s3_server():
    """The repository's S3 server on a free loopback port, no added latency, loaded with a
    few fixtures; stopped (by its own pid) when the session ends."""
    binary = _s3_rig_binary()
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="lakeseek-s3-") as root:
        log_path = Path(root) / "s3_rig.log"
        args = [str(binary), "--root", str(Path(root) / "data"), "--listen", f"127.0.0.1:{port}",
                "--bucket", "pytest", "--delay-ms", "0", "--bw-mbps", "100000"]
        for name, local in S3_LOADS.items():
            args += ["--load", f"{name}={local}"]
        with open(log_path, "w") as log:
            process = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + 120
            while "ready on" not in log_path.read_text():
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"s3_rig did not start:\n{log_path.read_text()}")
                time.sleep(0.1)
            yield S3Server(process, port, "pytest", log_path)
        finally:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
