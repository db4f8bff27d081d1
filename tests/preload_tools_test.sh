#!/usr/bin/env bash
# bench/preload_tools.sh, small: every tool on both sides, under each
# --evict mode, must finish with its own checks passed (md5sum prints the
# input's digest, every copy has the input's size, the stored input reads
# back identical) and print a RESULT line per tool. With --evict data the
# eviction is checked: a dd that drops nothing must stop the run. With
# --evict rewarm each timed command is preceded by its untimed warm run
# (counted in the output).
#   preload_tools_test.sh WORK LIBSLUICE_PRELOAD_SO
set -uo pipefail
work=$1 lib=$(realpath "$2")
script=$(cd "$(dirname "$0")/.." && pwd)/bench/preload_tools.sh
tools=stat,cat,md5sum,cp,cp-out,cp-in
rm -rf "$work"
mkdir -p "$work"
fail=0

run() {  # run NAME ARGS...: the script in WORK/NAME; its output in WORK/NAME.out
  local name=$1; shift
  "$script" --size 4m --reps 2 --lib "$lib" --dir "$work/$name" "$@" \
    > "$work/$name.out" 2>&1
}

for evict in all data rewarm; do
  if [ $evict != data ] && ! [ -w /proc/sys/vm/drop_caches ]; then
    if [ $evict = all ]; then
      echo "note: /proc/sys/vm/drop_caches is not writable; --evict all runs warm"
    else  # rewarm cannot run warm: it must say so
      if run $evict --evict $evict --tools cat; then
        echo "FAIL: --evict rewarm ran without a writable drop_caches"; fail=1
      elif ! grep -q 'needs a writable /proc/sys/vm/drop_caches' "$work/$evict.out"; then
        echo "FAIL: --evict rewarm: no clear error:"; tail -3 "$work/$evict.out"; fail=1
      fi
      continue
    fi
  fi
  if ! run "$evict" --evict $evict --tools $tools; then
    echo "FAIL: --evict $evict exited non-zero:"; tail -20 "$work/$evict.out"
    fail=1
    continue
  fi
  for t in ${tools//,/ }; do
    if ! grep -q "^RESULT tool=$t .*evict=$evict warm_memory=12582912\$" "$work/$evict.out"; then
      echo "FAIL: --evict $evict printed no RESULT line for $t"; fail=1
    fi
  done
  if [ $evict = rewarm ]; then
    n=$(grep -c '(after its warm run)$' "$work/$evict.out")
    if [ "$n" != 24 ]; then  # 6 tools, 2 repetitions, 2 sides
      echo "FAIL: --evict rewarm: $n of 24 timed runs after a warm run"; fail=1
    fi
  fi
  if ! grep -q '^# memory:  12582912 bytes' "$work/$evict.out"; then
    echo "FAIL: --evict $evict did not say how much memory it warms (3 x 4 MiB)"; fail=1
  fi
  if ! grep -q '^# caches: ' "$work/$evict.out"; then
    echo "FAIL: --evict $evict did not say what leaves the cache"; fail=1
  fi
  # Warnings other than the one about an unwritable drop_caches (noted above).
  if grep WARNING "$work/$evict.out" | grep -v 'cannot write /proc/sys/vm/drop_caches' > /dev/null; then
    echo "FAIL: --evict $evict warned:"; grep -A3 WARNING "$work/$evict.out"
    fail=1
  fi
done

# An eviction that drops nothing is caught, not timed warm.
mkdir -p "$work/fakebin"
printf '#!/bin/sh\nexit 0\n' > "$work/fakebin/dd"
chmod +x "$work/fakebin/dd"
if PATH=$work/fakebin:$PATH run noevict --evict data --tools cat; then
  echo "FAIL: --evict data ran with a dd that drops nothing"; fail=1
elif ! grep -q 'still cached after eviction' "$work/noevict.out"; then
  echo "FAIL: --evict data stopped, but not for the cached data:"
  tail -5 "$work/noevict.out"; fail=1
fi

# The table of the runs above: a row per file, a pooled row per mode.
table=$(cd "$(dirname "$0")/.." && pwd)/bench/preload_tools_table.py
outs=()
for evict in all data rewarm; do
  grep -q '^RESULT ' "$work/$evict.out" 2>/dev/null && outs+=("$work/$evict.out")
done
if ! python3 "$table" "${outs[@]}" > "$work/table.md" 2>&1; then
  echo "FAIL: preload_tools_table.py exited non-zero:"; cat "$work/table.md"; fail=1
else
  for evict in all data; do
    grep -q "^| \`$evict.out\` | $evict | " "$work/table.md" ||
      { echo "FAIL: no table row for $evict.out"; cat "$work/table.md"; fail=1; }
    grep -q "^| $evict | [0-9.]* / [0-9.]* = [0-9.]* |" "$work/table.md" ||
      { echo "FAIL: no pooled row for $evict"; cat "$work/table.md"; fail=1; }
  done
fi
if python3 "$table" "$work/noevict.out" > /dev/null 2>&1; then
  echo "FAIL: preload_tools_table.py accepted a file without RESULT lines"; fail=1
fi

if run badwarm --warm-memory lots; then
  echo "FAIL: --warm-memory lots was accepted"; fail=1
elif ! grep -q "bad --warm-memory 'lots'" "$work/badwarm.out"; then
  echo "FAIL: --warm-memory lots: no clear error:"; cat "$work/badwarm.out"; fail=1
fi

if run badevict --evict some; then
  echo "FAIL: --evict some was accepted"; fail=1
elif ! grep -q "bad --evict 'some'" "$work/badevict.out"; then
  echo "FAIL: --evict some: no clear error:"; cat "$work/badevict.out"; fail=1
fi

[ $fail = 0 ] && echo "preload_tools: all checks passed" && rm -rf "$work"
exit $fail
