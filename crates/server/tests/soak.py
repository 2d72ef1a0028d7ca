#!/usr/bin/python3
"""Soak test of `ftlab serve`: flushed writes must survive power cuts and crashes.

Two write-back exports (pagemap and DFTL, each behind a 64-page write buffer),
each kept in a device image. A client writes generation-stamped 4 KiB blocks at
random over both, flushes every few writes and sends some writes with FUA; the
server's power is cut with SIGUSR1 every few dozen writes, and every few cuts
the server is killed with SIGKILL and started again from its images. After
every cut and every restart every block is read back and checked:

- a block whose write was made durable (a FLUSH that succeeded after it, or
  FUA) must hold that generation or a later one: anything older is a flushed
  write lost, the one number that must be 0;
- no block may hold a generation that was never written to it, or bytes that
  are not a block's stamp (corruption).

A FLUSH that fails (EIO after a cut that lost unflushed writes) makes nothing
durable; writes in flight at a cut may or may not survive. Every cut and
restart is logged. Run by crates/server/tests/soak.sh (CI's size: 105 cuts and
20 SIGKILL restarts); larger: --rounds 200 --cuts-per-round 10 --ops-per-cut 500.
Needs the python3-libnbd module (Debian python3-libnbd).

`--break no-image` (the server restarted without its images) and `--break
no-fua` (writes sent without FUA but counted as durable) break the promise on
purpose; soak.sh runs both briefly and requires that they count lost writes.
"""

import argparse
import os
import random
import signal
import struct
import subprocess
import sys
import time

import nbd

BLOCK = 4096
MAGIC = 0x534F414B  # "SOAK"


def stamp(export, block, gen):
    head = struct.pack("<IIIQ", MAGIC, export, block, gen)
    body = bytes([(gen * 31 + block) % 251]) * (BLOCK - len(head))
    return head + body


def parse(data):
    if data == bytes(BLOCK):
        return None  # never written: zeroes
    magic, export, block, gen = struct.unpack("<IIIQ", data[:20])
    if magic != MAGIC or data != stamp(export, block, gen):
        return "corrupt"
    return (export, block, gen)


