#!/usr/bin/env bash
# Every committed sweep CSV must be what this checkout produces. Runs each sweep
# of experiments/ into a temporary folder and compares its rows (sorted by `run`,
# every column of the committed CSV) with the committed CSV, and every [[table]]
# file it writes with the committed file of that name byte for byte; exits 1
# naming each sweep that differs and the first columns that moved. Columns this
# checkout adds to the rows (new report fields) are named, not compared: they
# change no result. An entry `SWEEP:` (no rows CSV) is checked by its tables
# alone.
#
# Full mode also runs each experiments/*/outputs.sh OUTDIR (the outputs made by
# other commands: examples, ftlab flashtier, scripts) and compares every file it
# writes with the committed file of that name, then names every committed CSV or
# SVG under experiments/ that nothing reran (experiments/unchecked.txt lists
# the ones that cannot be, with the reason). Both modes check the reproduction
# ledger (python3 experiments/ledger.py check).
#
#   bash experiments/check-sweeps.sh            everything (about 15 minutes on 2 cores)
#   bash experiments/check-sweeps.sh --quick    the CI-sized subset (about 40 s)
#   FTLAB_REDRAW=1 bash experiments/check-sweeps.sh   also copies each figure
#       (.svg) that differs over the committed one: after a change to the drawing
#
# Both modes then check every committed figure in headless Chromium
# (experiments/check_figures.py: text at least 7 pt at print size, none
# overlapping or clipped, every series showing); without Chromium that check
# is skipped with a note, unless FTLAB_REQUIRE_CHROMIUM=1 (CI) makes it fail.
#
# Uses FTLAB (default: target/release/ftlab, built if missing). Tables and plots
# are written into the temporary folder (`ftlab sweep --out-dir`): the checkout
# is left as it is.
set -euo pipefail
cd "$(dirname "$0")/.."

quick=(
  lazy-rtgc/sweep-generated:lazy-rtgc/results-generated
  lazy-rtgc/sweep-traces:lazy-rtgc/results-traces
  gftl/consumer:gftl/consumer
  gftl/consumer-50:gftl/consumer-50
  gftl/write-queue:
  gftl/write-queue-consumer:
  gftl/fig7-period:
  lazy-rtgc/figure8:lazy-rtgc/figure8
  lazy-rtgc/rftl-space-traces:lazy-rtgc/rftl-space-traces
  lazy-rtgc/rftl-space-generated:lazy-rtgc/rftl-space-generated
  lazy-rtgc/rftl-footprint:lazy-rtgc/rftl-footprint
  lazy-rtgc/rftl-ablation:lazy-rtgc/rftl-ablation
  lazy-rtgc/fig11-space:lazy-rtgc/fig11-space
  gftl/fig7-common-period:
  telomere/fig10-sweep:
  telomere/table3-sweep:
  openssd/table2:openssd/table2
  openssd/fig3-4:openssd/fig3-4
  openssd/fig8:openssd/fig8
  placement/warp:placement/warp
  placement/lsm:placement/lsm
  placement/units:placement/units
  placement/hotcold:placement/hotcold
)
rest=(
  lazy-rtgc/table7:lazy-rtgc/table7
  openssd/merge:openssd/merge
  openssd/written:openssd/written
  openssd/dram:openssd/dram
  openssd/timing:openssd/timing
  openssd/fio-pass:openssd/fio-pass
  openssd/write-link:openssd/write-link
  openssd/read-buffer-mode:openssd/read-buffer-mode
  lazy-rtgc/table7-gftl:lazy-rtgc/table7-gftl
  lazy-rtgc/gftl-queue:lazy-rtgc/gftl-queue
  lazy-rtgc/rftl-standin:lazy-rtgc/rftl-standin
  janus/figure7:janus/figure7
  janus/refill:janus/refill
  janus/figure6-oltp:janus/figure6-oltp
  janus/figure6-pc:janus/figure6-pc
  gftl/sweep:gftl/results
  gftl/sweep-50:gftl/results-50
  gftl/requests:gftl/requests
  gftl/fig7-period-postmark:
  telomere/fig10-sets-sweep:
  mqsim-compare/commands:mqsim-compare/commands
  placement/financial1:placement/financial1
  placement/tpcc:placement/tpcc
  placement/iozone:placement/iozone
  placement/flashcache:placement/flashcache
)
case "${1:-}" in
  --quick) sweeps=("${quick[@]}") ;;
  "") sweeps=("${quick[@]}" "${rest[@]}") ;;
  *) echo "usage: $0 [--quick]" >&2; exit 2 ;;
