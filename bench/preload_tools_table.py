#!/usr/bin/env python3
"""Tables of bench/preload_tools.sh outputs, for docs/BENCHMARKS.md.

  bench/preload_tools_table.py FILE...

One row per file (stored/plain ratio of the medians per tool, and the
`stat` medians in ms, plain / stored), then, per --evict mode, the ratio of
the medians of every repetition of the files of that mode pooled.
"""
import re
import statistics
import sys

TOOLS = ["cat", "md5sum", "cp", "cp-out", "cp-in"]


def parse(path):
    """{tool: (plain_s list, stored_s list)}, evict mode."""
    runs, evict = {}, "?"
    with open(path) as f:
        for line in f:
            if not line.startswith("RESULT "):
                continue
            kv = dict(re.findall(r"(\w+)=(\S+)", line))
            evict = kv.get("evict", evict)
            runs[kv["tool"]] = ([float(x) for x in kv["plain_s"].split(",")],
                                [float(x) for x in kv["stored_s"].split(",")])
    return runs, evict


def ratio(p, s):
    return statistics.median(s) / statistics.median(p)


def main(files):
    if not files or files[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if files else 2
    pooled = {}
    print("| file | evict | stat (ms) | " + " | ".join(TOOLS) + " |")
    print("|---|---|---|" + "---|" * len(TOOLS))
    for path in files:
        runs, evict = parse(path)
        if not runs:
            print(f"{path}: no RESULT lines", file=sys.stderr)
            return 1
        cells = []
        for t in TOOLS:
            if t in runs:
                cells.append(f"{ratio(*runs[t]):.2f}")
                pp, ps = pooled.setdefault((evict, t), ([], []))
                pp += runs[t][0]
                ps += runs[t][1]
            else:
                cells.append("–")
        st = runs.get("stat")
        stat = (f"{statistics.median(st[0]) * 1e3:.0f} / "
                f"{statistics.median(st[1]) * 1e3:.0f}") if st else "–"
        name = path.rsplit("/", 1)[-1]
        print(f"| `{name}` | {evict} | {stat} | " + " | ".join(cells) + " |")
    print()
    print("| evict (pooled) | " + " | ".join(TOOLS) + " |")
    print("|---|" + "---|" * len(TOOLS))
    for evict in sorted({e for e, _ in pooled}):
        cells = []
        for t in TOOLS:
            if (evict, t) in pooled:
                p, s = pooled[(evict, t)]
                cells.append(f"{statistics.median(s):.3f} / "
                             f"{statistics.median(p):.3f} = {ratio(p, s):.2f}")
            else:
                cells.append("–")
        print(f"| {evict} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
