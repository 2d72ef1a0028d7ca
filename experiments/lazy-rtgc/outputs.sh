#!/bin/sh
# Outputs of this folder not made by a sweep: 001 Tables II-III (each scheme's
# space utilization U(sigma) on the five chips of Table II) from `ftlab bounds`.
# Usage (from the workspace root): sh experiments/lazy-rtgc/outputs.sh OUTDIR
# Writes OUTDIR/table3-space.csv. About 1 s.
set -eu
out=${1:?usage: outputs.sh OUTDIR}
FTLAB=${FTLAB:-target/release/ftlab}
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for chip in spansion-slc-512mb toshiba-slc-512mb samsung-mlc-512mb micron-mlc-16gb toshiba-tlc-2gb lazy-rtgc-eval-slc; do
  "$FTLAB" bounds --chip "$chip" -f json -o "$tmp/$chip.json"
done
python3 - "$tmp" "$out/table3-space.csv" <<'PY'
import json, sys
src, dst = sys.argv[1], sys.argv[2]
chips = ["spansion-slc-512mb", "toshiba-slc-512mb", "samsung-mlc-512mb", "micron-mlc-16gb",
         "toshiba-tlc-2gb", "lazy-rtgc-eval-slc"]
with open(dst, "w") as f:
    f.write("chip,alpha,ideal,rftl,gftl,gftl_kappa,lazy_rtgc,lazy_rtgc_ondemand,lazy_rtgc_us,gftl_us,rftl_us\n")
    for c in chips:
        d = json.load(open(f"{src}/{c}.json"))
        f.write(",".join([
            c, str(d["lazy_rtgc"]["alpha"]),
            f'{d["ideal"]["space_utilization"]:.4f}', f'{d["rftl"]["space_utilization"]:.4f}',
            f'{d["gftl"]["space_utilization"]:.4f}', str(d["gftl"]["kappa"]),
            f'{d["lazy_rtgc"]["space_utilization"]:.4f}', f'{d["lazy_rtgc_ondemand"]["space_utilization"]:.4f}',
            f'{d["lazy_rtgc"]["max_response_us"]:.1f}', f'{d["gftl"]["max_response_us"]:.1f}',
            f'{d["rftl"]["max_response_us"]:.1f}',
        ]) + "\n")
PY
