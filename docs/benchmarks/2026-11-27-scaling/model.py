#!/usr/bin/env python3
"""The model of docs/SCALING.md: one checkpoint of N_NODES x PER_NODE ranks
drained to a PFS, per dataset mode and aggregation, from the formulas that
sizes.tsv, chunks.tsv and the strace-*.txt counts of this directory pin.

  model.py              prints the tables of docs/SCALING.md
  model.py --check [DIR]  checks the formulas against DIR's sizes.tsv and
                          chunks.tsv (default: this script's directory)

Every figure below that is not measured here is an ASSUMPTION, named so.
"""
import csv
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

# The machine.
N_NODES = 10_000
PER_NODE = 64
RANKS = N_NODES * PER_NODE
GiB = 1 << 30
D_RANK = 1 * GiB            # ASSUMPTION: each rank's part of one shared element
SERVERS = 1_000
B_SERVER = 10e9             # ASSUMPTION: bytes/s one PFS server writes
B_PFS = SERVERS * B_SERVER
CREATES_PER_S = 30_000      # ASSUMPTION: file creates/s of one metadata target
T_OP = 0.1e-3               # ASSUMPTION: one metadata round trip, s
T_LOCKED = 1e-3             # ASSUMPTION: one DstLock section (flock + ~10 ops)

CHUNK = 4 << 20             # kChunkBytes
FLUSH = 32 << 20            # DrainOptions::flush_bytes (8 chunks)


def record_bytes(ranks, dataset, elements, parts):
    """elements: names; parts: list of range counts."""
    return (28 + 4 + len(dataset) + 36 + 4 * ranks +
            sum(24 + len(n) for n in elements) +
            sum(28 + 16 * r for r in parts))


def index_bytes(rec, containers, parts):
    """parts: list of (extents, chunks)."""
    return 28 + 4 + rec + 16 + 8 * containers + sum(
        8 + 16 * e + 8 * c for e, c in parts)


def part_shape(nbytes):
    """(extents, chunks) of a contiguous part as the drain journals it."""
    return max(1, math.ceil(nbytes / FLUSH)), max(1, math.ceil(nbytes / CHUNK))


def check(where):
    ok = True
    with open(os.path.join(where, "sizes.tsv")) as f:
        for row in csv.DictReader(f, delimiter="\t"):
            n, agg = int(row["ranks"]), row["aggregation"]
            # One shared element "field" and one unique "own" per rank,
            # 64 KiB each: a part per rank of each, one range, one extent,
            # one chunk.
            rec = record_bytes(n, agg, ["field"] + ["own"] * n, [1] * 2 * n)
            idx = index_bytes(rec, int(row["containers"]), [(1, 1)] * 2 * n)
            got = (int(row["record_bytes"]), int(row["index_bytes"]))
            if got != (rec, idx):
                print("sizes.tsv", row, "model", rec, idx)
                ok = False
    with open(os.path.join(where, "chunks.tsv")) as f:
        for row in csv.DictReader(f, delimiter="\t"):
            p = int(row["part_bytes"])
            rec = record_bytes(1, "n_1", ["field"], [1])
            idx = index_bytes(rec, 1, [part_shape(p)])
            if idx != int(row["index_bytes"]):
                print("chunks.tsv", row, "model", idx)
                ok = False
    print("formulas match every measured size" if ok else "MISMATCH")
    return ok


def model():
    e, c = part_shape(D_RANK)
    rec = record_bytes(RANKS, "n_1", ["field"], [1] * RANKS)
    data = RANKS * D_RANK
    flushes = RANKS * e  # journal entries: one per flush of a part
    print(f"ranks {RANKS:,}, data {data / 2**40:,.0f} TiB, "
          f"record {rec / 1e6:,.1f} MB, flushes {flushes:,}")
    print()
    print("| mode, aggregation | writers W | containers C | files created "
          "(kept + transient) | unlinks | flock | dir fsyncs | locked "
          "sections (x 1 ms) | publisher's ops (x 0.1 ms) | index |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for mode, w in (("basic", RANKS), ("file_per_node", N_NODES)):
        for agg, cont in (("n_n", RANKS), ("n_m", N_NODES), ("n_1", 1)):
            created = cont + 1 + 2 * w + 3
            unlinks = 2 * w + 2
            flocks = 3 * w
            # The staging directory after each journal, done marker and
            # container a writer makes (a node's writer makes its ranks'
            # containers under n_n), and a few at publication.
            dir_fsyncs = 2 * w + max(w, cont) + 6
            locked = 2 * w
            # Under the lock, in one process: every journal opened and read,
            # every container opened, stat'ed, truncated and fsynced, the
            # staging directory listed, every journal and marker unlinked.
            publisher = 2 * w + 4 * cont + 2 * w + 20
            idx = index_bytes(rec, cont, [(e, c)] * RANKS)
            print(f"| {mode}, {agg} | {w:,} | {cont:,} | {cont + 1:,} + "
                  f"{2 * w + 3:,} | {unlinks:,} | {flocks:,} | "
                  f"{dir_fsyncs:,} | {locked:,} ({locked * T_LOCKED:,.0f} s) "
                  f"| {publisher:,} ({publisher * T_OP:,.0f} s) | "
                  f"{idx / 1e9:.3f} GB |")
    print()
    print(f"per part: {e} extents, {c} chunk sums; fdatasyncs per checkpoint "
          f"{2 * flushes:,} (a container's and a journal's per flush)")
    t_write = data / B_PFS
    print(f"drain bound by the PFS: {t_write:,.0f} s writing, "
          f"{2 * t_write:,.0f} s with the read-back at the same bandwidth")
    need = data / N_NODES / t_write
    print(f"node drain bandwidth for the PFS to be the bound: "
          f"{need / 1e9:.2f} GB/s written (and as much read back)")
    print(f"a directory of {RANKS:,} new files at {CREATES_PER_S:,}/s: "
          f"{RANKS / CREATES_PER_S:,.0f} s; of {3 * RANKS:,}: "
          f"{3 * RANKS / CREATES_PER_S:,.0f} s")
    idx = index_bytes(rec, 1, [(e, c)] * RANKS)
    print(f"restart: index read by every rank: {RANKS * idx / 1e15:,.2f} PB "
          f"in all; once per node (shared page cache): "
          f"{N_NODES * idx / 1e12:,.1f} TB = {N_NODES * idx / B_PFS:,.1f} s "
          f"at the PFS's bandwidth, {N_NODES * idx / B_SERVER / 60:,.0f} min "
          f"from one server (a file of one stripe); preads of 4 KiB per "
          f"rank: {math.ceil(idx / 4096):,}")
    for mode, w in (("basic", RANKS), ("file_per_node", N_NODES)):
        print(f"{mode}: done markers stat'ed under the lock: "
              f"{w * math.log(w):,.0f} (W ln W, writers ending in random "
              f"order) to {w * w / 2:,.0f} (W^2/2, ending in writer order)")
    small = index_bytes(record_bytes(RANKS, "n_1", ["field"], [1] * RANKS), 1,
                        [part_shape(64 << 20)] * RANKS)
    print(f"index at 64 MiB a rank: {small / 1e6:,.0f} MB")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--check":
        sys.exit(0 if check(sys.argv[2] if len(sys.argv) > 2 else HERE) else 1)
    model()