class Server:
    def __init__(self, args, work):
        self.args, self.work = args, work
        self.sock = os.path.join(work, "soak.sock")
        self.log = open(os.path.join(work, "server.log"), "ab")
        self.proc = None

    def start(self):
        cmd = [
            self.args.ftlab, "serve", "--chip", "small-slc", "--blocks-per-plane", str(self.args.blocks_per_plane),
            "--ftl", "pagemap", "--set", "device.write_buffer_pages=64", "--name", "wb",
            "--export", "d=dftl", "--listen", "unix:" + self.sock,
        ]
        if self.args.break_ != "no-image":
            cmd += ["--image", os.path.join(self.work, "wb.img"), "--image", "d=" + os.path.join(self.work, "d.img")]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=self.log)
        deadline = time.time() + 30
        while time.time() < deadline:
            if self.proc.poll() is not None:
                sys.exit("soak: ftlab serve exited %d at start; see %s/server.log" % (self.proc.returncode, self.work))
            if os.path.exists(self.sock):
                try:
                    h = nbd.NBD()
                    h.connect_unix(self.sock)
                    h.shutdown()
                    return
                except nbd.Error:
                    pass
            time.sleep(0.05)
        sys.exit("soak: ftlab serve did not start")

    def cuts_logged(self):
        with open(os.path.join(self.work, "server.log"), "rb") as f:
            return f.read().count(b"(on demand")

    def cut(self):
        before = self.cuts_logged()
        self.proc.send_signal(signal.SIGUSR1)
        deadline = time.time() + 10
        while self.cuts_logged() < before + 2 and time.time() < deadline:  # one line per export
            time.sleep(0.01)
        if self.cuts_logged() < before + 2:
            sys.exit("soak: SIGUSR1 did not cut the power on both exports")

    def kill(self):
        self.proc.kill()
        self.proc.wait()

    def stop(self):
        self.proc.terminate()
        return self.proc.wait()


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--ftlab", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--rounds", type=int, default=21, help="server lives; each but the last ends in SIGKILL")
    p.add_argument("--cuts-per-round", type=int, default=5)
    p.add_argument("--ops-per-cut", type=int, default=60)
    p.add_argument("--blocks-per-plane", type=int, default=16)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--break", dest="break_", choices=["none", "no-image", "no-fua"], default="none",
                   help="break the promise on purpose, to check that the soak counts the loss")
    a = p.parse_args()
    rng = random.Random(a.seed)
    server = Server(a, a.work)
    exports = ["wb", "d"]
    # Per export and block: the generation last made durable, and the highest written.
    durable = [dict(), dict()]
    written = [dict(), dict()]
    pending = [set(), set()]  # blocks written since the export's last successful flush
    gen = 0
    cuts = kills = lost = corrupt = flush_eio = checked = 0

    def connect():
        hs = []
        for name in exports:
            h = nbd.NBD()
            h.set_export_name(name)
            h.connect_unix(server.sock)
            hs.append(h)
        return hs

    def verify(hs, when):
        nonlocal lost, corrupt, checked
        for e, h in enumerate(hs):
            for block in sorted(written[e]):
                got = parse(h.pread(BLOCK, block * BLOCK))
                checked += 1
                want = durable[e].get(block, 0)
                if got == "corrupt" or (got is not None and (got[0] != e or got[1] != block)):
                    corrupt += 1
                    print("soak: %s: export %s block %d holds bytes never written there" % (when, exports[e], block))
                    continue
                g = 0 if got is None else got[2]
                if g < want:
                    lost += 1
                    print("soak: %s: export %s block %d: generation %d, but %d was flushed" % (when, exports[e], block, g, want))
                elif g > written[e][block]:
                    corrupt += 1
                    print("soak: %s: export %s block %d: generation %d never written" % (when, exports[e], block, g))
                else:
                    # What it holds now is what survived: the reference from here on.
                    durable[e][block] = g
                    written[e][block] = g if g else written[e][block]

    server.start()
    hs = connect()
    nblocks = [h.get_size() // BLOCK * 3 // 4 for h in hs]
    for rnd in range(a.rounds):
        for _ in range(a.cuts_per_round):
            for _ in range(a.ops_per_cut):
                e = rng.randrange(2)
                block = rng.randrange(nblocks[e])
                gen += 1
                fua = rng.random() < 0.1
                send_fua = fua and a.break_ != "no-fua"
                hs[e].pwrite(stamp(e, block, gen), block * BLOCK, nbd.CMD_FLAG_FUA if send_fua else 0)
                written[e][block] = gen
                if fua:
                    durable[e][block] = gen
                else:
                    pending[e].add((block, gen))
                if rng.random() < 0.15:
                    try:
                        hs[e].flush()
                        for b, g in pending[e]:
                            durable[e][b] = max(durable[e].get(b, 0), g)
                    except nbd.Error:
                        flush_eio += 1
                    pending[e].clear()
            server.cut()
            cuts += 1
            for e in range(2):
                pending[e].clear()
            print("soak: round %d: power cut %d (SIGUSR1)" % (rnd, cuts))
            verify(hs, "after cut %d" % cuts)
            # The loss (if any) is reported once on each connection by its next flush.
            for e, h in enumerate(hs):
                try:
                    h.flush()
                except nbd.Error:
                    flush_eio += 1
        for h in hs:
            h.shutdown()
        if rnd == a.rounds - 1:
            break
        server.kill()
        kills += 1
        for e in range(2):
            pending[e].clear()
        print("soak: round %d: SIGKILL %d, restarting from the images" % (rnd, kills))
        server.start()
        hs = connect()
        verify(hs, "after SIGKILL %d" % kills)
    rc = server.stop()
    print("soak: %d power cuts, %d SIGKILL restarts, %d block reads checked, %d flushes failed with EIO after a cut; "
          "flushed writes lost: %d, corrupt blocks: %d; the server's exit status %d"
          % (cuts, kills, checked, flush_eio, lost, corrupt, rc))
    sys.exit(0 if lost == 0 and corrupt == 0 and rc == 0 else 1)


if __name__ == "__main__":
    main()
