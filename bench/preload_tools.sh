#!/usr/bin/env bash
# Unmodified UNIX tools on one large file, on a plain directory and stored
# in Sluice through the LD_PRELOAD interposer (LDPLFS, Table II: cat,
# md5sum, cp). Prints a table that can be pasted into the docs as-is.
set -euo pipefail
export LC_ALL=C

usage() {
  cat <<'EOF'
Usage: bench/preload_tools.sh [options]

Times cat, md5sum and cp (+ sync of the copy) on one random file, on a plain
directory and stored in Sluice through the LD_PRELOAD interposer
(libsluice_preload.so), and prints medians and stored/plain ratios. cp is
timed three ways: within the store, and, as LDPLFS's Table II times it, out
of the store into the plain directory and into the store from it.

Options:
  --size N     file size: bytes, or with a suffix k, m, g, t (powers of
               1024; "KiB", "MB" etc. are read the same)          [1g]
  --reps N     repetitions per tool and side                      [5]
  --dir DIR    work directory (plain/, mnt/, root/, lib/ go in it)
                                              [/work/scratch/preload_tools]
  --lib PATH   libsluice_preload.so  [<repo>/build/libsluice_preload.so]
               (copied into DIR/lib first with the libsluice and backend
               modules beside it, so rebuilds do not disturb a run)
  --tools LIST comma-separated subset of the tools below, in that order
                                   [stat,cat,md5sum,cp,cp-out,cp-in]
  --evict WHAT what leaves the page cache before every timed command [all]
               all:    everything (sync; echo 3 > /proc/sys/vm/drop_caches):
                       the programs and their libraries are read from disk
                       too, RocksDB's (11 MB) among them on the stored side
               data:   only the files under DIR/plain and DIR/root (sync,
                       then fadvise DONTNEED on each; checked with fincore):
                       the data and the store are cold, the programs and
                       libraries stay cached, as on a node that has run them
               rewarm: everything, as with all; then the command about to
                       be timed runs once, untimed, on a 64 KiB file of its
                       own side elsewhere in DIR/warm (the stored side in a
                       store of its own), which reads its program and
                       libraries back: the data and the store are cold, the
                       programs cached, with the memory of a full drop
                       (checked with fincore, as with data)
  --warm-memory N
               bytes of memory faulted in and freed again (a file written
               to and removed from SHM) right before every timed command,
               so that neither side's page cache and buffers land on
               memory the VM has handed back to its host; 0: off
                                                        [3 x --size]
  --shm DIR    the tmpfs that --warm-memory writes to         [/dev/shm]
  --keep       leave DIR in place at the end
  -h, --help   this text

Per tool and repetition, the plain and stored runs alternate (plain first in
odd repetitions, stored first in even ones), each after the eviction that
--evict names (with --evict all, only if /proc/sys/vm/drop_caches is
writable) and then the memory warming of --warm-memory. Plain runs are not
under LD_PRELOAD.
  stat    stat F > /dev/null   (a process's fixed cost: loading the
                               interposer's libraries and opening the store)
  cat     cat F > /dev/null
  md5sum  md5sum F             (both sides must print the input's digest)
  cp      cp F G && sync G     (G beside F; removed after each run, untimed)
  cp-out  the same, stored F to G in the plain directory (plain side: as cp)
  cp-in   the same, plain F to G in the store            (plain side: as cp)
EOF
}

die() { echo "preload_tools: $*" >&2; exit 1; }

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
size_arg=1g reps=5 work=/work/scratch/preload_tools
lib_arg=$script_dir/../build/libsluice_preload.so keep=0 evict=all
warm_mem_arg="" shm=/dev/shm
tools_arg=stat,cat,md5sum,cp,cp-out,cp-in
cmdline=$(printf '%q ' "$0" "$@"); cmdline=${cmdline% }

while [ $# -gt 0 ]; do
  case $1 in
    -h|--help) usage; exit 0 ;;
    --size) [ $# -ge 2 ] || die "--size needs a value"; size_arg=$2; shift 2 ;;
    --size=*) size_arg=${1#*=}; shift ;;
    --reps) [ $# -ge 2 ] || die "--reps needs a value"; reps=$2; shift 2 ;;
    --reps=*) reps=${1#*=}; shift ;;
    --dir) [ $# -ge 2 ] || die "--dir needs a value"; work=$2; shift 2 ;;
    --dir=*) work=${1#*=}; shift ;;
    --lib) [ $# -ge 2 ] || die "--lib needs a value"; lib_arg=$2; shift 2 ;;
    --lib=*) lib_arg=${1#*=}; shift ;;
    --tools) [ $# -ge 2 ] || die "--tools needs a value"; tools_arg=$2; shift 2 ;;
    --tools=*) tools_arg=${1#*=}; shift ;;
    --evict) [ $# -ge 2 ] || die "--evict needs a value"; evict=$2; shift 2 ;;
    --evict=*) evict=${1#*=}; shift ;;
    --warm-memory) [ $# -ge 2 ] || die "--warm-memory needs a value"; warm_mem_arg=$2; shift 2 ;;
    --warm-memory=*) warm_mem_arg=${1#*=}; shift ;;
    --shm) [ $# -ge 2 ] || die "--shm needs a value"; shm=$2; shift 2 ;;
    --shm=*) shm=${1#*=}; shift ;;
    --keep) keep=1; shift ;;
    *) usage >&2; die "unknown argument: $1" ;;
  esac
