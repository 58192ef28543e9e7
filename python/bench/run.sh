#!/usr/bin/env bash
# The Python benchmarks (python/README.md, "Benchmarks") in one command, from a checkout:
#
#   python/bench/run.sh [OUT.json]
#
# 1. a pylance 14.0.2 venv ($PYLANCE_PYTHON, made if missing) writes the dataset
#    $BENCH_DATA/handler_1000000.lance if it is missing (gen_bench_dataset.py);
# 2. builds the S3 rig (`cargo build --release --example s3_rig`);
# 3. `pip install ./python` into a fresh venv $LAKESEEK_VENV (the documented install: the
#    `wheel` profile) — the venv holds the package and nothing else; with WHEEL=path.whl it
#    installs that wheel instead (e.g. one `maturin build` made);
# 4. bench_python.py: sizes, import, cold serverless handler and warm take/lookup on the rig
#    ($RIG_PORT, $RIG_HOME), each timed section under `flock /tmp/rig-bench.lock`.
#
# Environment (defaults): PYLANCE_PYTHON (/work/venvs/pylance-14.0.2/bin/python),
# BENCH_DATA (/work/bench-data), LAKESEEK_VENV (/work/venvs/lakeseek-wheel),
# CARGO_TARGET_DIR (target), RIG_PORT (4583), RIG_HOME (a temporary directory), RUNS (20),
# WHEEL (none: build from ./python).
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$REPO"
PYLANCE_PYTHON="${PYLANCE_PYTHON:-/work/venvs/pylance-14.0.2/bin/python}"
BENCH_DATA="${BENCH_DATA:-/work/bench-data}"
LAKESEEK_VENV="${LAKESEEK_VENV:-/work/venvs/lakeseek-wheel}"
TARGET="${CARGO_TARGET_DIR:-$REPO/target}"
export RIG_PORT="${RIG_PORT:-4583}"
out="${1:-python-bench.json}"

if [ ! -x "$PYLANCE_PYTHON" ]; then
    venv="$(dirname "$(dirname "$PYLANCE_PYTHON")")"
    python3 -m venv "$venv" && "$venv/bin/pip" install -q pylance==14.0.2
fi
[ -d "$BENCH_DATA/handler_1000000.lance" ] ||
    "$PYLANCE_PYTHON" python/bench/gen_bench_dataset.py "$BENCH_DATA"
cargo build --release --example s3_rig
python3 -m venv --clear "$LAKESEEK_VENV"
"$LAKESEEK_VENV/bin/pip" install -q --disable-pip-version-check "${WHEEL:-./python}"
"$PYLANCE_PYTHON" python/bench/bench_python.py \
    --lakeseek-python "$LAKESEEK_VENV/bin/python" --pylance-python "$PYLANCE_PYTHON" \
    --rig "$TARGET/release/examples/s3_rig" --data "$BENCH_DATA/handler_1000000.lance" \
    --runs "${RUNS:-20}" --out "$out"
