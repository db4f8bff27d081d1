#!/usr/bin/env bash
# The interposer's symbol list (src/preload/symbols.txt) against what the
# library exports and what libc defines:
#   preload_symbols_test.sh SYMBOLS_TXT LIBSLUICE_PRELOAD_SO
# And every libc export that reads, writes, syncs, maps, sizes or locks
# through a descriptor (a curated pattern below, over the installed libc's
# own list) must be interposed or listed under [safe] with a reason: a call
# nobody wrapped would act on the placeholder instead of the stored file.
set -euo pipefail
list=$1 lib=$2
libc=$(ldd /bin/true | awk '/libc\.so/ {print $3}')
section() {  # the names in one [section] of the list
  awk -v want="[$1]" '/^\[/ {on = ($0 == want); next} on && !/^#/ && NF {print $1}' "$list" | sort -u
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
section interposed > "$tmp/interposed"
cat <(section cookie) <(section safe) | sort -u > "$tmp/served"
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
# Each [safe] line gives its reason after the name.
noreason=$(awk '/^\[/ {on = ($0 == "[safe]"); next} on && !/^#/ && NF == 1 {print $1}' "$list")
[ -z "$noreason" ] || { echo "FAIL: listed under [safe] without a reason:" $noreason; fail=1; }

# Descriptor I/O in libc: the base names, each also with a 64 and a v2
# form, a _chk or _nocancel tail and leading underscores (__read, preadv64v2,
# __pread64_chk).
io='read|write|pread|pwrite|readv|writev|preadv|pwritev|sendfile|copy_file_range|splice|tee|vmsplice'
io+='|fsync|fdatasync|sync_file_range|syncfs|ftruncate|fallocate|posix_fallocate|posix_fadvise|readahead'
io+='|aio_read|aio_write|aio_fsync|aio_cancel|lio_listio|mmap|getdents|getdirentries'
io+='|flock|lockf|fcntl|fchown|fchmod|futimens|fsetxattr|fgetxattr|flistxattr|fremovexattr'
nm -D --defined-only "$libc" | awk '{print $3}' | sed 's/@.*//' | sort -u |
  grep -E "^_*($io)(64)?(v?2)?(_chk|_nocancel)?\$" > "$tmp/io"
if [ "$(wc -l < "$tmp/io")" -lt 60 ]; then
  echo "FAIL: only $(wc -l < "$tmp/io") descriptor calls found in $libc"; fail=1
fi
unwrapped=$(comm -23 "$tmp/io" <(sort -u "$tmp/exported" "$tmp/served"))
[ -z "$unwrapped" ] || {
  echo "FAIL: libc calls that do I/O through a descriptor, neither interposed nor listed under [safe]:" $unwrapped
  fail=1
}
[ $fail = 0 ] && echo "ok: $(wc -l < "$tmp/interposed") interposed symbols, $(wc -l < "$tmp/served") served without a wrapper, $(wc -l < "$tmp/io") descriptor calls of libc covered"
exit $fail
