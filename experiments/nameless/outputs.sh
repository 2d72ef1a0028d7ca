#!/usr/bin/env bash
# Regenerates the committed outputs of experiments/nameless into OUTDIR under
# the same names: the example's two CSVs (about 1 s after the build) and their
# plots. Runs from the repository root; FTLAB defaults to target/release/ftlab.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:?usage: outputs.sh OUTDIR}
FTLAB=${FTLAB:-target/release/ftlab}
mkdir -p "$out"
cargo run -q --release -p ftlab-ftl --example nameless_eval -- "$out" >/dev/null
"$FTLAB" plot "$out/fig8_iops.csv" --x ftl --y seq_write_iops,rand_write_iops,seq_read_iops,rand_read_iops \
  --title "003 Figure 8 (shape): 4 KiB IOPS, pagemap and the Nameless-Write device" --y-label IOPS \
  -o "$out/fig8_iops.svg" >/dev/null
"$FTLAB" plot "$out/table4_memory.csv" --x image_gb --y pagemap_device_bytes,nameless_device_bytes \
  --title "003 Table 4 (shape): device memory by file-system image (GB)" --y-label bytes \
  -o "$out/table4_memory.svg" >/dev/null
