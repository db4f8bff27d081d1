#!/usr/bin/env bash
# The eleventh run (docs/BENCHMARKS.md), 2026-11-25, at a3d469d: the ninth
# run's script (three pairs of bench/preload_tools.sh under --evict all and
# rewarm, memory warmed by default since 75cc4cd, then one pair of
# sluice-bench orders), then posix_stream.sh with four pairs.
#   run.sh OUTDIR
set -u
here=$(cd "$(dirname "$0")" && pwd)
"$here/../2026-11-24-transparent-9/run.sh" "$1" 15 3 &&
  "$here/posix_stream.sh" "$1" 4 5
