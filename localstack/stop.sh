#!/usr/bin/env bash
# Stop a server started by start-s3.sh / start-gcs.sh, by the PID they recorded (or a PID given).
#   stop.sh s3 | stop.sh gcs | stop.sh PID
# Sends TERM, waits up to 10 s (LocalStack takes ~5 s), then KILL. Never matches by name.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
H=${EMU_HOME:-$HERE/.state}
case ${1:-} in
  s3|gcs) PIDFILE=$H/$1.pid; PID=$(cat "$PIDFILE" 2>/dev/null || true) ;;
  ''|*[!0-9]*) echo "usage: stop.sh s3|gcs|PID" >&2; exit 2 ;;
  *) PIDFILE=; PID=$1 ;;
esac
[ -n "$PID" ] || { echo "stop.sh: no pid recorded in $PIDFILE" >&2; exit 0; }
if kill -0 "$PID" 2>/dev/null; then
  kill "$PID"
  for _ in $(seq 1 100); do kill -0 "$PID" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$PID" 2>/dev/null; then echo "stop.sh: $PID ignored TERM, sending KILL" >&2; kill -9 "$PID"; fi
fi
[ -n "$PIDFILE" ] && rm -f "$PIDFILE"
echo "stop.sh: $PID stopped" >&2
