#!/usr/bin/env bash
# bench/plot.py reads any sluice-bench JSON: a tiny run's summary under a
# name of the user's (not bench/matrix's), alone, in a folder beside a JSON
# file that is not sluice-bench's, and with another run pooled in; and
# still the folders of older matrix runs, named by bench/matrix, whose
# FIO-LIMIT is FIO-SYNC. No plotting libraries needed (--no-plots).
# Usage: bench_plot_test.sh WORKDIR MPIEXEC NPFLAG BENCH PLOT_PY OLD_MATRIX_DIR [PREFLAGS...]
set -u
work=$1 mpiexec=$2 npflag=$3 bench=$4 plot=$5 old=$6
shift 6
source "$(dirname "$0")/bench_test_lib.sh" "$@"
mkdir -p "$work/runs"

json="$work/runs/my checkpoint run.json"
run 2 -a POSIX,SLUICE-KV -b 2m -t 256k -s 2 -i 2 -e -o "$work/f" \
  -O summaryFormat=JSON -O summaryFile="$json" >"$work/run.txt" 2>&1 || { cat "$work/run.txt"; exit 1; }

# The table of one file: a row per API with the run's ranks, transfer size
# and the median of its repetitions.
python3 "$plot" "$json" --no-plots --out "$work/out1" >"$work/t1.txt" 2>&1 || { fail "plot.py on a file"; cat "$work/t1.txt"; }
[ -s "$work/out1/table.md" ] || fail "no table.md in --out"
check() {  # check TABLE JSON...: every test of the JSON files is a row
  python3 - "$@" <<'PY'
import json, statistics, sys
rows = {}
for l in open(sys.argv[1]):
    c = [x.strip() for x in l.strip().strip("|").split("|")]
    if len(c) >= 7 and c[0] in ("-", "A", "B"):
        rows[c[1]] = c
bws = {}
for path in sys.argv[2:]:
    doc = json.load(open(path))
    for t in doc["tests"]:
        for r in t["results"]:
            bws.setdefault((t["api"], r["access"]), []).append(r["bwMiB"])
bad = []
for api in sorted({a for a, _ in bws}):
    c = rows.get(api)
    if c is None:
        bad.append(f"no row for {api} in {sorted(rows)}")
        continue
    if c[2:5] != ["seq", "2", "256k"]:
        bad.append(f"{api}: pattern, ranks, transfer {c[2:5]}, want seq 2 256k")
    for col, op in ((5, "write"), (6, "read")):
        want = statistics.median(bws[(api, op)])
        if abs(float(c[col]) - want) > 0.51:
            bad.append(f"{api} {op}: table {c[col]}, median of the JSON {want:.1f}")
for b in bad:
    print("plot table:", b)
sys.exit(1 if bad else 0)
PY
}
check "$work/t1.txt" "$json" || fail "table of one file"
# pivot.md: the same medians, a column per rank count.
python3 - "$work/out1/pivot.md" "$work/t1.txt" <<'PY' || fail "pivot.md"
import sys
pivot, table = open(sys.argv[1]).read(), open(sys.argv[2]).read()
want = {}
for l in table.splitlines():
    c = [x.strip() for x in l.strip().strip("|").split("|")]
    if len(c) > 7 and c[1] in ("POSIX", "SLUICE-KV"):
        want[c[1]] = f"{c[5]} / {c[6]}"
assert "| 2 ranks |" in pivot, pivot
got = {}
for l in pivot.splitlines():
    c = [x.strip() for x in l.strip().strip("|").split("|")]
    if len(c) > 3 and c[0] in ("POSIX", "SLUICE-KV"):
        assert c[1:3] == ["256k", "seq"], c
        got[c[0]] = c[3].split("<br>")[0]
assert got == want and len(got) == 2, (got, want)
PY
# The reading under the table: at 2 ranks and 256 KiB, Sluice's write and
# read against POSIX's, as the table's figures give them.
python3 - "$work/t1.txt" <<'PY' || fail "the reading under the table"
import re, sys
text = open(sys.argv[1]).read()
assert "**Reading**" in text, "no reading"
line = next(l for l in text.splitlines() if l.startswith("- **2 ranks, 256k transfers"))
assert "DEVICE-LIMIT was not measured" in line, line
rows = {}
for l in text.splitlines():
    c = [x.strip() for x in l.split("|")]
    if len(c) > 8 and c[2] in ("POSIX", "SLUICE-KV"):
        rows[c[2]] = (float(c[6]), float(c[7]))
for op, i in (("Writes", 0), ("Reads", 1)):
    part = line[line.lower().index(op.lower()):]
    m = re.search(r"([0-9.]+)x the best of the others \(POSIX, ([0-9]+)\)", part)
    assert m, (op, line)
    want = rows["SLUICE-KV"][i] / rows["POSIX"][i]
    assert abs(float(m.group(1)) - want) < 0.011, (op, m.group(1), want)
    assert abs(float(m.group(2)) - rows["POSIX"][i]) < 1, (op, m.group(2))
PY

# A folder holding it and a JSON file of something else: the other file is
# skipped with a note, the table is the same.
echo '{"jobs": []}' >"$work/runs/fio.json"
python3 "$plot" "$work/runs" --no-plots --out "$work/out2" >"$work/t2.txt" 2>"$work/t2.err" || { fail "plot.py on a folder"; cat "$work/t2.txt" "$work/t2.err"; }
grep -q "skipped .*fio.json: not a sluice-bench JSON summary" "$work/t2.err" || fail "no note for the other JSON file"
check "$work/t2.txt" "$json" || fail "table of a folder"

# Two runs of the same APIs: one row each, their repetitions pooled.
run 2 -a POSIX,SLUICE-KV -b 2m -t 256k -s 2 -i 1 -e -o "$work/f" \
  -O summaryFormat=JSON -O summaryFile="$work/second.json" >"$work/run2.txt" 2>&1 || { fail "second run"; cat "$work/run2.txt"; }
python3 "$plot" "$json" "$work/second.json" --no-plots --out "$work/out3" >"$work/t3.txt" 2>&1 || fail "plot.py on two files"
[ "$(grep -c '| POSIX |' "$work/t3.txt")" = 1 ] || fail "two runs of POSIX are not one row"
check "$work/t3.txt" "$json" "$work/second.json" || fail "table of two files pooled"

# Nothing to read: exit 1 and say so.
python3 "$plot" "$work/runs/fio.json" --no-plots --out "$work/out4" >"$work/t4.txt" 2>&1
[ $? -eq 1 ] && grep -q "no sluice-bench JSON" "$work/t4.txt" || fail "no sluice-bench JSON: exit 1 with a message"

# An older matrix folder, read by its names (written elsewhere with --out):
# FIO-LIMIT is FIO-SYNC and the APIs are fractions of it.
if [ -d "$old" ]; then
  python3 "$plot" "$old" --no-plots --out "$work/old" >"$work/t5.txt" 2>&1 || { fail "plot.py on $old"; tail "$work/t5.txt"; }
  grep -q "^| A | FIO-SYNC | seq | 4 | 1m | " "$work/t5.txt" || fail "$old: no FIO-SYNC row"
  grep -q "^| B | POSIX | rand | 4 | 16k | [0-9]* | [0-9]* | - | - | [0-9.]* | [0-9.]* |" "$work/t5.txt" ||
    fail "$old: no random POSIX row with its fractions of FIO-SYNC"
  grep -q "^| A | SLUICE-KV-LSM | " "$work/t5.txt" || fail "$old: the matrix's labels are not kept"
fi

[ $fails -ne 0 ] && cat "$work/t1.txt"
finish bench_plot_test
