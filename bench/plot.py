#!/usr/bin/env python3
"""Tables and plots from sluice-bench JSON summaries.

  bench/plot.py PATH... [--out DIR] [--no-plots]

PATH is a JSON summary of sluice-bench (-O summaryFormat=JSON -O
summaryFile=FILE), under any name, or a folder of them (bench/matrix's
results). Every test of every file is a point, whose API, ranks, transfer
size, pattern (sequential, or random with -z) and file per process (-F)
come from the JSON itself. A file named as bench/matrix names them
(A-label-seq-n4-t1m.json) also gives the point its part (A or B) and, for
a file of one test, the matrix's label (e.g. SLUICE-KV-LSM; elsewhere the
label is the API, -FPP with -F, and the store options in brackets). Points
of the same part, label, pattern, ranks, transfer and test directory pool
their repetitions (the table names the directory when there are several).
Files that are not sluice-bench JSON are skipped, with a note.

Writes into DIR (default: the folder given, else the first file's folder):
  table.md               every point: median write/read MiB/s over the pooled
                         repetitions, as fractions of DEVICE-LIMIT (the
                         device's physical limit) and of FIO-SYNC (fio, one
                         synchronous job per rank at the transfer size) of the
                         same part, ranks, transfer size and directory, peak RSS per
                         rank, CPU seconds per GiB written
  A-bw-<xfer>.png        Part A: bandwidth vs ranks, one line per API
                         (LSMIO Figs. 5-10); bw-<xfer>.png for points with
                         no part
  B-bw-n<ranks>.png      Part B: bandwidth vs transfer size, sequential and
                         random (IME)
  latency-<name>.png     density of per-transfer durations, one curve per API
                         (IME Fig. 6), from the *.lat.csv files named as
                         bench/matrix names them
  pivot.md               the same medians with a column per rank count (a
                         row per part, API, transfer size and pattern), as
                         fractions of DEVICE-LIMIT too
and prints table.md, which ends with a reading of it: for each transfer
size and pattern at the largest rank count, the device's limit, the
fastest API and Sluice's fastest against the limit and the best of the
others. --no-plots: the table only (no matplotlib needed).
"""
import glob
import json
import os
import re
import statistics
import sys
from collections import defaultdict

NAME = re.compile(r"^(?P<part>[ABC])-(?P<label>.+?)(?:-(?P<pat>seq|rand))?"
                  r"-n(?P<n>\d+)-t(?P<t>\d+[km])$")
KIB, MIB = 1 << 10, 1 << 20
DEVICE, SYNC = "DEVICE-LIMIT", "FIO-SYNC"
# FIO-SYNC was called FIO-LIMIT in older results.
RENAMED = {"FIO-LIMIT": SYNC}


def xfer_bytes(t):
    return int(t[:-1]) * (KIB if t[-1] == "k" else MIB)


def size_name(b):
    if b % MIB == 0:
        return f"{b // MIB}m"
    return f"{b // KIB}k" if b % KIB == 0 else f"{b}b"


def is_fio(label):
    return label.startswith("FIO-") or label == DEVICE


def json_label(api, opts):
    """The label of a test of a file not named by bench/matrix."""
    if is_fio(api):
        return api
    label = api + ("-FPP" if opts.get("filePerProc") else "")
    store = opts.get("storeOptions") or {}
    if store and api.startswith("SLUICE-"):
        label += "[" + ",".join(f"{k}={v}" for k, v in sorted(store.items())) + "]"
    return label


def json_files(paths):
    files = []
    for path in paths:
        if os.path.isdir(path):
            files += sorted(glob.glob(os.path.join(path, "*.json")))
        else:
            files.append(path)
    return files


