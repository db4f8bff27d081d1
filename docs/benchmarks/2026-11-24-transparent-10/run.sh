#!/usr/bin/env bash
# The tenth run of the unmodified tools (docs/BENCHMARKS.md), 2026-11-24:
# the ninth run's script again. Since 75cc4cd bench/preload_tools.sh warms
# memory before every timed command by default (--warm-memory, 3 x --size),
# which is the one difference between the two runs.
#   run.sh OUTDIR [REPS [PAIRS]]
exec "$(dirname "$0")/../2026-11-24-transparent-9/run.sh" "$@"
