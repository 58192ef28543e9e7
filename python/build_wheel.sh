#!/usr/bin/env bash
# Build the distributable wheel of the Python package in one command, and print its size.
#
#   python/build_wheel.sh [OUT_DIR]     (or `python/ci.sh wheel [OUT_DIR]`)
#
# OUT_DIR defaults to target/wheels at the repository root. The wheel is built with the
# `wheel` cargo profile (pyproject.toml `[tool.maturin] profile`, the same build as
# `pip install ./python`; workspace Cargo.toml says what it is and why), tagged abi3 (one wheel
# for every CPython >= 3.9) and manylinux: `--compatibility pypi` makes maturin audit the
# library's glibc symbol versions, tag the lowest manylinux_2_x the wheel satisfies and fail
# rather than produce a plain `linux_*` wheel PyPI would refuse. The tag follows the glibc the
# build machine links against (Debian 12 / glibc 2.36 gives manylinux_2_34: the pthread
# symbols moved into libc in 2.34); for an older tag build inside a manylinux container
# (e.g. quay.io/pypa/manylinux_2_28_x86_64), or set COMPATIBILITY=manylinux_2_28 to make
# maturin check that tag and fail if the library needs newer symbols.
#
# Environment: MATURIN (a maturin binary; default: `maturin` on PATH, else a venv
# $LAKESEEK_WHEEL_VENV, default ${TMPDIR:-/tmp}/lakeseek-wheel-build, with the maturin pinned
# in requirements-test.txt), COMPATIBILITY (default `pypi`), CARGO_TARGET_DIR (cargo's).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(dirname "$here")"
out="$(mkdir -p "${1:-$repo/target/wheels}" && cd "${1:-$repo/target/wheels}" && pwd)"
started=$SECONDS

maturin="${MATURIN:-}"
if [ -z "$maturin" ]; then
    if command -v maturin >/dev/null; then
        maturin=maturin
    else
        venv="${LAKESEEK_WHEEL_VENV:-${TMPDIR:-/tmp}/lakeseek-wheel-build}"
        [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
        "$venv/bin/pip" install -q --disable-pip-version-check \
            "$(grep -E '^maturin==' "$here/requirements-test.txt")"
        maturin="$venv/bin/maturin"
    fi
fi

# Only this build's wheel in the listing below: remove an older wheel of the same name.
rm -f "$out"/lakeseek-*.whl
cd "$here"
"$maturin" build --profile wheel --compatibility "${COMPATIBILITY:-pypi}" --out "$out"

for whl in "$out"/lakeseek-*.whl; do
    wheel_bytes=$(stat -c %s "$whl")
    installed_bytes=$(python3 -c 'import sys, zipfile
print(sum(i.file_size for i in zipfile.ZipFile(sys.argv[1]).infolist()))' "$whl")
    awk -v w="$wheel_bytes" -v i="$installed_bytes" -v f="$(basename "$whl")" 'BEGIN {
        printf "wheel: %s\n  %.1f MB (%d bytes); unpacked (installed): %.1f MB (%d bytes)\n",
            f, w / 1e6, w, i / 1e6, i }'
done
echo "wheel built in $((SECONDS - started)) s"