done

# --- arguments -------------------------------------------------------------
parse_size() {
  local s=${1,,} num unit
  [[ $s =~ ^([0-9]+)([kmgt]?)(i?b)?$ ]] || return 1
  num=${BASH_REMATCH[1]} unit=${BASH_REMATCH[2]}
  case $unit in
    '') echo "$num" ;;
    k) echo $((num << 10)) ;;
    m) echo $((num << 20)) ;;
    g) echo $((num << 30)) ;;
    t) echo $((num << 40)) ;;
  esac
}
size=$(parse_size "$size_arg") || die "bad --size '$size_arg' (e.g. 1g, 256m, 1048576)"
[ "$size" -gt 0 ] || die "--size must be > 0"
[[ $reps =~ ^[0-9]+$ ]] && [ "$reps" -ge 1 ] || die "bad --reps '$reps'"
if [ -z "$warm_mem_arg" ]; then
  warm_mem=$((3 * size))
else
  warm_mem=$(parse_size "$warm_mem_arg") || die "bad --warm-memory '$warm_mem_arg' (e.g. 3g, 0)"
fi
if [ "$warm_mem" -gt 0 ]; then
  [ "$(df -PT "$shm" 2>/dev/null | awk 'NR==2 {print $2}')" = tmpfs ] \
    || die "--shm $shm is not a tmpfs (--warm-memory writes there; --warm-memory 0 turns it off)"
  shm_free=$(( $(df -Pk "$shm" | awk 'NR==2 {print $4}') * 1024 ))
  mem_avail=$(( $(awk '/^MemAvailable:/ {print $2}' /proc/meminfo) * 1024 ))
  [ "$warm_mem" -le "$shm_free" ] && [ $((2 * warm_mem)) -le "$mem_avail" ] \
    || die "--warm-memory $warm_mem bytes: $shm has $shm_free free and the machine $mem_avail available (at most half of it; pass a smaller --warm-memory, or 0)"
fi
tools=()
IFS=, read -ra _want <<< "$tools_arg"
[ ${#_want[@]} -gt 0 ] || die "--tools is empty"
for _t in "${_want[@]}"; do
  case $_t in
    stat|cat|md5sum|cp|cp-out|cp-in) tools+=("$_t") ;;
    *) die "unknown tool '$_t' in --tools (stat, cat, md5sum, cp, cp-out, cp-in)" ;;
  esac
done
case $evict in
  all|data|rewarm) ;;
  *) die "bad --evict '$evict' (all, data or rewarm)" ;;