def read_points(path):
    """The points of one file, or None when it is not sluice-bench JSON."""
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        print(f"plot.py: skipped {path}: {e}", file=sys.stderr)
        return None
    if not isinstance(doc, dict) or not isinstance(doc.get("tests"), list) \
            or not isinstance(doc.get("options"), dict):
        print(f"plot.py: skipped {path}: not a sluice-bench JSON summary",
              file=sys.stderr)
        return None
    opts = doc["options"]
    m = NAME.match(os.path.basename(path)[:-5]) if path.endswith(".json") else None
    # The point's parameters from the JSON; by name for files without them.
    if all(k in opts for k in ("tasks", "transferSize")):
        n, t = opts["tasks"], opts["transferSize"]
        random = bool(opts.get("randomOffset"))
    elif m:
        n, t, random = int(m["n"]), xfer_bytes(m["t"]), m["pat"] == "rand"
    else:
        print(f"plot.py: skipped {path}: its options lack tasks and "
              "transferSize, and its name is not bench/matrix's", file=sys.stderr)
        return None
    points = []
    for test in doc["tests"]:
        api = RENAMED.get(test["api"], test["api"])
        if m and len(doc["tests"]) == 1:
            label = RENAMED.get(m["label"], m["label"])
        else:
            label = json_label(api, opts)
        p = dict(part=m["part"] if m else "", label=label,
                 dir=os.path.dirname(opts.get("testFileName", "")),
                 pattern="rand" if random and not is_fio(api) else "seq",
                 n=n, t=t, skipped=test["skipped"], rss=test["peakRssMiB"],
                 cpu=test["cpuSecondsPerGiBWritten"], errors=test["dataErrors"])
        for op in ("write", "read"):
            p[op] = [r["bwMiB"] for r in test["results"] if r["access"] == op]
        points.append(p)
    return points


def load(paths):
    """Points pooled by (part, label, pattern, ranks, transfer, directory)."""
    pooled = {}
    for path in json_files(paths):
        for p in read_points(path) or []:
            key = (p["part"], p["label"], p["pattern"], p["n"], p["t"], p["dir"])
            q = pooled.setdefault(key, dict(p, write=[], read=[], rss=0, cpu=[],
                                            errors=0, skipped=None, ran=False))
            if p["skipped"]:
                q["skipped"] = q["skipped"] or p["skipped"]
                continue
            q["ran"] = True
            q["write"] += p["write"]
            q["read"] += p["read"]
            q["rss"] = max(q["rss"], p["rss"])
            q["cpu"].append(p["cpu"])
            q["errors"] += p["errors"]
    points = []
    for q in pooled.values():
        if q["ran"]:
            q["skipped"] = None
        for op in ("write", "read"):
            bws = q[op]
            q[op + "_reps"] = len(bws)
            q[op] = statistics.median(bws) if bws else None
        q["cpu"] = statistics.median(q["cpu"]) if q["cpu"] else None
        points.append(q)
    return points


def point_of(p):
    """What a row is compared on with DEVICE-LIMIT and FIO-SYNC."""
    return p["part"], p["n"], p["t"], p["dir"]


def references(points, label):
    return {point_of(p): (p["write"], p["read"])
            for p in points if p["label"] == label and not p["skipped"]}


def fmt(v, spec="{:.0f}"):
    return "-" if v is None else spec.format(v)


def fraction(v, ref):
    return v / ref if v is not None and ref else None


