#!/usr/bin/env bash
# The same fio job against `nbdkit memory` (the reference NBD server, RAM
# behind it) and against `ftlab serve` in simulated-time mode (an FTL over the
# simulated flash, with real bytes): prints each one's IOPS and their ratio.
#
# Usage: bash experiments/nbd/compare-nbdkit.sh [FTL] [RW] [IODEPTH]
#   FTL      ftlab's FTL (default pagemap, the plain page-mapped FTL)
#   RW       fio's rw (default randwrite)
#   IODEPTH  fio's iodepth (default 16)
# FTLAB is the binary (default: target/release/ftlab, built first);
# BLOCKS the device's blocks per plane (small-slc, default 256: 230 MB; its size is nbdkit's too);
# IO_MB the bytes fio moves per run (default 512); RUNS repeats (default 3, best kept).
set -euo pipefail
cd "$(dirname "$0")/../.."

ftl="${1:-pagemap}"
rw="${2:-randwrite}"
depth="${3:-16}"
io_mb="${IO_MB:-512}"
runs="${RUNS:-3}"
blocks="${BLOCKS:-256}"
for tool in fio nbdkit python3; do
  command -v "$tool" >/dev/null || { echo "error: $tool is not installed (apt-get install fio nbdkit python3)" >&2; exit 1; }
done
if [ -z "${FTLAB:-}" ]; then
  cargo build -q --release -p ftlab-cli
  FTLAB=target/release/ftlab
fi

work="$(mktemp -d)"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

wait_socket() {
  for _ in $(seq 100); do [ -S "$1" ] && return 0; sleep 0.1; done
  echo "error: no server on $1" >&2; exit 1
}

# iops SOCKET: the IOPS (reads and writes together) of one fio run.
iops() {
  fio --name=cmp --ioengine=nbd --uri="nbd+unix:///?socket=$1" --rw="$rw" --bs=4k \
    --iodepth="$depth" --io_size="${io_mb}m" --randrepeat=0 --output-format=json --output="$work/fio.json" >/dev/null
  python3 -c 'import json,sys; j=json.load(open(sys.argv[1]))["jobs"][0]; print(int(j["read"]["iops"] + j["write"]["iops"]))' "$work/fio.json"
}

# Both servers up at once (the device's size sets nbdkit's), then the runs
# alternate between them so that a change in the machine's load hits both.
"$FTLAB" serve --ftl "$ftl" --chip small-slc --blocks-per-plane "$blocks" --listen "unix:$work/ftlab.sock" \
  --stats "$work/stats.json" >"$work/ftlab.out" 2>"$work/ftlab.err" &
pids+=($!)
wait_socket "$work/ftlab.sock"
for _ in $(seq 100); do [ -e "$work/stats.json" ] && break; sleep 0.1; done
size=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["exports"][0]["size_bytes"])' "$work/stats.json")
nbdkit --foreground --unix "$work/nbdkit.sock" memory "$size" &
pids+=($!)
wait_socket "$work/nbdkit.sock"
# CPU time (user + system, in clock ticks) a server has used so far.
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
best_ftlab=0
best_nbdkit=0
cpu_ftlab=0
cpu_nbdkit=0
for i in $(seq "$runs"); do
  t0=$(ticks "${pids[0]}")
  a=$(iops "$work/ftlab.sock")
  t1=$(ticks "${pids[0]}")
  u0=$(ticks "${pids[1]}")
  b=$(iops "$work/nbdkit.sock")
  u1=$(ticks "${pids[1]}")
  echo "run $i: ftlab $a IOPS ($((t1 - t0)) CPU ticks), nbdkit $b IOPS ($((u1 - u0)) CPU ticks)"
  [ "$a" -gt "$best_ftlab" ] && best_ftlab=$a
  [ "$b" -gt "$best_nbdkit" ] && best_nbdkit=$b
  cpu_ftlab=$((cpu_ftlab + t1 - t0))
  cpu_nbdkit=$((cpu_nbdkit + u1 - u0))
done
kill -TERM "${pids[0]}"; wait "${pids[0]}"
waf=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["exports"][0]["waf"])' "$work/ftlab.out")

echo "job: fio --ioengine=nbd --rw=$rw --bs=4k --iodepth=$depth --io_size=${io_mb}m on $size bytes (best of $runs)"
echo "nbdkit memory:        $best_nbdkit IOPS"
echo "ftlab serve $ftl: $best_ftlab IOPS (simulated time; device WAF $waf)"
python3 -c 'import sys; print(f"ratio ftlab/nbdkit: {int(sys.argv[1]) / int(sys.argv[2]):.2f}")' "$best_ftlab" "$best_nbdkit"
# The servers' CPU time for the same requests: what the IOPS would be on an
# otherwise idle machine turns on, and far steadier than IOPS under load.
python3 -c 'import sys; print(f"server CPU time, all runs: ftlab {int(sys.argv[1])} ticks, nbdkit {int(sys.argv[2])} ticks; ftlab/nbdkit {int(sys.argv[1]) / max(1, int(sys.argv[2])):.2f}")' "$cpu_ftlab" "$cpu_nbdkit"
