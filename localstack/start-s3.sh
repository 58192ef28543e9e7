#!/usr/bin/env bash
# Start an S3-compatible server on 127.0.0.1:$S3_PORT (default 4566, LocalStack's port).
# Installs it on first use, waits until it answers (bounded), creates $S3_BUCKETS,
# and prints ONLY the server PID on stdout (messages go to stderr). Stop: stop.sh s3
#
#   S3_BACKEND  moto (default: pip 'moto[server]', Python 3.11 is fine)
#               s3s-fs (Rust, cargo install ~2.5 min once; checks SigV4, stores plain files).
#                 Caveat: s3s-fs 0.14.1 answers a suffix range longer than the object
#                 (bytes=-N, N > size) with 500; real S3 returns the whole object. Tail reads
#                 with a size hint larger than a small file fail against it. (The in-process
#                 test server in tests/suite/common fixes this; the binary does not.)
#               localstack (localstack-core host mode; needs python3.13+, ~500 MB venv)
#   S3_PORT     default 4566        S3_BUCKETS  default "test-bucket" (space separated)
#   EMU_HOME    install/data/pid/log dir, default localstack/.state (gitignored)
# Credentials: any key works for moto/localstack; s3s-fs is started with test/test.
set -euo pipefail
BACKEND=${S3_BACKEND:-moto}
PORT=${S3_PORT:-4566}
BUCKETS=${S3_BUCKETS:-test-bucket}
HERE=$(cd "$(dirname "$0")" && pwd)
H=${EMU_HOME:-$HERE/.state}
LOG=$H/logs/s3-$BACKEND.log
mkdir -p "$H/logs"
say() { echo "start-s3: $*" >&2; }

if curl -s -o /dev/null --max-time 2 "http://127.0.0.1:$PORT/"; then
  say "something already listens on 127.0.0.1:$PORT"; exit 1
fi

case $BACKEND in
moto)
  [ -x "$H/venv-moto/bin/moto_server" ] || EMU_HOME=$H "$HERE/install.sh" moto
  nohup "$H/venv-moto/bin/moto_server" -H 127.0.0.1 -p "$PORT" >"$LOG" 2>&1 </dev/null &
  ;;
s3s-fs)
  [ -x "$H/bin/s3s-fs" ] || EMU_HOME=$H "$HERE/install.sh" s3s-fs
  mkdir -p "$H/s3s-data"
  nohup "$H/bin/s3s-fs" --host 127.0.0.1 --port "$PORT" --access-key test --secret-key test \
    "$H/s3s-data" >"$LOG" 2>&1 </dev/null &
  ;;
localstack)
  PY=
  for c in ${LOCALSTACK_PYTHON:-} python3.13 python3.14 "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.1[3-9]*/bin/python3; do
    if "$c" -c 'import sys; assert sys.version_info >= (3, 13)' 2>/dev/null; then PY=$c; break; fi
  done
  [ -n "$PY" ] || { say "localstack 2026.x needs python3.13+ (set LOCALSTACK_PYTHON)"; exit 1; }
  if [ ! -x "$H/venv-localstack/bin/python" ]; then
    say "installing localstack-core[runtime] with $PY into $H/venv-localstack"
    "$PY" -m venv "$H/venv-localstack"
    # pins: cbor2 6 dropped cbor2._decoder; pyOpenSSL >= 24.3 dropped X509.add_extensions
    "$H/venv-localstack/bin/pip" install -q 'localstack-core[runtime]==2026.3.0' 'cbor2<6' \
      'pyopenssl==24.2.1' 'cryptography==43.0.3' service-identity >&2
  fi
  mkdir -p "$H/localstack-fs"
  # GATEWAY_SERVER=hypercorn: the default twisted server ignores the host and binds 0.0.0.0
  SERVICES=s3 GATEWAY_LISTEN=127.0.0.1:$PORT GATEWAY_SERVER=hypercorn FILESYSTEM_ROOT=$H/localstack-fs DNS_ADDRESS=0 \
    DISABLE_EVENTS=1 SKIP_SSL_CERT_DOWNLOAD=1 \
    nohup "$H/venv-localstack/bin/python" -m localstack.runtime.main >"$LOG" 2>&1 </dev/null &
  ;;
*) say "unknown S3_BACKEND=$BACKEND"; exit 1 ;;
esac
PID=$!
echo "$PID" >"$H/s3.pid"

code=000
for _ in $(seq 1 300); do            # at most ~30 s (localstack needs ~2-4 s, moto ~1 s)
  if ! kill -0 "$PID" 2>/dev/null; then say "server exited; tail of $LOG:"; tail -20 "$LOG" >&2; exit 1; fi
  code=$(curl -s -o /dev/null --max-time 1 -w '%{http_code}' "http://127.0.0.1:$PORT/" || true)
  [ "$code" != 000 ] && break
  sleep 0.1
done
if [ "$code" = 000 ]; then say "no answer on port $PORT after 30 s"; kill "$PID"; exit 1; fi

# CreateBucket with a SigV4-signed request (curl >= 7.75); 200 new, 409 already there.
for b in $BUCKETS; do
  c=$(curl -s -o /dev/null --max-time 10 -w '%{http_code}' -X PUT \
        --aws-sigv4 "aws:amz:us-east-1:s3" --user test:test \
        -H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' "http://127.0.0.1:$PORT/$b")
  case $c in 200|409) ;; *) say "CreateBucket $b -> HTTP $c"; kill "$PID"; exit 1 ;; esac
done
say "$BACKEND ready on http://127.0.0.1:$PORT (buckets: $BUCKETS, log: $LOG)"
echo "$PID"