def table(points):
    dev, sync = references(points, DEVICE), references(points, SYNC)
    dirs = len({p["dir"] for p in points}) > 1
    rows = ["| part " + ("| directory " if dirs else "") +
            "| API | pattern | ranks | transfer | write MiB/s | read MiB/s "
            "| write / device | read / device | write / fio-sync | read / fio-sync "
            "| peak RSS MiB/rank | CPU s/GiB written |",
            "|---|" + ("---|" if dirs else "") +
            "---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    key = lambda p: (p["part"], p["dir"], p["t"], p["n"], p["pattern"],
                     not is_fio(p["label"]), {DEVICE: 0, SYNC: 1}.get(p["label"], 2),
                     p["label"])
    for p in sorted(points, key=key):
        where = f"| {p['part'] or '-'} " + (f"| {p['dir']} " if dirs else "") + \
                f"| {p['label']} | {p['pattern']} | {p['n']} | {size_name(p['t'])} "
        if p["skipped"]:
            rows.append(where + f"| skipped: {p['skipped']} | | | | | | | |")
            continue
        point = point_of(p)
        dw, dr = dev.get(point, (None, None)) if p["label"] != DEVICE else (None, None)
        sw, sr = sync.get(point, (None, None)) \
            if p["label"] not in (DEVICE, SYNC) else (None, None)
        res = not is_fio(p["label"])
        rows.append(
            where + f"| {fmt(p['write'])} | {fmt(p['read'])} "
            f"| {fmt(fraction(p['write'], dw), '{:.2f}')} "
            f"| {fmt(fraction(p['read'], dr), '{:.2f}')} "
            f"| {fmt(fraction(p['write'], sw), '{:.2f}')} "
            f"| {fmt(fraction(p['read'], sr), '{:.2f}')} "
            f"| {fmt(p['rss'] if res else None, '{:.0f}')} "
            f"| {fmt(p['cpu'] if res else None, '{:.2f}')} |")
    return "\n".join(rows) + "\n"


def pivot(points):
    """The table's points with a column per rank count: a row per part,
    API, transfer and pattern, each cell write / read MiB/s and, below,
    each as a fraction of DEVICE-LIMIT at that point; then the range of
    peak RSS and CPU per GiB over the row's cells."""
    dev = references(points, DEVICE)
    ran = [p for p in points if not p["skipped"] and not is_fio(p["label"])]
    out = []
    for part in sorted({p["part"] for p in ran}):
        pts = [p for p in ran if p["part"] == part]
        ranks = sorted({p["n"] for p in pts})
        rows = defaultdict(dict)
        for p in pts:
            rows[(p["t"], p["pattern"], p["dir"], p["label"])][p["n"]] = p
        out.append(f"{'Part ' + part if part else 'Points'}: write / read MiB/s, "
                   "and under them each as a fraction of DEVICE-LIMIT at the "
                   "same ranks and transfer size\n")
        out.append("| API | transfer | pattern | " +
                   " | ".join(f"{n} rank{'s' if n > 1 else ''}" for n in ranks) +
                   " | peak RSS MiB/rank | CPU s/GiB written |")
        out.append("|---|---:|---|" + "---:|" * len(ranks) + "---:|---:|")
        def span(vs, spec):
            vs = [v for v in vs if v is not None]
            if not vs:
                return "-"
            lo, hi = spec.format(min(vs)), spec.format(max(vs))
            return lo if lo == hi else f"{lo}–{hi}"
        for (t, pattern, _, label), by_n in sorted(
                rows.items(), key=lambda kv: (kv[0][0], kv[0][1] != "seq", kv[0][2],
                                              not kv[0][3].startswith("SLUICE"),
                                              kv[0][3])):
            cells = []
            for n in ranks:
                p = by_n.get(n)
                if p is None:
                    cells.append("")
                    continue
                dw, dr = dev.get(point_of(p), (None, None))
                cells.append(f"{fmt(p['write'])} / {fmt(p['read'])}<br>"
                             f"{fmt(fraction(p['write'], dw), '{:.2f}')} / "
                             f"{fmt(fraction(p['read'], dr), '{:.2f}')}")
            res = [by_n[n] for n in by_n]
            out.append(f"| {label} | {size_name(t)} | {pattern} | " +
                       " | ".join(cells) +
                       f" | {span([p['rss'] for p in res], '{:.0f}')}"
                       f" | {span([p['cpu'] for p in res], '{:.2f}')} |")
        out.append("")
    return "\n".join(out)


BASELINES = ("POSIX", "POSIX-FPP", "MPIIO", "HDF5", "ADIOS2")


