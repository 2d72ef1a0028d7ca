#!/usr/bin/env bash
# Every committed output of experiments/telomere that no sweep TOML makes,
# written into OUTDIR under the committed file names (experiments/check-sweeps.sh
# compares them byte for byte). Run from the repository root:
#   bash experiments/telomere/outputs.sh OUTDIR
# About 4-5 minutes on 2 shared cores (schedulability.sh is nearly all of it).
# The sweeps (table3-sweep, fig10-sweep, fig10-sets-sweep) are checked by
# check-sweeps.sh itself.
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: $0 OUTDIR" >&2; exit 2; }
mkdir -p "$1"
outdir=$(cd "$1" && pwd)
root=$(pwd)
FTLAB=${FTLAB:-target/release/ftlab}
case "$FTLAB" in /*) ;; *) FTLAB="$root/$FTLAB" ;; esac
export FTLAB
# Figures 7-9 and their sensitivity tables (CSV + SVG).
bash experiments/telomere/schedulability.sh "$outdir"
# Table 3: WAO-GC's verdict across the erase time.
python3 experiments/telomere/table3-waogc-te.py "$outdir"
# Figure 10 at the paper's count: the sweep file fig10-sets-sweep.toml.
python3 experiments/telomere/fig10-sets.py "$outdir"
# Figures 13-14: the throughput of table3-throughput.csv (a sweep table) by window.
python3 experiments/telomere/table3-summary.py "$outdir"
# Figures 13-14: the page-map FTL on 16 and 32 chips.
python3 experiments/telomere/table3-chips.py "$outdir"
# Figure 10 at lambda 0.70 / 0.80 / 0.95 (a sweep, run here rather than from
# check-sweeps.sh's list; about 10 s).
rows=$(mktemp)
"$FTLAB" sweep --quiet experiments/telomere/fig10-lambda-sweep.toml -o "$rows" --out-dir "$outdir"
rm -f "$rows"
