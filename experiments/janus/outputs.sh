#!/usr/bin/env bash
# Writes every committed output of experiments/janus that is not a sweep
# listed in experiments/check-sweeps.sh into OUTDIR, under the committed
# file names (check-sweeps.sh, full mode, compares them byte for byte):
#
#   figure5.csv figure5.svg                  janus_figures figure5 (about 10 s)
#   figure8.csv figure8-phases.csv figure8.svg   janus_figures figure8 (about 10 s)
#   figure9.csv figure9.svg                  janus_figures figure9 (about 1.5 min)
#   figure6-paper-oltp.csv figure6-paper-pc.csv figure7-paper.csv pc-sweep.csv
#                                            ftlab sweep -j 1 on the stand-in traces
#                                            (about 3 min together)
#   ablation-paper.csv ablation-ghost.csv stand-in-sweep.csv figure9-ablation.csv
#                                            ONLY with FTLAB_SLOW=1 (about 6, 3, 4
#                                            and 5 min on one core: too long for
#                                            the default check)
#
# The stand-in traces are generated first when missing
# (experiments/janus/gen_traces.py, into experiments/janus/out/).
# Run from the repository root:  bash experiments/janus/outputs.sh OUTDIR
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: $0 OUTDIR" >&2; exit 2; }
out=$1
mkdir -p "$out"
out=$(cd "$out" && pwd)
cd "$(dirname "$0")/../.."
FTLAB=${FTLAB:-target/release/ftlab}
[ -x "$FTLAB" ] || cargo build --release --quiet -p ftlab-cli
dir=experiments/janus

[ -f $dir/out/financial1-standin.trace ] && [ -f $dir/out/pc-standin.trace ] || python3 $dir/gen_traces.py
for m in 0.05 0.1 0.3 0.4; do
  [ -f "$dir/out/pc-standin-m$m.trace" ] || python3 $dir/gen_traces.py --only pc --pc-meta "$m"
done
for v in "0.25 1" "0.75 1" "1 1" "0.5 0.8" "0.5 1.2" "1 1.2"; do
  set -- $v
  [ -f "$dir/out/financial1-standin-r1000000-f$1-t$2.trace" ] || python3 $dir/gen_traces.py --only financial1 --footprint "$1" --theta "$2"
done

# The examples write beside their configuration.
for f in figure5 figure8 figure9; do
  cp $dir/$f.toml "$out/$f.toml"
  cargo run --release --quiet -p ftlab-cli --example janus_figures -- $f "$out/$f.toml" > /dev/null
  rm "$out/$f.toml"
done

sweeps=(figure6-paper-oltp figure6-paper-pc figure7-paper pc-sweep)
if [ "${FTLAB_SLOW:-0}" = 1 ]; then
  sweeps+=(ablation-paper ablation-ghost stand-in-sweep figure9-ablation)
fi
for s in "${sweeps[@]}"; do
  "$FTLAB" sweep --quiet -j 1 $dir/$s.toml -o "$out/$s.csv" --out-dir "$out"
done
