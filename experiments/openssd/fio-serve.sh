#!/usr/bin/env bash
# 003 Figures 3-4 with real fio: the same 4 KiB jobs as fig3-4.toml, run by fio
# (--ioengine=nbd) against `ftlab serve --pace 1` (every reply waits for its
# simulated completion on the wall clock, so fio's own IOPS are the simulated
# board's), for the baseline (openssd-baseline.toml) and optimized (openssd-optimized.toml)
# exports. Writes fio-serve.csv: ftl, job, iodepth, fio's IOPS, and the IOPS of
# the matching row of fig3-4.csv beside it.
#
# Usage: bash experiments/openssd/fio-serve.sh
# FTLAB is the binary (default: target/release/ftlab, built first); SECONDS_PER_JOB
# fio's runtime per job (default 3); SIZE_MB the region fio works on (default
# 256: read jobs first write it sequentially).
set -euo pipefail
cd "$(dirname "$0")/../.."
here=experiments/openssd
secs="${SECONDS_PER_JOB:-3}"
size="${SIZE_MB:-256}"
for tool in fio python3; do
  command -v "$tool" >/dev/null || { echo "error: $tool is not installed (apt-get install fio python3)" >&2; exit 1; }
done
if [ -z "${FTLAB:-}" ]; then
  cargo build -q --release -p ftlab-cli
  FTLAB=target/release/ftlab
fi
work="$(mktemp -d)"
pid=""
cleanup() {
  [ -n "$pid" ] && { kill -TERM "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; }
  rm -rf "$work"
}
trap cleanup EXIT

out="$here/fio-serve.csv"
echo "ftl,job,iodepth,fio_iops,sim_iops" > "$out.tmp"
for ftl in baseline optimized; do
  config="$here/openssd-baseline.toml"
  [ "$ftl" = optimized ] && config="$here/openssd-optimized.toml"
  for job in randwrite write randread read; do
    for depth in 1 32; do
      # A fresh device for every job: writes see the empty partition, reads
      # the region written sequentially first.
      sock="$work/s.sock"
      rm -f "$sock"
      "$FTLAB" serve "$config" --listen "unix:$sock" --pace 1 > "$work/server.log" 2>&1 &
      pid=$!
      for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.1; done
      [ -S "$sock" ] || { echo "error: no server on $sock" >&2; cat "$work/server.log" >&2; exit 1; }
      uri="nbd+unix:///?socket=$sock"
      if [ "$job" = randread ] || [ "$job" = read ]; then
        fio --name=fill --ioengine=nbd --uri="$uri" --rw=write --bs=256k --iodepth=8 \
          --size="${size}M" --output-format=terse > /dev/null
      fi
      fio --name="$job" --ioengine=nbd --uri="$uri" --rw="$job" --bs=4k --iodepth="$depth" \
        --size="${size}M" --time_based --runtime="$secs" --randrepeat=1 \
        --output-format=json > "$work/fio.json"
      kill -TERM "$pid"; wait "$pid" 2>/dev/null || true; pid=""
      python3 - "$work/fio.json" "$ftl" "$job" "$depth" "$here/fig3-4.csv" >> "$out.tmp" <<'PY'
import csv, json, sys
path, ftl, job, depth, sim = sys.argv[1:]
text = open(path).read()
# fio prints "fio: connected to NBD server" before its JSON.
r = json.loads(text[text.index("{"):])["jobs"][0]
iops = r["write"]["iops"] + r["read"]["iops"]
case = {"randwrite": "random-write", "write": "sequential-write", "randread": "random-read",
        "read": "sequential-read"}[job]
row = [x for x in csv.DictReader(open(sim)) if x["case"] == f"{ftl} {case}" and x["host.queue_depth"] == depth]
print(f"{ftl},{job},{depth},{iops:.0f},{float(row[0]['iops']):.0f}")
PY
      tail -1 "$out.tmp"
    done
  done
done
mv "$out.tmp" "$out"
echo "wrote $out"
