#!/usr/bin/env bash
# ftlab serve against the real NBD clients: nbdinfo, qemu-img convert/compare,
# nbdcopy, and fio's nbd engine with crc32c verification at iodepth 1 and 16, for
# pagemap, dftl, lazy-rtgc, gftl, nftl, zns-host and fdp on a 64-block device (small-slc, 16
# blocks per plane, about 14 MB) that each job overwrites several times, so
# garbage collection runs hard; an ext4 file system written through nbdfuse,
# checked and read back over a new connection; nbdsh's targeted cases (FUA,
# write-zeroes, flush, trim then read, error codes); then a power cut under fio, and
# a device image kept across a restart (with a SIGUSR1 power cut) and a crash, and a
# write-back device's flushed writes surviving a power cut (fio verify_only);
# TLS with client certificates (nbdinfo refused without, nbdcopy round trip with).
#
# Run from the workspace root: bash crates/server/tests/clients.sh
# FTLAB is the binary under test (default: target/debug/ftlab, built first);
# SKIP_FIO=1 leaves out the fio jobs (a quicker run while developing).
# A client that is not installed is skipped with a message; .ci/run installs all.
set -euo pipefail
cd "$(dirname "$0")/../../.."

if [ -z "${FTLAB:-}" ]; then
  cargo build -q -p ftlab-cli
  FTLAB=target/debug/ftlab
