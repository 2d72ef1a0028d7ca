#!/usr/bin/env bash
# Figures 7-9 of the Telomere paper: the largest storage and throughput
# utilizations at which all 50 random task sets are schedulable, on the 1 TB SSD
# of Section 6.1.1. Pure calculation (admission tests), about 4 minutes in all
# on 2 shared cores.
#   bash experiments/telomere/schedulability.sh [OUTDIR]   (default: this folder)
# FTLAB: the ftlab binary (default: cargo run --release).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=$(mkdir -p "${1:-$here}" && cd "${1:-$here}" && pwd)
cd "$out"
FTLAB=${FTLAB:-"cargo run --manifest-path $here/../../Cargo.toml --release --quiet -p ftlab-cli --"}
# Bandwidths in binary megabytes (2^20 bytes), the paper's own convention (its
# "4-MB block" of 512 pages of 8 KB): 100 MB/s is 3,200 pages of 32 KB a second.
# fig9-units.csv sets the decimal reading (10^6 bytes) beside it (README).
S="$FTLAB schedulability --chip telomere-1tb-ssd --sets 50 --seed 1 --bandwidth-unit mib"

# Figure 7: granularity g, 500 tasks, lambda = 0.90.
$S --policy sip,sharp --granularity 1,2,4,8,16,32,64 --tasks 500 --over-provisioning 0.1 \
   -f csv -o fig7-granularity.csv --plot fig7-granularity.svg --plot-x granularity \
   --plot-title "Figure 7: largest schedulable utilization vs granularity (500 tasks, lambda 0.90)"

# Figure 8: tasks per set, g = 64, lambda = 0.90.
$S --policy sip,sharp --tasks 100,250,500,1000 --over-provisioning 0.1 \
   -f csv -o fig8-tasks.csv --plot fig8-tasks.svg --plot-x tasks \
   --plot-title "Figure 8: largest schedulable utilization vs task-set size (g 64, lambda 0.90)"

# Figure 9: Telomere SiP / SharP, WAO-GC and MultiLog-Oracle (Table 2's random
# and Zipf 80/20 WAF) at over-provisioning 0.10, 0.30 and 0.75, with Eq. 19 read
# as printed (the reading the paper's figure implies; README), then Telomere with
# ftlab's generalized Eq. 19 beside it (the grid runs to 1.3 to find its limit).
$S --policy sip,sharp,waogc,multilog --over-provisioning 0.1,0.3,0.75 --multilog-workload random --gc-job printed \
   -f csv -o fig9-random.csv --plot fig9-random.svg --plot-x over-provisioning \
   --plot-title "Figure 9: largest schedulable utilization vs over-provisioning (Eq. 19 as printed; MultiLog: random WAF)"
$S --policy sip,sharp --axis throughput --over-provisioning 0.1,0.3,0.75 --gc-job generalized --max 1.3 \
   -f csv -o fig9-generalized.csv --plot fig9-generalized.svg --plot-x over-provisioning \
   --plot-title "Figure 9, Telomere with ftlab's generalized Eq. 19: largest schedulable throughput utilization"
$S --policy multilog --over-provisioning 0.1,0.3,0.75 --multilog-workload zipf \
   -f csv -o fig9-multilog-zipf.csv --plot fig9-multilog-zipf.svg --plot-x over-provisioning \
   --plot-title "Figure 9: MultiLog-Oracle with Table 2's Zipf 80/20 WAF"

# Beyond the paper's grid (README, "Figure 9"): MultiLog-Oracle's throughput
# limits with the grid run to 1.3, to compare with Telomere's at alpha = 0.75.
echo "workload,policy,axis,granularity,tasks,over_provisioning,max_util,first_failure,failed_by" > fig9-multilog-beyond.csv
for w in random zipf; do
  $S --policy multilog --axis throughput --over-provisioning 0.1,0.3,0.75 --multilog-workload "$w" --max 1.3 \
     -f csv | tail -n +2 | sed "s/^/$w,/" >> fig9-multilog-beyond.csv
done

# Sensitivity of Telomere's (Eq. 19 as printed) and WAO-GC's throughput limit
# to what the paper leaves open (README, "Figure 9"): the pages every task reads
# and writes per period, and the seeds of the 50 sets; and of the storage
# limits (SiP, SharP, WAO-GC) to the pages per period.
echo "pages,policy,axis,granularity,tasks,over_provisioning,max_util,first_failure,failed_by" > fig9-pages.csv
for p in 16 32 48 56 60 62 64 72 96 128; do
  $S --policy sharp,waogc --axis throughput --gc-job printed --pages "$p" -f csv | tail -n +2 | sed "s/^/$p,/" >> fig9-pages.csv
done
for p in 32 128; do
  $S --policy sip,sharp,waogc --axis storage --pages "$p" -f csv | tail -n +2 | sed "s/^/$p,/" >> fig9-pages.csv
done
echo "bandwidth_unit,seed,policy,axis,granularity,tasks,over_provisioning,max_util,first_failure,failed_by" > fig9-seeds.csv
for unit in mib mb; do
  for seed in 1 51 101 151 201; do
    $FTLAB schedulability --chip telomere-1tb-ssd --sets 50 --seed "$seed" --bandwidth-unit "$unit" --policy sip,sharp,waogc \
      --axis throughput --gc-job printed -f csv | tail -n +2 | sed "s/^/$unit,$seed,/" >> fig9-seeds.csv
  done
done
# The unit of the bandwidths: binary (the figures above) against decimal megabytes.
echo "bandwidth_unit,gc_job,policy,axis,granularity,tasks,over_provisioning,max_util,first_failure,failed_by" > fig9-units.csv
for unit in mib mb; do
  for gc in printed generalized; do
    $FTLAB schedulability --chip telomere-1tb-ssd --sets 50 --seed 1 --bandwidth-unit "$unit" --policy sip,sharp,waogc \
      --axis throughput --gc-job "$gc" --max 1.3 -f csv | tail -n +2 | sed "s/^/$unit,$gc,/" >> fig9-units.csv
  done
done