esac
[ -f "$lib_arg" ] || die "no interposer library at $lib_arg (build it, or pass --lib)"
[ -n "$work" ] && [ "$work" != / ] || die "bad --dir '$work'"
mkdir -p "$work"
work=$(cd "$work" && pwd)

plain=$work/plain mnt=$work/mnt root=$work/root libdir=$work/lib logs=$work/logs
warm=$work/warm
F_plain=$plain/big.bin F_stored=$mnt/big.bin
G_plain=$plain/copy.bin G_stored=$mnt/copy.bin

cleanup() {
  local rc=$?
  if [ $keep = 1 ]; then
    echo "kept $work"
  else
    rm -rf "$plain" "$mnt" "$root" "$libdir" "$logs" "$warm"
    rmdir "$work" 2>/dev/null || true
  fi
  rm -f "${warm_file:-}"
  exit $rc
}
trap cleanup EXIT

# Leftovers of an earlier --keep run would be a stale store.
rm -rf "$plain" "$mnt" "$root" "$libdir" "$logs" "$warm"
mkdir -p "$plain" "$mnt" "$root" "$libdir" "$logs"
# The interposer finds libsluice and the backend modules beside itself
# ($ORIGIN): they are copied with it.
_libsrc=$(dirname "$lib_arg")
cp "$lib_arg" "$libdir/libsluice_preload.so"
for _l in "$_libsrc"/libsluice.so* "$_libsrc"/libsluice_rocksdb.so "$_libsrc"/libsluice_leveldb.so; do
  [ -e "$_l" ] && cp -P "$_l" "$libdir/"
done
lib=$libdir/libsluice_preload.so

# side plain|stored CMD...: runs CMD, under the interposer on the stored side
# (in the store side_root, mounted at side_mnt: the timed one unless told).
side() {
  local s=$1; shift
  if [ "$s" = stored ]; then
    LD_PRELOAD=$lib SLUICE_MOUNT=${side_mnt:-$mnt} SLUICE_ROOT=${side_root:-$root} "$@"
  else
    "$@"
  fi
}

human() { numfmt --to=iec-i --suffix=B --format=%.1f "$1" 2>/dev/null || echo "$1 B"; }

# --- header ----------------------------------------------------------------
echo "# preload_tools: unmodified tools, plain directory vs Sluice (LD_PRELOAD)"
echo "# command: $cmdline"
echo "# date:    $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
echo "# kernel:  $(uname -r)   nproc: $(nproc)   fs of $work: $(df -PT "$work" | awk 'NR==2 {print $2}')"
echo "# size:    $size bytes ($(human "$size"))   reps: $reps"
echo "# lib:     $(cd "$(dirname "$lib_arg")" && pwd)/$(basename "$lib_arg") ($(stat -c '%s bytes, mtime %y' "$lib_arg" | cut -d. -f1))"
if [ -d "$script_dir/../.git" ] && command -v git >/dev/null; then
  echo "# tree:    $(git -C "$script_dir/.." rev-parse --short HEAD 2>/dev/null || echo '?')$(git -C "$script_dir/.." status --porcelain --untracked-files=no 2>/dev/null | grep . > /dev/null && echo ' (modified)')"
fi

can_drop=1
if [ $evict != all ]; then
  command -v fincore >/dev/null || die "--evict $evict needs fincore (util-linux)"