esac

FTLAB=${FTLAB:-target/release/ftlab}
if [ ! -x "$FTLAB" ]; then
  cargo build --release --quiet -p ftlab-cli
fi
if [ "${1:-}" != --quick ] && [ ! -f experiments/gftl/out/postmark-pages.trace ]; then
  python3 experiments/gftl/split_trace.py
fi
if [ "${1:-}" != --quick ] && [ ! -f experiments/lazy-rtgc/out/financial1-standin.ascii ]; then
  python3 experiments/lazy-rtgc/financial_standin.py
fi
if [ "${1:-}" != --quick ]; then
  [ -f experiments/mqsim-compare/out/mqsim-compare.trace ] || python3 experiments/mqsim-compare/gen_trace.py
  [ -f experiments/mqsim-compare/out/mqsim-mixed.trace ] || python3 experiments/mqsim-compare/gen_trace.py --mixed
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0

# FTLAB_REDRAW=1: a figure (.svg) that differs is copied over the committed one
# (after a change to how figures are drawn); tables never are.
redraw() {
  [ "${FTLAB_REDRAW:-0}" = 1 ] && [ "${1##*.}" = svg ] || return 1
  cp "$1" "$2"
  echo "REDRAWN  $2"
}
for s in "${sweeps[@]}"; do
  toml="experiments/${s%%:*}.toml"
  dir="$tmp/$(echo "${s%%:*}" | tr / -)"
  out="$dir.rows.csv"
  start=$(date +%s)
  "$FTLAB" sweep --quiet "$toml" -o "$out" --out-dir "$dir"
  same=1
  for table in "$dir"/*.csv "$dir"/*.svg; do
    [ -e "$table" ] || continue
    committed="$(dirname "$toml")/$(basename "$table")"
    echo "$committed" >>"$tmp/compared"
    if ! cmp -s "$table" "$committed" && redraw "$table" "$committed"; then
      :
    elif ! cmp -s "$table" "$committed"; then
      echo "DIFFERS  $committed: regenerate it with: ftlab sweep $toml (and say why in the commit)"
      diff <(head -c 100000 "$committed") <(head -c 100000 "$table") | head -6 || true
      same=0
      failed=1
    fi
  done
  if [ -z "${s##*:}" ]; then
    [ "$same" = 1 ] && echo "ok       $toml tables ($(( $(date +%s) - start )) s)"
    continue
  fi
  csv="experiments/${s##*:}.csv"
  echo "$csv" >>"$tmp/compared"
  if python3 - "$csv" "$out" <<'EOF'
import csv, sys

def rows(path):
    with open(path, newline="") as f:
        return {r["run"]: r for r in csv.DictReader(f)}

committed, now = rows(sys.argv[1]), rows(sys.argv[2])
# A column this checkout adds (a new report field) changes no committed
# result: compare the committed columns, and say which are new.
# Where and by which build a row was made (provenance other than its config)
# is no result: left out of the comparison.
made_by = ("provenance.ftlab", "provenance.git_revision", "provenance.cwd", "provenance.stamp.")
ca = [k for k in next(iter(committed.values()), {}).keys() if not k.startswith(made_by)]
cb = next(iter(now.values()), {}).keys()
new = [k for k in cb if k not in ca]
now = {run: {k: v for k, v in r.items() if k in ca} for run, r in now.items()}
if committed == now:
    if new:
        print(f"  new columns (not in the committed CSV): {', '.join(new)}")
    sys.exit(0)
for run in sorted(set(committed) | set(now)):
    a, b = committed.get(run), now.get(run)
    if a is None or b is None:
        print(f"  run {run}: only in {'the committed CSV' if b is None else 'this checkout'}")
        continue
    moved = [f"{k} {a.get(k)} -> {b.get(k)}" for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]
    if moved:
        print(f"  run {run}: " + "; ".join(moved[:4]) + (" ..." if len(moved) > 4 else ""))
sys.exit(1)
EOF
  then
    echo "ok       $csv ($(( $(date +%s) - start )) s)"
  else
    echo "DIFFERS  $csv: regenerate it with: ftlab sweep $toml -o $csv (and say why in the commit)"
    failed=1
  fi
done

# Outputs made by other commands than a sweep: each folder's outputs.sh writes
# them into the folder it is given, under their committed names.
if [ "${1:-}" != --quick ]; then
  for script in experiments/*/outputs.sh; do
    [ -e "$script" ] || continue
    folder=$(dirname "$script")
    dir="$tmp/outputs-$(basename "$folder")"
    mkdir -p "$dir"
    start=$(date +%s)
    if ! FTLAB="$FTLAB" bash "$script" "$dir"; then
      echo "FAILED   $script: it exited with an error; fix it, then run check-sweeps again"
      failed=1
      continue
    fi
    same=1
    while IFS= read -r made; do
      name=${made#"$dir"/}
      committed="$folder/$name"
      echo "$committed" >>"$tmp/compared"
      if [ ! -f "$committed" ]; then
        echo "DIFFERS  $committed: $script writes it but it is not committed"
        same=0
        failed=1
      elif ! cmp -s "$made" "$committed" && redraw "$made" "$committed"; then
        :
      elif ! cmp -s "$made" "$committed"; then
        echo "DIFFERS  $committed: regenerate it with: bash $script $folder (and say why in the commit)"
        diff <(head -c 100000 "$committed") <(head -c 100000 "$made") | head -6 || true
        same=0
        failed=1
      fi
    done < <(find "$dir" -type f | sort)
    [ "$same" = 1 ] && echo "ok       $script ($(( $(date +%s) - start )) s)"
  done
  # Every committed table and plot must have been rerun by one of the above,
  # or be named in experiments/unchecked.txt with the reason it cannot be.
  while IFS= read -r file; do
    grep -qxF "$file" "$tmp/compared" && continue
    [ -f experiments/unchecked.txt ] && awk -v f="$file" '$1 == f { hit = 1 } END { exit !hit }' experiments/unchecked.txt && continue
    echo "UNCHECKED $file: no sweep or outputs.sh reruns it; add it to one, or to experiments/unchecked.txt with the reason"
    failed=1
  done < <(git ls-files 'experiments/*.csv' 'experiments/*.svg' | sort)
fi

# The reproduction ledger: its rows against the committed CSVs and the papers
# (both modes: it reads committed files only), and the checker's own tests.
python3 -m unittest discover -q -s experiments -p 'test_ledger.py' || failed=1
# The figure checker's tests (render planted figures in headless Chromium; skipped without it).
python3 -m unittest discover -q -s experiments -p 'test_check_figures.py' || failed=1
python3 experiments/ledger.py check || failed=1
# Every committed figure, rendered in headless Chromium.
if command -v chromium >/dev/null || command -v chromium-browser >/dev/null || command -v google-chrome >/dev/null \
  || [ -n "${CHROMIUM:-}" ]; then
  python3 experiments/check_figures.py $(git ls-files 'experiments/*.svg') || failed=1
elif [ "${FTLAB_REQUIRE_CHROMIUM:-0}" = 1 ]; then
  echo "FAILED   the figure check needs headless Chromium (apt-get install chromium)"
  failed=1
else
  echo "note: Chromium is not installed: the committed figures were not rendered (apt-get install chromium)"
fi

exit $failed
