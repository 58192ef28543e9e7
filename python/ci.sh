#!/usr/bin/env bash
# Build the Python package in dev mode into a venv and run its tests (called by .ci/run after
# `cargo test`, which built the s3_rig example the S3 tests start).
#
#   python/ci.sh            venv: $LAKESEEK_PY_VENV (default ${TMPDIR:-/tmp}/lakeseek-py-ci)
#   python/ci.sh wheel [OUT_DIR]   instead: build the distributable wheel (build_wheel.sh)
set -euo pipefail
if [ "${1:-}" = wheel ]; then
    shift
    exec "$(dirname "$0")/build_wheel.sh" "$@"
fi
cd "$(dirname "$0")"
venv="${LAKESEEK_PY_VENV:-${TMPDIR:-/tmp}/lakeseek-py-ci}"
started=$SECONDS
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/pip" install -q --disable-pip-version-check -r requirements-test.txt
# maturin develop: the dev profile, into the venv named by VIRTUAL_ENV.
VIRTUAL_ENV="$venv" PATH="$venv/bin:$PATH" maturin develop --quiet
"$venv/bin/python" -m pytest -q -p no:cacheprovider tests
echo "python: built and tested in $((SECONDS - started)) s"