fi
# check_cold: at most 1% of the input may be left in the page cache (the
# files under plain/ and root/ counted), or the timings would be warm.
check_cold() {
  local f b left=0
  while IFS= read -r -d '' f; do
    b=$(fincore --bytes --noheadings --output RES "$f" 2>/dev/null) || b=0
    left=$((left + ${b:-0}))
  done < <(find "$plain" "$root" -type f -print0)
  [ "$left" -le $((size / 100)) ] \
    || die "$left bytes of the data are still cached after eviction"
}
drop_caches() {
  sync
  if [ $evict = data ]; then
    # Each file's pages dropped; then counted.
    local f
    while IFS= read -r -d '' f; do
      dd if="$f" iflag=nocache count=0 status=none 2>/dev/null \
        || die "cannot drop the cached pages of $f"
    done < <(find "$plain" "$root" -type f -print0)
    check_cold
    return
  fi
  if [ $can_drop = 1 ]; then
    if ! { echo 3 > /proc/sys/vm/drop_caches; } 2>/dev/null; then
      can_drop=0
      echo "# WARNING: cannot write /proc/sys/vm/drop_caches; timings are warm-cache" >&2
    fi
  fi
}
case $evict in
  data)
    echo "# caches:  the data's pages (files under $plain and $root) dropped before every timed command; programs and libraries stay cached" ;;
  all)
    drop_caches
    echo "# caches:  $([ $can_drop = 1 ] && echo 'dropped before every timed command' || echo 'NOT dropped (no permission)')" ;;
  rewarm)
    drop_caches
    [ $can_drop = 1 ] || die "--evict rewarm needs a writable /proc/sys/vm/drop_caches"
    echo "# caches:  dropped before every timed command, then the command run once untimed on a 64 KiB file in $warm (its programs and libraries read back; the data and its store stay cold, checked)" ;;
esac

# warm_memory: $warm_mem bytes written to a file on the tmpfs and removed.
# The pages go back to the kernel's free lists faulted in, and the timed
# command's page cache and buffers are taken from them before the VM's
# free page reporting hands them back to the host (after a drop of the
# caches, a 1 GiB cp took 0.56-2.6 s here; right after warming, 0.47-0.98).
warm_file=$shm/preload_tools.warm.$$
warm_memory() {
  [ "$warm_mem" -gt 0 ] || return 0
  dd if=/dev/zero of="$warm_file" bs=4M count=$(((warm_mem + (4 << 20) - 1) >> 22)) \
    status=none 2> "$logs/warm.err" || { rm -f "$warm_file"; cat "$logs/warm.err" >&2;
      die "cannot write $warm_mem bytes to $warm_file for --warm-memory"; }
  rm -f "$warm_file"
}
if [ "$warm_mem" -gt 0 ]; then
  echo "# memory:  $warm_mem bytes ($(human "$warm_mem")) faulted in and freed on $shm right before every timed command"
else
  echo "# memory:  not warmed (--warm-memory 0): freshly faulted memory may be slow on a VM"
fi

# Microsecond timestamps into $_ts (bash 5 EPOCHREALTIME, else date).
stamp() {
  if [ -n "${EPOCHREALTIME:-}" ]; then _ts=${EPOCHREALTIME/[.,]/}
  else _ts=$(( $(date +%s%N) / 1000 )); fi
}
us_to_s() { printf '%d.%06d' $(($1 / 1000000)) $(($1 % 1000000)); }

# --- 1. input ----------------------------------------------------------------
stamp; t0=$_ts
if command -v openssl >/dev/null; then
  key=$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')
  iv=$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')
  head -c "$size" /dev/zero | openssl enc -aes-128-ctr -K "$key" -iv "$iv" > "$F_plain"
else
  head -c "$size" /dev/urandom > "$F_plain"
fi
sync "$F_plain"
[ "$(stat -c %s "$F_plain")" = "$size" ] || die "input has $(stat -c %s "$F_plain") bytes, wanted $size"
digest=$(md5sum < "$F_plain" | cut -d' ' -f1)
stamp; echo "# input:   $F_plain, md5 $digest (made in $(us_to_s $((_ts - t0))) s)"

# Blocks the store takes (the value log's files keep their sizes when the
# space of removed copies is given back: their apparent size is larger).
store_space() {
  echo "$(du -s --block-size=1 "$root" | cut -f1) bytes on disk, $(du -sb "$root" | cut -f1) apparent"
}

# --- 2. into the store, and back -------------------------------------------
stamp; t0=$_ts
side stored cp "$F_plain" "$F_stored" 2> "$logs/put.err" \
  || { cat "$logs/put.err" >&2; die "cp into the store failed"; }
side stored sync "$F_stored" 2>> "$logs/put.err" \
  || { cat "$logs/put.err" >&2; die "sync of the stored file failed"; }
