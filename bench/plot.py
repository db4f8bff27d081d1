#!/usr/bin/env python3
"""Plots and tables from a bench/matrix results folder (sluice-bench JSON).

  bench/plot.py RESULTS [--no-plots]

Writes into RESULTS:
  table.md               every point: median write/read MiB/s, as a fraction
                         of FIO-SYNC at the same ranks and transfer size,
                         peak RSS per rank, CPU seconds per GiB written
  A-bw-<xfer>.png        bandwidth vs ranks, one line per API (LSMIO Figs. 5-10)
  B-bw-n<ranks>.png      bandwidth vs transfer size, sequential and random (IME)
  latency-<name>.png     density of per-transfer durations, one curve per API
                         (IME Fig. 6), from the *.lat.csv files
and prints table.md. Medians are over the repetitions of each point.
"""
import glob
import json
import os
import re
import statistics
import sys
from collections import defaultdict

NAME = re.compile(r"^(?P<part>[AB])-(?P<label>.+?)(?:-(?P<pat>seq|rand))?"
                  r"-n(?P<n>\d+)-t(?P<t>\d+[km])$")


def xfer_bytes(t):
    return int(t[:-1]) * (1024 if t[-1] == "k" else 1 << 20)


def load(folder):
    points = []
    for path in sorted(glob.glob(os.path.join(folder, "*.json"))):
        m = NAME.match(os.path.basename(path)[:-5])
        if not m:
            continue
        with open(path) as f:
            doc = json.load(f)
        test = doc["tests"][0]
        # FIO-SYNC was called FIO-LIMIT in older results.
        label = "FIO-SYNC" if m["label"] == "FIO-LIMIT" else m["label"]
        p = dict(part=m["part"], label=label, pattern=m["pat"] or "seq",
                 n=int(m["n"]), t=m["t"], skipped=test["skipped"],
                 rss=test["peakRssMiB"], cpu=test["cpuSecondsPerGiBWritten"],
                 errors=test["dataErrors"], note=test["note"])
        for op in ("write", "read"):
            bws = [r["bwMiB"] for r in test["results"] if r["access"] == op]
            p[op] = statistics.median(bws) if bws else None
            p[op + "_reps"] = len(bws)
        points.append(p)
    return points


def limits(points):
    out = {}
    for p in points:
        if p["label"] == "FIO-SYNC" and not p["skipped"]:
            out[(p["part"], p["n"], p["t"])] = (p["write"], p["read"])
    return out


def fmt(v, spec="{:.0f}"):
    return "-" if v is None else spec.format(v)


def table(points):
    lim = limits(points)
    rows = ["| part | API | pattern | ranks | transfer | write MiB/s | read MiB/s "
            "| write / limit | write / 1m limit | read / limit | peak RSS MiB/rank "
            "| CPU s/GiB written |",
            "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    key = lambda p: (p["part"], xfer_bytes(p["t"]), p["n"], p["pattern"],
                     not p["label"].startswith("FIO-"), p["label"])
    for p in sorted(points, key=key):
        if p["skipped"]:
            rows.append(f"| {p['part']} | {p['label']} | | {p['n']} | {p['t']} "
                        f"| skipped: {p['skipped']} | | | | | | |")
            continue
        lw, lr = lim.get((p["part"], p["n"], p["t"]), (None, None))
        fw = p["write"] / lw if lw and p["label"] != "FIO-SYNC" else None
        fr = p["read"] / lr if lr and p["label"] != "FIO-SYNC" else None
        # Against the 1 MiB sequential write limit at the same ranks: small
        # transfers should not pay the small-write price.
        lw1 = lim.get((p["part"], p["n"], "1m"), (None, None))[0]
        fw1 = p["write"] / lw1 if lw1 and p["label"] != "FIO-SYNC" else None
        res = not p["label"].startswith("FIO-")
        rows.append(
            f"| {p['part']} | {p['label']} | {p['pattern']} | {p['n']} | {p['t']} "
            f"| {fmt(p['write'])} | {fmt(p['read'])} | {fmt(fw, '{:.2f}')} "
            f"| {fmt(fw1, '{:.2f}')} | {fmt(fr, '{:.2f}')} | {fmt(p['rss'] if res else None, '{:.0f}')} "
            f"| {fmt(p['cpu'] if res else None, '{:.2f}')} |")
    return "\n".join(rows) + "\n"


def legend(fig, axes):
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="center right", fontsize=8)
    fig.tight_layout(rect=(0, 0, 0.82, 1))