fi
work="$(mktemp -d)"
server_pid=""
fuse_pid=""
cleanup() {
  if [ -n "$fuse_pid" ]; then kill -TERM "$fuse_pid" 2>/dev/null || true; wait "$fuse_pid" 2>/dev/null || true; fi
  if grep -q " $work/mnt " /proc/mounts 2>/dev/null; then umount "$work/mnt" 2>/dev/null || true; fi
  if [ -n "$server_pid" ]; then kill -TERM "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

passed=0
failed=0
skipped=0
pass() { echo "ok: $*"; passed=$((passed + 1)); }
fail() { echo "FAILED: $*"; failed=$((failed + 1)); }
have() { command -v "$1" >/dev/null 2>&1 || { echo "skip: $1 is not installed ($2)"; skipped=$((skipped + 1)); return 1; }; }

DEVICE=(--chip small-slc --blocks-per-plane 16)

# serve NAME ARGS...: starts ftlab serve on $work/NAME.sock, waits for its socket
# and its first stats file.
serve() {
  local name="$1"; shift
  sock="$work/$name.sock"
  "$FTLAB" serve "${DEVICE[@]}" --listen "unix:$sock" --stats "$work/$name.stats.json" "$@" \
    >"$work/$name.out.json" 2>"$work/$name.err" &
  server_pid=$!
  for _ in $(seq 100); do
    [ -S "$sock" ] && [ -e "$work/$name.stats.json" ] && return 0
    kill -0 "$server_pid" 2>/dev/null || break
    sleep 0.1
  done
  echo "ftlab serve $name did not start:"; cat "$work/$name.err"
  exit 1
}

# stop NAME: SIGTERM, a clean exit (0) and the exit report with no device error.
stop() {
  local name="$1"
  kill -TERM "$server_pid"
  if wait "$server_pid"; then
    if grep -q '"errors": 0' "$work/$name.out.json"; then
      pass "$name: clean exit, counters printed, no device errors ($(field "$name" waf | sed 's/^/waf /'), $(field "$name" gc_page_copies) gc page copies, $(field "$name" erases) erases)"
    else
      fail "$name: the exit report has device errors:"; grep '"errors"' "$work/$name.out.json"
    fi
  else
    fail "$name: ftlab serve exited $?"; cat "$work/$name.err"
  fi
  server_pid=""
}

# field NAME KEY: the first export's KEY in NAME's exit report.
field() { grep -m1 -o "\"$2\": [0-9.a-z]*" "$work/$1.out.json" | sed 's/.*: //'; }

uri() { echo "nbd+unix:///${2:-}?socket=$work/$1.sock"; }

# fio_job NAME LABEL ARGS...: one fio job against the export; err=0 required.
fio_job() {
  local name="$1" label="$2"; shift 2
  local out="$work/fio.$name.$label.txt"
  if fio --name="$label" --ioengine=nbd --uri="$(uri "$name")" --verify_fatal=1 --verify_state_save=0 --randrepeat=0 "$@" \
    >"$out" 2>&1 && grep -q "err= 0" "$out"; then
    pass "$name: fio $label: $(grep -m1 -o 'err= 0' "$out"), $(grep -Eo '(read|write|trim): IOPS=[^,]*' "$out" | tr '\n' ' ')"
  else
    fail "$name: fio $label"; tail -20 "$out"
  fi
}

start=$(date +%s)

if [ -z "${SKIP_FIO:-}" ] && have fio "fio's nbd engine jobs"; then
  # zns-host: a host FTL over the zoned device; fdp: the FDP device (two
  # handles, which this small device has room for), both unchanged under fio.
  for spec in pagemap dftl lazy-rtgc gftl nftl zns-host "fdp --set ftl.handles=2"; do
    read -r -a args <<<"$spec"
    ftl=${args[0]}
    serve "$ftl" --ftl "$ftl" "${args[@]:1}"
    size=$(grep -m1 -o '"size_bytes": [0-9]*' "$work/$ftl.stats.json" | grep -o '[0-9]*$')
    # Overwrite the device three times over at depth 1, then twice at depth 16.
    fio_job "$ftl" randwrite-qd1 --rw=randwrite --bs=4k --iodepth=1 --io_size=$((3 * size)) --verify=crc32c
    fio_job "$ftl" randwrite-qd16 --rw=randwrite --bs=4k --iodepth=16 --io_size=$((2 * size)) --verify=crc32c
    # Sector-sized to multi-page writes (read-modify-writes), one pass.
    fio_job "$ftl" mixed-sizes-qd16 --rw=randwrite --bsrange=512-16k --iodepth=16 --verify=crc32c
    # A read/write mix, verified.
    fio_job "$ftl" randrw-qd16 --rw=randrw --rwmixread=30 --bs=8k --iodepth=16 --io_size="$size" --verify=crc32c
    # Trims, then writes verified over the trimmed space.
    fio_job "$ftl" randtrim-qd16 --rw=randtrim --bs=16k --iodepth=16 --io_size=$((size / 2))
    fio_job "$ftl" rewrite-after-trim-qd16 --rw=randwrite --bs=16k --iodepth=16 --verify=crc32c
    stop "$ftl"
  done
fi

serve clients --ftl pagemap --export dftl=dftl
# The smaller export's size: an image both hold.
size=$(grep -o '"size_bytes": [0-9]*' "$work/clients.stats.json" | grep -o '[0-9]*$' | sort -n | head -1)
if have nbdinfo "export listing"; then
  info="$(nbdinfo --list "$(uri clients)")"
  if grep -q 'export="pagemap"' <<<"$info" && grep -q 'export="dftl"' <<<"$info" \
    && grep -q 'can_fua: true' <<<"$info" && grep -q 'can_trim: true' <<<"$info" \
    && grep -q 'can_zero: true' <<<"$info" && grep -q 'block_size_minimum: 512' <<<"$info" \
    && grep -q 'block_size_preferred: 4096' <<<"$info"; then
    pass "nbdinfo --list: both exports, flags and block sizes"
  else
    fail "nbdinfo --list"; echo "$info"
  fi
fi
head -c "$size" /dev/urandom >"$work/random.img"
if have qemu-img "qemu-img convert/compare"; then
  for export in pagemap dftl; do
    if qemu-img convert -n -f raw -O raw "$work/random.img" "$(uri clients "$export")" \
      && qemu-img compare -f raw -F raw "$work/random.img" "$(uri clients "$export")" >/dev/null; then
      pass "qemu-img convert then compare: $export holds the random image"
    else
      fail "qemu-img round trip on $export"
    fi
  done
fi
if have nbdcopy "nbdcopy round trip"; then
  head -c "$size" /dev/urandom >"$work/random2.img"
  if nbdcopy "$work/random2.img" "$(uri clients dftl)" && nbdcopy "$(uri clients dftl)" "$work/back.img" \
    && cmp -s "$work/random2.img" "$work/back.img"; then
    pass "nbdcopy to and from dftl: the same bytes"
  else
    fail "nbdcopy round trip"
  fi
fi
stop clients

# nbdsh (libnbd's Python shell) for targeted cases on a write-back device
# (device.write_buffer_pages: durable on flush or FUA): flags and block sizes;
# write-zeroes (with and without NO_HOLE) and trim, each then read; a 512-byte
# write inside a page; the errors the protocol asks for (libnbd's strict mode
# off so the requests reach the server), the connection serving on after them;
# then a flushed write, a FUA write and a write neither flushed nor FUA, a SIGUSR1 power cut,
# and reads over the same connection: the first two survive, the third is lost
# (it must be: a check that could not fail would prove nothing). nbdsh runs
# `python3 -m nbd`: the system Python has the module (Debian python3-libnbd).
nbdsh_run() { PATH="/usr/bin:$PATH" nbdsh "$@"; }
if have nbdsh "targeted NBD command cases" && ! nbdsh_run -c 'pass' >"$work/nbdsh.txt" 2>&1; then
  fail "nbdsh is installed but cannot run (its Python module: Debian package python3-libnbd):"; cat "$work/nbdsh.txt"
elif command -v nbdsh >/dev/null; then
  serve nbdsh --ftl pagemap --set device.write_buffer_pages=64
  if SERVER_PID="$server_pid" SERVER_ERR="$work/nbdsh.err" nbdsh_run -u "$(uri nbdsh)" -c '
import errno, os, signal, time
page = h.get_block_size(nbd.SIZE_PREFERRED)
def check(cond, what):
    print(("ok: nbdsh: " if cond else "FAILED: nbdsh: ") + what)
    if not cond:
        raise SystemExit(1)
def code(f):
    try:
        f()
    except nbd.Error as e:
        # The error name (EINVAL): libnbd gives the name or the number.
        return e.errno if isinstance(e.errno, str) else errno.errorcode.get(e.errno)
check(h.can_fua() and h.can_flush() and h.can_trim() and h.can_zero() and not h.is_read_only(),
      "flags: FUA, flush, trim and write-zeroes, writable")
check(h.get_block_size(nbd.SIZE_MINIMUM) == 512 and page == 4096,
      "block sizes: minimum 512, preferred one flash page (4096)")
a = os.urandom(16 * page)
for flags, label in ((0, "write-zeroes"), (nbd.CMD_FLAG_NO_HOLE, "write-zeroes with NO_HOLE")):
    h.pwrite(a, 0)
    h.zero(4 * page + 1024, 2 * page + 512, flags)
    b = h.pread(16 * page, 0)
    lo, hi = 2 * page + 512, 6 * page + 1536
    check(b[:lo] == a[:lo] and b[lo:hi] == bytes(hi - lo) and b[hi:] == a[hi:],
          label + " (not page-aligned) then read: zeros in the range, the data around it")
h.pwrite(a, 0)
h.trim(8 * page, 4 * page)
b = h.pread(16 * page, 0)
check(b[:4 * page] == a[:4 * page] and b[4 * page:12 * page] == bytes(8 * page) and b[12 * page:] == a[12 * page:],
      "trim then read: the trimmed pages read as zeros, the rest is intact")
s = os.urandom(512)
h.pwrite(s, 3 * page + 1536)
b = h.pread(page, 3 * page)
check(b == a[3 * page:3 * page + 1536] + s + a[3 * page + 2048:4 * page],
      "a 512-byte write inside a page: read-modify-write keeps the rest of the page")
size = h.get_size()
h.set_strict_mode(0)
check(code(lambda: h.pread(page, size)) == "EINVAL", "read past the end: EINVAL")
check(code(lambda: h.pwrite(bytes(page), size - 512)) == "ENOSPC", "write past the end: ENOSPC")
check(code(lambda: h.zero(page, size)) == "ENOSPC", "write-zeroes past the end: ENOSPC")
check(code(lambda: h.trim(page, size)) == "EINVAL", "trim past the end: EINVAL")
check(code(lambda: h.pread(100, 7)) == "EINVAL", "a read below the minimum block size, misaligned: EINVAL")
check(code(lambda: h.pwrite(bytes(100), 512)) == "EINVAL", "a misaligned write: EINVAL")
check(code(lambda: h.pread(64 << 20, 0)) == "EINVAL", "a 64 MiB read, over the 32 MiB maximum: EINVAL")
check(h.pread(512, 0) == a[:512], "the connection serves on after the errors")
base = 1 << 20
x, z, y = os.urandom(page), os.urandom(page), os.urandom(page)
h.pwrite(z, base + page)
h.flush()
h.pwrite(x, base, nbd.CMD_FLAG_FUA)
h.pwrite(y, base + 2 * page)
os.kill(int(os.environ["SERVER_PID"]), signal.SIGUSR1)
for _ in range(100):
    if "on demand" in open(os.environ["SERVER_ERR"]).read():
        break
    time.sleep(0.05)
check(h.pread(page, base) == x, "power cut: the FUA write survives")
check(h.pread(page, base + page) == z, "power cut: the write before FLUSH survives")
check(h.pread(page, base + 2 * page) == bytes(page),
      "power cut: the write after the last FLUSH, not FUA, is lost from the write buffer, as it must be")
check(code(lambda: h.flush()) == "EIO",
      "the flush after that cut fails with EIO: it cannot make the lost write durable")
h.flush()
check(True, "the flush after that succeeds (the loss is reported once)")
' >"$work/nbdsh.txt" 2>&1; then
    pass "nbdsh: $(grep -c '^ok: nbdsh' "$work/nbdsh.txt") targeted cases (flags, block sizes, write-zeroes, trim, sub-page write, error codes, FUA and flush across a power cut, the flush after it failing)"
  else
    fail "nbdsh targeted cases:"; cat "$work/nbdsh.txt"
  fi
  stop nbdsh
fi

# A real file system through FUSE: nbdfuse shows the export as a file, mkfs.ext4
# -d writes a tree of files into it, e2fsck -fn finds it clean; then, over a
# new connection (unmounted and mounted again), e2fsck again and debugfs reads
# every file back with the same bytes.
fs_ok() {
  have nbdfuse "the file-system test" && have mkfs.ext4 "the file-system test" && have e2fsck "the file-system test" \
    && have debugfs "the file-system test" || return 1
  if [ ! -c /dev/fuse ]; then echo "skip: /dev/fuse is missing (the file-system test)"; skipped=$((skipped + 1)); return 1; fi
}
# mount_nbd NAME: nbdfuse on $work/mnt, waits for its file.
mount_nbd() {
  mkdir -p "$work/mnt"
  nbdfuse "$work/mnt" "$(uri "$1")" 2>>"$work/nbdfuse.err" &
  fuse_pid=$!
  for _ in $(seq 100); do [ -e "$work/mnt/nbd" ] && return 0; sleep 0.1; done
  return 1
}
unmount_nbd() {
  kill -TERM "$fuse_pid" 2>/dev/null || true
  wait "$fuse_pid" 2>/dev/null || true
  if grep -q " $work/mnt " /proc/mounts; then umount "$work/mnt" 2>/dev/null || true; fi
}
if fs_ok; then
  serve fs --ftl dftl
  mkdir -p "$work/fsroot/data/a/b" "$work/fsroot/data/c"
  for i in $(seq 60); do
    dir=$(printf '%s\n' a a/b c . | sed -n "$((i % 4 + 1))p")
    head -c $((RANDOM * 7 % 200000 + 1)) /dev/urandom >"$work/fsroot/data/$dir/file$i"
  done
  if mount_nbd fs; then
    if mkfs.ext4 -q -F -d "$work/fsroot" "$work/mnt/nbd" >"$work/mkfs.txt" 2>&1 \
      && e2fsck -fn "$work/mnt/nbd" >"$work/fsck1.txt" 2>&1; then
      pass "ext4 over nbdfuse: mkfs.ext4 -d wrote $(find "$work/fsroot" -type f | wc -l) files, e2fsck -fn clean"
    else
      fail "ext4 over nbdfuse: mkfs or e2fsck"; cat "$work/mkfs.txt" "$work/fsck1.txt"
    fi
    unmount_nbd
    mkdir -p "$work/back"
    if mount_nbd fs && e2fsck -fn "$work/mnt/nbd" >"$work/fsck2.txt" 2>&1 \
      && debugfs -R "rdump /data $work/back" "$work/mnt/nbd" >/dev/null 2>&1 \
      && diff -r "$work/fsroot/data" "$work/back/data" >/dev/null; then
      pass "ext4 over nbdfuse, mounted again: e2fsck -fn clean, every file's bytes the same"
    else
      fail "ext4 over nbdfuse, mounted again"; tail -n 5 "$work/fsck2.txt" "$work/nbdfuse.err"
    fi
    unmount_nbd
  else
    fail "nbdfuse did not show the export"; cat "$work/nbdfuse.err"
  fi
  stop fs
fi

# A power cut after 3000 commands under fio at depth 1 (pagemap acknowledges
# durable writes): the server recovers, the client stays, and verify passes.
if have fio "power cut under fio"; then
  serve powercut --ftl pagemap --cut-after 3000
  fio_job powercut randwrite-cut-qd1 --rw=randwrite --bs=4k --iodepth=1 --io_size=$((2 * size)) --verify=crc32c
  stop powercut
  if [ "$(field powercut power_cuts)" = 1 ] && grep -q "recovered at" "$work/powercut.err"; then
    pass "powercut: one power cut, recovered: $(grep -m1 -o 'power cut at.*' "$work/powercut.err")"
  else
    fail "powercut: no power cut and recovery reported"; cat "$work/powercut.err"
  fi
fi

# A write-back device (device.write_buffer_pages: durable on flush) under fio,
# then a SIGUSR1 power cut once fio is done, then fio verify_only over what it
# wrote: with an fsync every 8 writes and one at the end (depth 8), everything
# acknowledged before the last flush survives and verify passes; without any
# fsync, the pages still in the buffer are lost and verify must fail (the check
# can fail: a buffer that survived a cut unflushed would be a bug).
if have fio "write-back durability under a power cut"; then
  wb_job() { # NAME ARGS...: fio writes, a SIGUSR1 cut, then fio verify_only; prints verify_only's status
    local name="$1"; shift
    local job=(--name=wb --ioengine=nbd --uri="$(uri "$name")" --rw=randwrite --bs=4k --size=2m --iodepth=8
      --randrepeat=1 --verify=crc32c --verify_state_save=0 "$@")
    fio "${job[@]}" >"$work/fio.$name.write.txt" 2>&1 || { echo "write-failed"; return; }
    kill -USR1 "$server_pid"
    for _ in $(seq 50); do grep -q "on demand" "$work/$name.err" && break; sleep 0.1; done
    if fio "${job[@]}" --verify_only >"$work/fio.$name.verify.txt" 2>&1; then echo "verified"; else echo "lost"; fi
  }
  serve wbsynced --ftl pagemap --set device.write_buffer_pages=64
  outcome=$(wb_job wbsynced --fsync=8 --end_fsync=1)
  stop wbsynced
  if [ "$outcome" = verified ] && [ "$(field wbsynced power_cuts)" = 1 ]; then
    pass "write-back, fio --fsync=8 --end_fsync=1 at depth 8, power cut: fio verify_only passes ($(field wbsynced flushes) flushes)"
  else
    fail "write-back, flushed, power cut: fio verify_only $outcome"; tail -5 "$work/fio.wbsynced.verify.txt"
  fi
  serve wbunsynced --ftl pagemap --set device.write_buffer_pages=64
  outcome=$(wb_job wbunsynced)
  stop wbunsynced
  if [ "$outcome" = lost ] && [ "$(field wbunsynced power_cuts)" = 1 ]; then
    pass "write-back, no fsync, power cut: fio verify_only finds the buffered writes lost, as it must ($(grep -m1 -o 'verify: bad[^,]*' "$work/fio.wbunsynced.verify.txt"))"
  else
    fail "write-back, unflushed, power cut: fio verify_only $outcome (unflushed buffered writes should be lost)"
  fi
fi

# Device images: a SIGUSR1 power cut, then qemu-img writes a random image into a
# dftl export kept in $work/dftl.img (dftl acknowledges durable writes);
# SIGTERM saves it; a new server opens the image and qemu-img compare finds
# the same bytes.
if have qemu-img "device images across a restart"; then
  serve persist --ftl dftl --image "$work/dftl.img"
  psize=$(grep -o '"size_bytes": [0-9]*' "$work/persist.stats.json" | grep -o '[0-9]*$' | head -1)
  head -c "$psize" /dev/urandom >"$work/persist.img"
  kill -USR1 "$server_pid"
  qemu-img convert -n -f raw -O raw "$work/persist.img" "$(uri persist)" || fail "qemu-img convert into persist"
  stop persist
  if [ "$(field persist power_cuts)" = 1 ] && grep -q "on demand" "$work/persist.err" && [ -s "$work/dftl.img" ]; then
    pass "persist: SIGUSR1 cut the power once; the image is saved ($(stat -c %s "$work/dftl.img") bytes)"
  else
    fail "persist: no power cut on SIGUSR1, or no image"; cat "$work/persist.err"
  fi
  serve reopened --ftl dftl --image "$work/dftl.img"
  if grep -q "opened from" "$work/reopened.err" \
    && qemu-img compare -f raw -F raw "$work/persist.img" "$(uri reopened)" >/dev/null; then
    pass "reopened from the image: qemu-img compare finds the same bytes"
  else
    fail "reopened from the image: the bytes differ"; cat "$work/reopened.err"
  fi
  # SIGTERM, then SIGUSR1s while the image is being saved: the save and the
  # cuts take turns on the device, and the image still holds every byte.
  kill -TERM "$server_pid"
  for _ in 1 2 3 4 5; do kill -USR1 "$server_pid" 2>/dev/null || true; done
  if wait "$server_pid" && grep -q "saved to" "$work/reopened.err"; then
    server_pid=""
    serve reopened2 --ftl dftl --image "$work/dftl.img"
    if qemu-img compare -f raw -F raw "$work/persist.img" "$(uri reopened2)" >/dev/null; then
      pass "SIGUSR1 during the save at SIGTERM: the image reopens with the same bytes ($(grep -c "on demand" "$work/reopened.err") power cut(s) on demand during the exit; signals sent together may merge into one)"
    else
      fail "SIGUSR1 during the save: the reopened image differs"; cat "$work/reopened2.err"
    fi
    stop reopened2
  else
    fail "SIGUSR1 during the save: ftlab serve did not exit cleanly with the image saved"; cat "$work/reopened.err"
    server_pid=""
  fi
fi

# A crash: qemu-img writes a random image into a write-back export kept in
# $work/crash.img (qemu-img flushes before it exits), then SIGKILL, with no save
# at exit; a new server opens the image and its journal and qemu-img compare
# finds every byte. Meanwhile a second server on the same image is refused.
if have qemu-img "flushed writes kept across a crash"; then
  serve crash --ftl pagemap --set device.write_buffer_pages=64 --image "$work/crash.img"
  csize=$(grep -o '"size_bytes": [0-9]*' "$work/crash.stats.json" | grep -o '[0-9]*$' | head -1)
  head -c "$csize" /dev/urandom >"$work/crash.raw"
  qemu-img convert -n -f raw -O raw "$work/crash.raw" "$(uri crash)" || fail "qemu-img convert into crash"
  if "$FTLAB" serve "${DEVICE[@]}" --ftl pagemap --set device.write_buffer_pages=64 --listen "unix:$work/second.sock" \
    --image "$work/crash.img" >/dev/null 2>"$work/second.err"; then
    fail "a second server opened an image in use"
  elif grep -q "crash.img.lock" "$work/second.err"; then
    pass "a second server on the same image is refused: $(grep -m1 lock "$work/second.err")"
  else
    fail "a second server on the same image failed without naming the lock:"; cat "$work/second.err"
  fi
  kill -KILL "$server_pid"; wait "$server_pid" 2>/dev/null || true; server_pid=""
  serve crashed --ftl pagemap --set device.write_buffer_pages=64 --image "$work/crash.img"
  if qemu-img compare -f raw -F raw "$work/crash.raw" "$(uri crashed)" >/dev/null; then
    pass "SIGKILL after qemu-img's flush: the image and its journal reopen with every byte"
  else
    fail "SIGKILL after a flush: the reopened image differs"; cat "$work/crashed.err"
  fi
  stop crashed
fi

# TLS with the real clients: certificates made with openssl (a CA, a server
# certificate for localhost, a client certificate, and one from another CA); a
# server that requires TLS and client certificates on 127.0.0.1. A plaintext
# client, a TLS client without a certificate and one with a stray certificate
# are refused and see nothing; with the CA's certificate nbdcopy writes a
# random image over TLS and reads it back byte for byte.
if have openssl "TLS certificates for the TLS case" && have nbdcopy "TLS case" && have nbdinfo "TLS case"; then
  tls="$work/tls"
  mkdir -p "$tls" "$work/tls-nocert" "$work/tls-stray"
  cert() { # cert NAME CN EXT CA_DIR: NAME-key.pem, NAME-cert.pem signed by CA_DIR's CA
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$tls/$1-key.pem" \
      -out "$tls/$1.csr" -subj "/CN=$2" 2>/dev/null
    openssl x509 -req -in "$tls/$1.csr" -CA "$4/ca-cert.pem" -CAkey "$4/ca-key.pem" -CAcreateserial \
      -out "$tls/$1-cert.pem" -days 2 -extfile <(printf '%s\n' "$3") 2>/dev/null
  }
  ca() { # ca DIR: a self-signed CA in DIR
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$1/ca-key.pem" \
      -out "$1/ca-cert.pem" -days 2 -subj "/CN=ftlab test CA $(basename "$1")" 2>/dev/null
  }
  ca "$tls"
  ca "$work/tls-stray"
  cert server localhost "subjectAltName=DNS:localhost,IP:127.0.0.1
extendedKeyUsage=serverAuth" "$tls"
  cert client client "extendedKeyUsage=clientAuth" "$tls"
  cert stray client "extendedKeyUsage=clientAuth" "$work/tls-stray"
  cp "$tls/ca-cert.pem" "$work/tls-nocert/"
  cp "$tls/ca-cert.pem" "$work/tls-stray/ca-cert.pem.ours"
  mv "$tls/stray-cert.pem" "$work/tls-stray/client-cert.pem"
  mv "$tls/stray-key.pem" "$work/tls-stray/client-key.pem"
  mv "$work/tls-stray/ca-cert.pem.ours" "$work/tls-stray/ca-cert.pem"
  port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  "$FTLAB" serve "${DEVICE[@]}" --ftl dftl --listen "tcp:127.0.0.1:$port" --tls-certificates "$tls" \
    --tls-verify-peer >"$work/tls.out.json" 2>"$work/tls.err" &
  server_pid=$!
  for _ in $(seq 100); do grep -q "ftlab serve: listening on" "$work/tls.err" && break; sleep 0.1; done
  if nbdinfo "nbd://127.0.0.1:$port/" >/dev/null 2>"$work/tls-plain.err"; then
    fail "TLS required: a plaintext client got in"
  else
    pass "TLS required: a plaintext nbdinfo is refused ($(head -c 120 "$work/tls-plain.err" | head -1))"
  fi
  for who in nocert stray; do
    if nbdinfo "nbds://localhost:$port/?tls-certificates=$work/tls-$who" >/dev/null 2>"$work/tls-$who.err"; then
      fail "client certificates required: a TLS client ($who) got in"
    else
      pass "client certificates required: a TLS client with $( [ $who = nocert ] && echo 'no certificate' || echo 'a certificate from another CA') is refused ($(head -c 100 "$work/tls-$who.err" | head -1))"
    fi
  done
  head -c 4194304 /dev/urandom >"$work/tls-in.raw"
  if nbdcopy "$work/tls-in.raw" "nbds://localhost:$port/?tls-certificates=$tls" 2>"$work/tls-copy.err" \
    && nbdcopy "nbds://localhost:$port/?tls-certificates=$tls" "$work/tls-out.raw" 2>>"$work/tls-copy.err" \
    && cmp -n 4194304 "$work/tls-in.raw" "$work/tls-out.raw"; then
    pass "over TLS with the CA's client certificate: nbdcopy writes 4 MiB and reads every byte back"
  else
    fail "nbdcopy over TLS"; cat "$work/tls-copy.err"; tail -5 "$work/tls.err"
  fi
  kill -TERM "$server_pid"
  wait "$server_pid" || fail "ftlab serve with TLS exited $?"
  server_pid=""
fi

echo "clients.sh: $(($(date +%s) - start)) s"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