stamp; t_put=$((_ts - t0))
side stored cmp "$F_plain" "$F_stored" 2>> "$logs/put.err" \
  || { cat "$logs/put.err" >&2; die "the stored file does not read back identical to the input"; }
st_size=$(side stored stat -c %s "$F_stored")
[ "$st_size" = "$size" ] || die "stored file has size $st_size, wanted $size"
if [ -s "$logs/put.err" ]; then
  echo "# WARNING: stderr while storing the input:" >&2; sed 's/^/#   /' "$logs/put.err" >&2
fi
echo "# stored:  $F_stored via SLUICE_ROOT=$root (put in $(us_to_s $t_put) s; cmp ok; store uses $(store_space))"

# The warm files of --evict rewarm: 64 KiB, plain and in a store of their own.
if [ $evict = rewarm ]; then
  mkdir -p "$warm/plain" "$warm/mnt" "$warm/root"
  head -c 65536 /dev/urandom > "$warm/plain/big.bin"
  side_mnt=$warm/mnt side_root=$warm/root side stored cp "$warm/plain/big.bin" "$warm/mnt/big.bin" \
    || die "cp into the warm store failed"
  side_mnt=$warm/mnt side_root=$warm/root side stored cmp "$warm/plain/big.bin" "$warm/mnt/big.bin" \
    || die "the warm store's file does not read back identical"
fi

# --- 3. timed runs -----------------------------------------------------------
declare -A times     # times[tool,side] = "t1 t2 ..." (microseconds)
warned_err=0

# tool_paths TOOL SIDE PLAIN_DIR MNT_DIR: the input F and the copy G of TOOL.
tool_paths() {
  local tool=$1 s=$2 pd=$3 md=$4
  if [ "$s" = stored ]; then F=$md/big.bin G=$md/copy.bin; else F=$pd/big.bin G=$pd/copy.bin; fi
  # cp across the mount's edge: one side of the copy is a plain file.
  if [ "$s" = stored ] && [ "$tool" = cp-out ]; then G=$pd/copy.bin; fi
  if [ "$s" = stored ] && [ "$tool" = cp-in ]; then F=$pd/big.bin; fi
}

# tool_cmd TOOL SIDE F G OUT: the command that is timed.
tool_cmd() {
  local tool=$1 s=$2 F=$3 G=$4 out=$5
  case $tool in
    stat) side "$s" stat "$F" > /dev/null ;;
    cat) side "$s" cat "$F" > /dev/null ;;
    md5sum) side "$s" md5sum "$F" > "$out" ;;
    cp|cp-out|cp-in) side "$s" cp "$F" "$G" && side "$s" sync "$G" ;;
  esac
}

# rewarm TOOL SIDE: TOOL once, untimed, on SIDE's 64 KiB file under $warm
# (the stored side in the warm store), then its copy removed.
rewarm() {
  local tool=$1 s=$2 F G side_mnt=$warm/mnt side_root=$warm/root
  tool_paths "$tool" "$s" "$warm/plain" "$warm/mnt"
  { tool_cmd "$tool" "$s" "$F" "$G" /dev/null &&
      case $tool in cp*) side "$s" rm -f "$G" ;; esac; } \
    > /dev/null 2> "$logs/rewarm.err" ||
    { cat "$logs/rewarm.err" >&2; die "the untimed $tool on the $s side's warm file failed"; }
  sync
  check_cold
}

