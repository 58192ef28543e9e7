#!/usr/bin/env bash
# The benchmark S3 server (benches/rig/README.md): build, start, reshape, stop.
#
#   benches/rig/rig.sh build
#   benches/rig/rig.sh start [DELAY_MS [BW_MBPS [fixed|lognormal [P99_MS]]]]   (20 80 fixed 100)
#       (RIG_CAPACITY=N RIG_LIST_UNITS=W RIG_LIST_MS=T: serve N request units at a time, a LIST
#        taking W of them for T ms more than its own service time)
#   benches/rig/rig.sh config DELAY_MS BW_MBPS [fixed|lognormal [P99_MS]]
#   benches/rig/rig.sh stats | reset | status | stop
#
# Environment: RIG_PORT (4582), RIG_HOME (${XDG_CACHE_HOME:-$HOME/.cache}/lakeseek-rig: the
# server's root, its pid file and log), ANCHORS_TMP (/work/anchors: datasets made by
# ../shared/peer-bench/gen_data.py --no-upload, loaded from $ANCHORS_TMP/data/*.lance),
# RIG_DATASETS (take_1000000_v2.2 btree_1000000), RIG_PROFILE (release), RIG_BIN (the server
# binary: $CARGO_TARGET_DIR or target/, then $RIG_PROFILE/examples/s3_rig).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
PORT="${RIG_PORT:-4582}"
HOME_DIR="${RIG_HOME:-${XDG_CACHE_HOME:-$HOME/.cache}/lakeseek-rig}"
ANCHORS="${ANCHORS_TMP:-/work/anchors}"
DATASETS="${RIG_DATASETS:-take_1000000_v2.2 btree_1000000}"
PROFILE="${RIG_PROFILE:-release}"
BIN="${RIG_BIN:-${CARGO_TARGET_DIR:-$REPO/target}/$PROFILE/examples/s3_rig}"
PIDFILE="$HOME_DIR/s3_rig.pid"
URL="http://127.0.0.1:$PORT"

running() {
    [ -f "$PIDFILE" ] || return 1
    local pid; pid="$(cat "$PIDFILE")"
    # Only our own server: the pid must still run the s3_rig binary.
    [ -n "$pid" ] && [ -r "/proc/$pid/cmdline" ] && tr '\0' ' ' < "/proc/$pid/cmdline" | grep -q s3_rig
}

control() { curl -sf "$URL/__proxy__/$1"; echo; }

case "${1:-}" in
build)
    flag=(); [ "$PROFILE" = release ] && flag=(--release)
    (cd "$REPO" && cargo build "${flag[@]}" --example s3_rig)
    ;;
start)
    if running; then echo "already running (pid $(cat "$PIDFILE"))"; exit 0; fi
    [ -x "$BIN" ] || { echo "no $BIN: run '$0 build' first" >&2; exit 1; }
    mkdir -p "$HOME_DIR/root"
    loads=()
    for d in $DATASETS; do
        [ -d "$ANCHORS/data/$d.lance" ] && loads+=(--load "$d.lance=$ANCHORS/data/$d.lance")
    done
    nohup "$BIN" --root "$HOME_DIR/root" --listen "127.0.0.1:$PORT" \
        --delay-ms "${2:-20}" --bw-mbps "${3:-80}" --dist "${4:-fixed}" --p99-ms "${5:-100}" \
        --capacity "${RIG_CAPACITY:-0}" --list-units "${RIG_LIST_UNITS:-1}" \
        --list-ms "${RIG_LIST_MS:-0}" "${loads[@]}" > "$HOME_DIR/s3_rig.log" 2>&1 &
    echo $! > "$PIDFILE"
    for _ in $(seq 1 300); do
        grep -q "ready on" "$HOME_DIR/s3_rig.log" 2>/dev/null && break
        running || { cat "$HOME_DIR/s3_rig.log" >&2; exit 1; }
        sleep 0.2
    done
    cat "$HOME_DIR/s3_rig.log"
    ;;
config)
    control "config?delay_ms=${2:?delay}&bw_mbps=${3:?bw}&dist=${4:-fixed}&p99_ms=${5:-100}"
    ;;
stats) control "stats?log=0" ;;
reset) control reset ;;
status)
    if running; then echo "running (pid $(cat "$PIDFILE")) on $URL"; control "stats?log=0"
    else echo "not running"; fi
    ;;
stop)
    if running; then
        pid="$(cat "$PIDFILE")"; kill "$pid"
        for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        echo "stopped $pid"
    else echo "not running"; fi
    rm -f "$PIDFILE"
    ;;
*)
    sed -n '2,14p' "$0"; exit 2 ;;
esac
