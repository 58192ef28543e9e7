"""The examples that run on the repository's fixtures run, and print what the fixtures'
recorded answers say."""

import subprocess
import sys
from pathlib import Path

from conftest import FIXTURES, load_json

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def test_the_vectors_text_blobs_example_runs(tmp_path):
    done = subprocess.run([sys.executable, str(EXAMPLES / "vectors_text_blobs.py")],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    blobs = load_json(FIXTURES / "blobs" / "answers.json")["datasets"]["v22"]["rows"]
    blob = next(r["blob"] for r in blobs if r["address"] == 6)
    # The digest of the whole blob read after seeks, as pylance recorded it.
    assert lines[4].startswith(f"{blob['size']} ") and lines[4].endswith(blob["sha256"][:16])
    assert lines[3] == "None"
    assert "'_score'" in lines[2] and "'_distance'" in lines[0]
    assert lines[5].startswith("True [{'_rowaddr': 25769803783, 'id': 46, 'k': 5, '_rowid': 46}")