# run_one TOOL SIDE REP: one timed run; appends to times[TOOL,SIDE].
run_one() {
  local tool=$1 s=$2 rep=$3 F G err out rc=0
  tool_paths "$tool" "$s" "$plain" "$mnt"
  err=$logs/$tool.$s.$rep.err out=$logs/$tool.$s.$rep.out
  drop_caches
  [ $evict != rewarm ] || rewarm "$tool" "$s"
  warm_memory
  stamp; t0=$_ts
  tool_cmd "$tool" "$s" "$F" "$G" "$out" 2> "$err" || rc=$?
  stamp
  local dt=$((_ts - t0))
  if [ $rc != 0 ]; then
    cat "$err" >&2; die "$tool on the $s side (rep $rep) exited $rc"
  fi
  if [ -s "$err" ]; then
    echo "# WARNING: stderr from $tool, $s side, rep $rep:" >&2
    sed 's/^/#   /' "$err" | head -20 >&2
    warned_err=1
  fi
  # Checks, untimed.
  case $tool in
    md5sum)
      local got; got=$(cut -d' ' -f1 < "$out")
      [ "$got" = "$digest" ] || die "md5sum on the $s side printed $got, the input's digest is $digest" ;;
    cp|cp-out|cp-in)
      local gs; gs=$(side "$s" stat -c %s "$G")
      [ "$gs" = "$size" ] || die "cp on the $s side made a $gs-byte copy, wanted $size"
      side "$s" rm -f "$G" 2>> "$err" || die "rm of the copy on the $s side failed"
      [ ! -s "$err" ] || { echo "# WARNING: stderr from rm, $s side:" >&2; sed 's/^/#   /' "$err" >&2; } ;;
  esac
  times[$tool,$s]+="$dt "
  printf '#   %-6s rep %d %-6s %s s%s\n' "$tool" "$rep" "$s" "$(us_to_s $dt)" \
    "$([ $evict != rewarm ] || echo ' (after its warm run)')"
}

echo "# runs:"
for tool in "${tools[@]}"; do
  for ((rep = 1; rep <= reps; rep++)); do
    if ((rep % 2)); then order=(plain stored); else order=(stored plain); fi
    for s in "${order[@]}"; do run_one "$tool" "$s" "$rep"; done
  done
done
echo "# store uses $(store_space) after the runs"

# --- 4. results --------------------------------------------------------------
median() {  # microseconds in, microseconds out
  local -a v; read -ra v <<< "$(printf '%s\n' "$@" | sort -n | tr '\n' ' ')"
  local n=${#v[@]}
  if ((n % 2)); then echo "${v[n / 2]}"; else echo $(((v[n / 2 - 1] + v[n / 2]) / 2)); fi
}
list_s() { local x out=""; for x in "$@"; do out+="$(us_to_s "$x"),"; done; echo "${out%,}"; }

echo
printf '%-7s %12s %12s %8s  %-s\n' tool "plain_s" "stored_s" ratio "times plain | stored (s, in run order)"
printf '%-7s %12s %12s %8s  %-s\n' ------- ------------ ------------ -------- ---------------------------------------
summary=()
for tool in "${tools[@]}"; do
  read -ra tp <<< "${times[$tool,plain]}"
  read -ra ts <<< "${times[$tool,stored]}"
  mp=$(median "${tp[@]}") ms=$(median "${ts[@]}")
  ratio=$(awk -v a="$ms" -v b="$mp" 'BEGIN { if (b > 0) printf "%.3f", a / b; else print "inf" }')
  mbs_p=$(awk -v n="$size" -v t="$mp" 'BEGIN { if (t > 0) printf "%.1f", n / t; else print "inf" }')
  mbs_s=$(awk -v n="$size" -v t="$ms" 'BEGIN { if (t > 0) printf "%.1f", n / t; else print "inf" }')
  printf '%-7s %12s %12s %8s  %s | %s\n' "$tool" "$(us_to_s "$mp")" "$(us_to_s "$ms")" "$ratio" \
    "$(list_s "${tp[@]}")" "$(list_s "${ts[@]}")"
  summary+=("RESULT tool=$tool size=$size reps=$reps plain_median_s=$(us_to_s "$mp") stored_median_s=$(us_to_s "$ms") ratio=$ratio plain_MBps=$mbs_p stored_MBps=$mbs_s plain_s=$(list_s "${tp[@]}") stored_s=$(list_s "${ts[@]}") caches_dropped=$can_drop evict=$evict warm_memory=$warm_mem")
done
echo
printf '%s\n' "${summary[@]}"
[ $warned_err = 0 ] || echo "# note: some runs wrote to stderr (see the warnings above)"
