# Sourced by the tests that kill an MPI job: kill_job SID kills with
# SIGKILL every process of session SID at once (mpiexec and the ranks,
# which Open MPI puts in process groups of their own; start the job with
# `setsid mpiexec ... &`, whose $! is then the session's id), reaps it, and
# returns 1 if any of them is still there after 5 s: anything of the job
# still running would write after the kill.
kill_job() {
  local sid=$1
  pkill -9 -s "$sid" || true
  wait "$sid" 2>/dev/null || true
  for _ in $(seq 50); do
    pgrep -s "$sid" >/dev/null || return 0
    sleep 0.1
  done
  ! pgrep -s "$sid" >/dev/null
}
