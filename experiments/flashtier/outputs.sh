#!/usr/bin/env bash
# Regenerates the committed outputs of experiments/flashtier into OUTDIR, under
# the same folder and file names (check-sweeps.sh compares them byte for byte).
#
#   bash experiments/flashtier/outputs.sh OUTDIR              CI-sized folders, ~1 min
#   FTLAB_SLOW=1 bash experiments/flashtier/outputs.sh OUTDIR  also the 1/16-scale
#       folders (~40 s each on an idle core) and the paper-scale ones (8-13 min
#       each, 2.9 GB of memory); without FTLAB_SLOW they are skipped and listed
#       in experiments/unchecked.txt.
#
# Runs from the repository root; FTLAB defaults to target/release/ftlab.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:?usage: outputs.sh OUTDIR}
FTLAB=${FTLAB:-target/release/ftlab}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# folder, then the command's arguments (each folder's command as in README.md)
run() {
  local folder=$1
  shift
  if ! "$FTLAB" flashtier "$@" -o "$tmp/$folder" >"$tmp/$folder.log" 2>&1; then
    cat "$tmp/$folder.log" >&2
    return 1
  fi
  mkdir -p "$out/$folder"
  # Only the files committed in the folder (older folders have no ssc-metadata.csv).
  for f in experiments/flashtier/"$folder"/*; do
    cp "$tmp/$folder/$(basename "$f")" "$out/$folder/"
  done
}

run ci --scale ci
run ci-log --scale ci --ssc-consistency log
run ci-sets --scale ci --ssd-set-blocks 512
run ci-log-flush-log --scale ci --ssc-consistency log --ssc-flush-checkpoint off
run ci-rotor --scale ci --file-pick rotor
run ci-flashcache --scale ci --read-fill-sync --metadata-on-dirty-transition
run ci-seq0 --scale ci --sequential-blocks 0
run ci-seq64 --scale ci --sequential-blocks 64
run ci-seq256 --scale ci --sequential-blocks 256

if [ "${FTLAB_SLOW:-0}" = 1 ]; then
  run scale16-75g --scale 16
  run scale16-75g-log --scale 16 --ssc-consistency log
  run scale16-75g-log-flush-log --scale 16 --ssc-consistency log --ssc-flush-checkpoint off --workloads varmail,fileserver
  run scale16-1g --scale 16 --data-bytes 1000000000
  run scale16-1g-seed2 --scale 16 --data-bytes 1000000000 --seed 2
  run scale16-1g-seed3 --scale 16 --data-bytes 1000000000 --seed 3
  run scale16-fb-uniform-span --scale 16 --workloads fileserver --data-bytes 78125000 --layout-bytes 4687500000
  run scale16-75g-rotor --scale 16 --workloads fileserver --file-pick rotor
  run paper-75g --scale paper
  run paper-16g --scale paper --data-bytes 16000000000
  run paper-filebench --scale paper --data-bytes 0
  run paper-75g-rotor --scale paper --workloads fileserver --file-pick rotor
  run paper-75g-flashcache --scale paper --workloads fileserver --read-fill-sync --metadata-on-dirty-transition
  run paper-75g-rotor-wv --scale paper --workloads webserver,varmail --file-pick rotor
  run paper-75g-flashcache-wv --scale paper --workloads webserver,varmail --read-fill-sync --metadata-on-dirty-transition
else
  # Without the slow runs, their figures are still redrawn from the committed
  # flashtier.csv (ftlab flashtier --replot): the drawing is checked, the
  # numbers only with FTLAB_SLOW=1.
  for folder in scale16-75g scale16-75g-log scale16-75g-log-flush-log scale16-1g scale16-1g-seed2 scale16-1g-seed3 \
    scale16-fb-uniform-span scale16-75g-rotor paper-75g paper-16g paper-filebench paper-75g-rotor \
    paper-75g-flashcache paper-75g-rotor-wv paper-75g-flashcache-wv; do
    "$FTLAB" flashtier --replot "experiments/flashtier/$folder/flashtier.csv" -o "$out/$folder" >/dev/null
  done
fi