def reading(points):
    """A paragraph per group of points (part, transfer, pattern, directory)
    at its largest rank count: the device's limit, the fastest API, Sluice's
    fastest as a fraction of the limit and against the best baseline."""
    groups = defaultdict(list)
    for p in points:
        if not p["skipped"]:
            groups[(p["part"], p["t"], p["pattern"], p["dir"])].append(p)
    out = []
    for (part, t, pattern, _), ps in sorted(groups.items(),
                                             key=lambda kv: (kv[0][0] or "",
                                                             kv[0][1], kv[0][2])):
        n = max(p["n"] for p in ps)
        at = [p for p in ps if p["n"] == n]
        dev = next((p for p in at if p["label"] == DEVICE), None)
        apis = [p for p in at if not is_fio(p["label"])]
        if not apis:
            continue
        where = (f"{n} rank{'s' if n > 1 else ''}, {size_name(t)} transfers"
                 + (", random offsets" if pattern == "rand" else "")
                 + (f" (part {part})" if part else ""))
        parts = []
        for op in ("write", "read"):
            have = [p for p in apis if p[op] is not None]
            if not have:
                continue
            limit = dev[op] if dev and dev[op] else None
            def rel(v):
                return f" = {v / limit:.2f} of the device" if limit else ""
            best = max(have, key=lambda p: p[op])
            sluice = [p for p in have if p["label"].startswith("SLUICE")]
            base = [p for p in have if p["label"] in BASELINES]
            s = f"{op}s: the fastest was {best['label']} at {best[op]:.0f} MiB/s{rel(best[op])}"
            if sluice and best not in sluice:
                sb = max(sluice, key=lambda p: p[op])
                s += f"; Sluice's fastest {sb['label']} at {sb[op]:.0f}{rel(sb[op])}"
            if sluice and base:
                sb = max(sluice, key=lambda p: p[op])
                bb = max(base, key=lambda p: p[op])
                s += (f", {sb[op] / bb[op]:.2f}x the best of the others "
                      f"({bb['label']}, {bb[op]:.0f})")
            parts.append(s)
        lim = (f"The device's limit (DEVICE-LIMIT: fio, libaio, a queue of 32) "
               f"was {dev['write']:.0f} MiB/s write and {dev['read']:.0f} read. "
               if dev and dev["write"] and dev["read"] else
               "DEVICE-LIMIT was not measured. ")
        said = "; ".join(parts)
        out.append(f"- **{where}**: {lim}" + said[:1].upper() + said[1:] + ".")
    if not out:
        return ""
    return ("\n**Reading** (medians of the repetitions; one run on a shared "
            "machine varies: compare within a run, as ratios):\n\n"
            + "\n".join(out) + "\n")


REF_STYLE = {DEVICE: dict(color="black", linestyle="-", linewidth=2),
             SYNC: dict(color="black", linestyle="--")}
REF_NAME = {DEVICE: "DEVICE-LIMIT (device)", SYNC: "FIO-SYNC (fio, sync, per rank)"}


def legend(fig, axes):
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="center right", fontsize=8)
    fig.tight_layout(rect=(0, 0, 0.82, 1))


def plot_vs_ranks(plt, points, folder, prefix):
    dirs = len({p["dir"] for p in points}) > 1
    for t in sorted({p["t"] for p in points}):
        fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
        for ax, op in zip(axes, ("write", "read")):
            for label in sorted({p["label"] for p in points}):
                pts = sorted((p for p in points if p["t"] == t and p["label"] == label
                              and p[op] is not None), key=lambda p: p["n"])
                for pat, where in sorted({(p["pattern"], p["dir"]) for p in pts}):
                    xs = [p for p in pts if p["pattern"] == pat and p["dir"] == where]
                    name = REF_NAME.get(label, label + (" random" if pat == "rand" else ""))
                    name += f" in {where}" if dirs else ""
                    style = dict(REF_STYLE.get(label, {}))
                    if dirs:
                        style.pop("color", None)
                    ax.plot([p["n"] for p in xs], [p[op] for p in xs], marker="o",
                            label=name, **style)
            ranks = sorted({p["n"] for p in points})
            ax.set_xscale("log", base=2)
            ax.set_xticks(ranks)
            ax.set_xticklabels([str(n) for n in ranks])
            ax.set_xlabel("ranks")
            ax.set_ylabel("MiB/s (median)")
            ax.set_title(f"{op}, transfer {size_name(t)}")
            ax.grid(True, alpha=0.3)
        legend(fig, axes)
        fig.savefig(os.path.join(folder, f"{prefix}bw-{size_name(t)}.png"), dpi=110)
        plt.close(fig)


