#!/usr/bin/env python3
"""Table VI of 002 (average energy per access) from the sweeps' rows.

Reads results.csv, results-50.csv, consumer.csv and consumer-50.csv (the
flash operations by purpose of every run) and writes table6-energy.csv: per
trace, utilization, pi and FTL, the energy of an average read and write
access in nJ with Section VI's figures for the 002 Table I chip (3.3 V,
10 mA): 825 nJ a page or OOB read (25 us), 9,900 nJ a program (300 us),
66,000 nJ an erase (2 ms).

Accounting (the paper does not spell it out): a read access costs its host
page and OOB reads; a write access its host program plus an equal share of
all cleaning work (garbage-collection reads, OOB reads and programs, and
every erase), since cleaning runs because of writes. Run from anywhere:

    python3 experiments/gftl/energy.py
"""
import csv
import os

HERE = os.path.dirname(os.path.abspath(__file__))
E_RD, E_WR, E_ER = 825.0, 9900.0, 66000.0
PURPOSES = ("host", "gc", "map", "wear_leveling", "checkpoint", "recovery")
# Table VI of 002: (trace, pi) -> (read nJ, write nJ).
PAPER = {
    ("synthetic", 32): (14565, 43993),
    ("synthetic", 64): (35363, 48090),
    ("consumer", 32): (7952, 10195),
    ("consumer", 64): (10289, 14612),
}
SOURCES = (
    ("results.csv", "postmark", 100),
    ("results-50.csv", "postmark", 50),
    ("consumer.csv", "consumer", 100),
    ("consumer-50.csv", "consumer", 50),
)


def ops(row, kind, purposes=PURPOSES):
    return sum(int(row[f"flash_ops.{kind}.{p}"]) for p in purposes)


def energy(row):
    reads = int(row["host_pages_read"])
    writes = int(row["host_pages_written"])
    read_nj = E_RD * (ops(row, "reads", ("host",)) + ops(row, "oob_reads", ("host",)))
    other = [p for p in PURPOSES if p != "host"]
    cleaning = (
        E_RD * (ops(row, "reads", other) + ops(row, "oob_reads", other))
        + E_WR * ops(row, "programs", other)
        + E_ER * ops(row, "erases")
    )
    write_nj = E_WR * ops(row, "programs", ("host",)) + cleaning
    return read_nj / reads, write_nj / writes


def main():
    out = []
    for name, trace, util in SOURCES:
        with open(os.path.join(HERE, name), newline="") as f:
            for row in csv.DictReader(f):
                pi = int(row["device.pages_per_block"])
                rd, wr = energy(row)
                paper = PAPER.get(("synthetic" if trace == "postmark" else trace, pi), ("", ""))
                out.append([trace, util, pi, row["ftl.kind"], f"{rd:.0f}", f"{wr:.0f}", *paper])
    with open(os.path.join(HERE, "table6-energy.csv"), "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["trace", "utilization", "pi", "ftl", "read_nj", "write_nj", "paper_read_nj", "paper_write_nj"])
        order = {"postmark": 0, "consumer": 1}
        w.writerows(sorted(out, key=lambda r: (order[r[0]], -r[1], r[3], r[2])))


if __name__ == "__main__":
    main()
