# Sourced by the sluice-bench test scripts once they have set work,
# mpiexec, npflag and bench and shifted those arguments off; the arguments
# left (passed to `source`) are mpiexec's pre-flags. Makes an empty $work
# and gives:
#   fail MESSAGE      prints it and counts a failure
#   run N ARGS...     sluice-bench ARGS on N ranks under mpiexec
#   finish NAME       exits 1 with the count if anything failed, else says
#                     all passed (a script prints its own details first)
pre=("$@")
rm -rf "$work" && mkdir -p "$work"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
run() { "$mpiexec" "$npflag" "$1" "${pre[@]}" "$bench" "${@:2}"; }
finish() {
  if [ "$fails" -ne 0 ]; then
    echo "$1: $fails failure(s)"
    exit 1
  fi
  echo "$1: all passed"
}