def plot_vs_transfer(plt, points, folder):
    for n in sorted({p["n"] for p in points}):
        fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
        apis = sorted({p["label"] for p in points} - set(REF_STYLE))
        # One color per API, the same for its sequential (solid) and random
        # (dotted) lines.
        colors = {label: plt.get_cmap("tab10")(i % 10) for i, label in enumerate(apis)}
        for ax, op in zip(axes, ("write", "read")):
            for label in sorted({p["label"] for p in points}):
                for pat in ("seq", "rand"):
                    pts = sorted((p for p in points if p["n"] == n and p["label"] == label
                                  and p["pattern"] == pat and p[op] is not None),
                                 key=lambda p: p["t"])
                    if not pts:
                        continue
                    style = REF_STYLE.get(label, dict(linestyle="-" if pat == "seq" else ":",
                                                      color=colors.get(label)))
                    ax.plot([p["t"] / KIB for p in pts], [p[op] for p in pts],
                            marker="o" if pat == "seq" else "s",
                            label=REF_NAME.get(label, f"{label} {pat}"), **style)
            ax.set_xscale("log")
            ax.set_xlabel("transfer size (KiB)")
            ax.set_ylabel("MiB/s (median)")
            ax.set_title(f"{op}, {n} rank(s), sequential vs random (-z)")
            ax.grid(True, alpha=0.3)
        legend(fig, axes)
        fig.savefig(os.path.join(folder, f"B-bw-n{n}.png"), dpi=110)
        plt.close(fig)


def plots(points, folders, out):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ran = [p for p in points if not p["skipped"]]
    for part, prefix in (("A", "A-"), ("", "")):
        pts = [p for p in ran if p["part"] == part]
        if pts:
            plot_vs_ranks(plt, pts, out, prefix)
    b = [p for p in ran if p["part"] == "B"]
    if b:
        plot_vs_transfer(plt, b, out)
    for folder in folders:
        latency_plots(folder, out, plt)


def latency_plots(folder, out, plt):
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
        fig.savefig(os.path.join(out, f"latency-n{n}-t{t}.png"), dpi=110)
        plt.close(fig)


def main():
    argv = sys.argv[1:]
    if "-h" in argv or "--help" in argv:
        print(__doc__)
        return 0
    out, paths, no_plots = None, [], False
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--no-plots":
            no_plots = True
        elif a == "--out" and i + 1 < len(argv):
            out = argv[i + 1]
            i += 1
        elif a.startswith("--out="):
            out = a[len("--out="):]
        elif a.startswith("-"):
            print(f"plot.py: unknown option {a}\n{__doc__}", file=sys.stderr)
            return 2
        else:
            paths.append(a)
        i += 1
    if not paths:
        print(__doc__, file=sys.stderr)
        return 2
    for path in paths:
        if not os.path.exists(path):
            print(f"plot.py: {path}: no such file or folder", file=sys.stderr)
            return 2
    folders = [p for p in paths if os.path.isdir(p)]
    if out is None:
        out = paths[0] if os.path.isdir(paths[0]) else os.path.dirname(paths[0]) or "."
    points = load(paths)
    if not points:
        print(f"plot.py: no sluice-bench JSON in {' '.join(paths)}", file=sys.stderr)
        return 1
    os.makedirs(out, exist_ok=True)
    md = table(points) + reading(points)
    with open(os.path.join(out, "table.md"), "w") as f:
        f.write(md)
    with open(os.path.join(out, "pivot.md"), "w") as f:
        f.write(pivot(points))
    print(md)
    bad = [p for p in points if p["errors"]]
    for p in bad:
        print(f"DATA ERRORS: {p['label']} n={p['n']} t={size_name(p['t'])}: "
              f"{p['errors']} bad bytes")
    if not no_plots:
        plots(points, folders, out)
        print(f"plots written to {out}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