def plots(points, folder):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    a = [p for p in points if p["part"] == "A" and not p["skipped"]]
    for t in sorted({p["t"] for p in a}, key=xfer_bytes):
        fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
        for ax, op in zip(axes, ("write", "read")):
            for label in sorted({p["label"] for p in a}):
                pts = sorted((p for p in a if p["t"] == t and p["label"] == label),
                             key=lambda p: p["n"])
                if not pts:
                    continue
                style = dict(color="black", linestyle="--") if label == "FIO-SYNC" else {}
                ax.plot([p["n"] for p in pts], [p[op] for p in pts], marker="o",
                        label=label + (" (device)" if label == "FIO-SYNC" else ""),
                        **style)
            ax.set_xscale("log", base=2)
            ax.set_xticks([1, 2, 4, 8])
            ax.set_xticklabels(["1", "2", "4", "8"])
            ax.set_xlabel("ranks")
            ax.set_ylabel("MiB/s (median)")
            ax.set_title(f"{op}, transfer = block = {t}")
            ax.grid(True, alpha=0.3)
        legend(fig, axes)
        fig.savefig(os.path.join(folder, f"A-bw-{t}.png"), dpi=110)
        plt.close(fig)

    b = [p for p in points if p["part"] == "B" and not p["skipped"]]
    for n in sorted({p["n"] for p in b}):
        fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
        for ax, op in zip(axes, ("write", "read")):
            for label in sorted({p["label"] for p in b}):
                for pat in ("seq", "rand"):
                    pts = sorted((p for p in b if p["n"] == n and p["label"] == label
                                  and p["pattern"] == pat), key=lambda p: xfer_bytes(p["t"]))
                    if not pts or (label == "FIO-SYNC" and pat == "rand"):
                        continue
                    style = dict(color="black", linestyle="--") if label == "FIO-SYNC" \
                        else dict(linestyle="-" if pat == "seq" else ":")
                    ax.plot([xfer_bytes(p["t"]) / 1024 for p in pts], [p[op] for p in pts],
                            marker="o", label=label if label == "FIO-SYNC" else f"{label} {pat}",
                            **style)
            ax.set_xscale("log")
            ax.set_xlabel("transfer size (KiB)")
            ax.set_ylabel("MiB/s (median)")
            ax.set_title(f"{op}, {n} rank(s), sequential vs random (-z)")
            ax.grid(True, alpha=0.3)
        legend(fig, axes)
        fig.savefig(os.path.join(folder, f"B-bw-n{n}.png"), dpi=110)
        plt.close(fig)

    latency_plots(folder, plt)


def latency_plots(folder, plt):
    import numpy as np
    groups = defaultdict(dict)  # point (ranks, transfer) -> label -> csv
    for path in glob.glob(os.path.join(folder, "*.lat.csv")):
        m = NAME.match(os.path.basename(path)[:-8])
        if m:
            groups[(m["n"], m["t"])][m["label"]] = path
    for (n, t), files in sorted(groups.items()):
        fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
        for ax, op in zip(axes, ("write", "read")):
            for label, path in sorted(files.items()):
                secs = []
                with open(path) as f:
                    next(f)
                    for line in f:
                        parts = line.rstrip().split(",")
                        if parts[1] == op:
                            secs.append(float(parts[4]))
                secs = np.array([s for s in secs if s > 0])
                if len(secs) < 2:
                    continue
                x = np.log10(secs)
                grid = np.linspace(x.min() - 0.2, x.max() + 0.2, 400)
                bw = 1.06 * x.std() * len(x) ** (-1 / 5) or 0.05  # Silverman
                dens = np.zeros_like(grid)
                for chunk in np.array_split(x, max(1, len(x) // 20000)):
                    dens += np.exp(-0.5 * ((grid[:, None] - chunk[None, :]) / bw) ** 2).sum(1)
                dens /= len(x) * bw * np.sqrt(2 * np.pi)
                ax.plot(10 ** grid, dens, label=f"{label} (n={len(x)})")
            ax.set_xscale("log")
            ax.set_xlabel("duration of one transfer (s)")
            ax.set_ylabel("density (per decade)")
            ax.set_title(f"{op}: {n} ranks, {t} transfers")
            ax.grid(True, alpha=0.3)
        legend(fig, axes)
        fig.savefig(os.path.join(folder, f"latency-n{n}-t{t}.png"), dpi=110)
        plt.close(fig)


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if len(args) != 1 or "-h" in sys.argv or "--help" in sys.argv:
        print(__doc__)
        return 0 if ("-h" in sys.argv or "--help" in sys.argv) else 2
    folder = args[0]
    points = load(folder)
    if not points:
        print(f"plot.py: no sluice-bench JSON in {folder}", file=sys.stderr)
        return 1
    md = table(points)
    with open(os.path.join(folder, "table.md"), "w") as f:
        f.write(md)
    print(md)
    bad = [p for p in points if p["errors"]]
    for p in bad:
        print(f"DATA ERRORS: {p['label']} n={p['n']} t={p['t']}: {p['errors']} bad bytes")
    if "--no-plots" not in sys.argv:
        plots(points, folder)
        print(f"plots written to {folder}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
