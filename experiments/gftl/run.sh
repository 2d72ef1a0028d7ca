#!/bin/sh
# Every sweep of this folder, from the workspace root: sh experiments/gftl/run.sh
set -e
cd "$(dirname "$0")/../.."
[ -f experiments/gftl/out/postmark-pages.trace ] || python3 experiments/gftl/split_trace.py
for s in sweep:results sweep-50:results-50 consumer:consumer consumer-50:consumer-50 requests:requests; do
  cargo run --release -q -p ftlab-cli -- sweep "experiments/gftl/${s%%:*}.toml" -o "experiments/gftl/${s##*:}.csv"
done
# Figures 6, 7 and 8 (tables and plots only; the run rows go to out/). Table VI
# comes with the first four sweeps (table6-energy-*.csv).
mkdir -p experiments/gftl/out
for s in write-queue write-queue-consumer fig7-period fig7-common-period fig7-period-postmark; do
  cargo run --release -q -p ftlab-cli -- sweep "experiments/gftl/$s.toml" -o "experiments/gftl/out/$s-runs.csv"
done
