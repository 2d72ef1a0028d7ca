#!/usr/bin/env bash
# Soak test of ftlab serve with device images: generation-stamped writes over two
# write-back exports, FLUSH and FUA, SIGUSR1 power cuts and SIGKILL restarts,
# every block checked after each (crates/server/tests/soak.py says what counts).
# CI's size: 21 server lives, 105 cuts, 20 SIGKILL restarts (about a minute).
# Larger: bash crates/server/tests/soak.sh --rounds 200 --cuts-per-round 10 --ops-per-cut 500
#
# Run from anywhere; FTLAB is the binary under test (default: target/debug/ftlab,
# built first). Needs Debian's python3-libnbd (the system python3's nbd module);
# skipped with a message without it.
set -euo pipefail
cd "$(dirname "$0")/../../.."
if ! /usr/bin/python3 -c 'import nbd' 2>/dev/null; then
  echo "skip: soak.sh needs the nbd Python module (Debian package python3-libnbd)"
  exit 0
fi
if [ -z "${FTLAB:-}" ]; then
  cargo build -q -p ftlab-cli
  FTLAB=target/debug/ftlab
fi
work="$(mktemp -d)"
trap 'pkill -KILL -f "$work/soak.sock" 2>/dev/null || true; rm -rf "$work"' EXIT
# The soak must be able to fail: with the promise broken on purpose it has to
# count lost writes.
for how in no-image no-fua; do
  if /usr/bin/python3 crates/server/tests/soak.py --ftlab "$FTLAB" --work "$work" --break "$how" \
      --rounds 3 --cuts-per-round 2 >"$work/broken.txt" 2>&1; then
    cat "$work/broken.txt"
    echo "FAILED: soak.sh --break $how counted no lost write: the soak cannot see a loss"
    exit 1
  fi
  if ! grep -q "flushed writes lost: [1-9]" "$work/broken.txt"; then
    cat "$work/broken.txt"
    echo "FAILED: soak.sh --break $how failed, but not by counting lost writes"
    exit 1
  fi
  echo "soak.sh --break $how: $(grep -o 'flushed writes lost: [0-9]*' "$work/broken.txt") (as it must)"
  rm -f "$work"/*.img "$work"/*.journal "$work"/*.lock "$work/server.log"
done
start=$(date +%s)
if /usr/bin/python3 crates/server/tests/soak.py --ftlab "$FTLAB" --work "$work" "$@" >"$work/soak.txt" 2>&1; then
  tail -1 "$work/soak.txt"
  echo "soak.sh: $(($(date +%s) - start)) s"
else
  cat "$work/soak.txt"
  echo "--- ftlab serve's log:"
  tail -40 "$work/server.log"
  echo "FAILED: soak.sh"
  exit 1
fi
