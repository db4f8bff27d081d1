#!/usr/bin/env bash
# The interposer's symbol list (src/preload/symbols.txt) against what the
# library exports and what libc defines:
#   preload_symbols_test.sh SYMBOLS_TXT LIBSLUICE_PRELOAD_SO
set -euo pipefail
list=$1 lib=$2
libc=$(ldd /bin/true | awk '/libc\.so/ {print $3}')
section() {  # the names in one [section] of the list
  awk -v want="[$1]" '/^\[/ {on = ($0 == want); next} on && !/^#/ && NF {print $1}' "$list" | sort -u
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
section interposed > "$tmp/interposed"
section cookie > "$tmp/served"
nm -D --defined-only "$lib" | awk '$2 == "T" || $2 == "W" || $2 == "i" {print $3}' |
  sed 's/@.*//' | sort -u > "$tmp/exported"
nm -D "$libc" | awk '{print $NF}' | sed 's/@.*//' | sort -u > "$tmp/libc"
fail=0
if [ "$(wc -l < "$tmp/interposed")" -lt 100 ]; then
  echo "FAIL: the [interposed] section of $list is nearly empty"; fail=1
fi
missing=$(comm -23 "$tmp/interposed" "$tmp/exported")
[ -z "$missing" ] || { echo "FAIL: listed but not exported by $lib:" $missing; fail=1; }
extra=$(comm -13 "$tmp/interposed" "$tmp/exported")
[ -z "$extra" ] || { echo "FAIL: exported by $lib but not listed:" $extra; fail=1; }
notlibc=$(comm -23 <(sort -u "$tmp/interposed" "$tmp/served") "$tmp/libc")
[ -z "$notlibc" ] || { echo "FAIL: listed but not in $libc:" $notlibc; fail=1; }
both=$(comm -12 "$tmp/served" "$tmp/exported")
[ -z "$both" ] || { echo "FAIL: said to need no wrapper but exported:" $both; fail=1; }
[ $fail = 0 ] && echo "ok: $(wc -l < "$tmp/interposed") interposed symbols, $(wc -l < "$tmp/served") served without a wrapper"
exit $fail
