#!/bin/sh
# Outputs of this folder not made by a sweep: 002 Table III (GFTL's service
# bounds) for the Table I large-block chip at pi = 16, 32, 64, and the write-queue
# length L = N (kappa + 1) / 2 with 002's kappa, from `ftlab bounds`.
# Usage (from the workspace root): sh experiments/gftl/outputs.sh OUTDIR
# Writes OUTDIR/table3-bounds.csv. About 1 s.
set -eu
out=${1:?usage: outputs.sh OUTDIR}
FTLAB=${FTLAB:-target/release/ftlab}
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for pi in 16 32 64; do
  "$FTLAB" bounds --chip samsung-slc-128mb-large-block --pages-per-block "$pi" -f json -o "$tmp/$pi.json"
done
python3 - "$tmp" "$out/table3-bounds.csv" <<'PY'
import json, sys
src, dst = sys.argv[1], sys.argv[2]
with open(dst, "w") as f:
    f.write("pi,ideal_write_us,ideal_read_us,ideal_period_us,gftl_write_us,gftl_read_us,gftl_period_us,gftl_extra_block_fraction\n")
    for pi in (16, 32, 64):
        d = json.load(open(f"{src}/{pi}.json"))
        i, g = d["ideal"], d["gftl"]
        f.write(f'{pi},{i["max_write_us"]:.1f},{i["max_read_us"]:.1f},{i["min_request_period_us"]:.1f},'
                f'{g["max_write_us"]:.1f},{g["max_read_us"]:.1f},{g["min_request_period_us"]:.1f},'
                f'{g["extra_block_fraction"]:.4f}\n')
PY
