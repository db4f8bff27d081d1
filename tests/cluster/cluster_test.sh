#!/usr/bin/env bash
# The cluster test bed, really started: namespaces, veth links, a loop
# device under a blkio throttle, Open MPI's daemons in the nodes.
#
#   cluster_test.sh smoke CLUSTER PROBE MPIEXEC WORK
#   cluster_test.sh shared_file CLUSTER MPI_SHARED_FILE_TEST MPIEXEC WORK
#   cluster_test.sh dataset_per_node CLUSTER DATASET_MPI_TEST MPIEXEC WORK
#
# Exits 77 (skipped) with the reason where the machine cannot host it.
set -uo pipefail
mode=$1 cluster=$2 prog=$3 mpiexec=$4 work=$5

. "$(dirname "$0")/bed.sh"

# What the cluster could leave behind: links, mounts, loop devices,
# throttle rules, holders (in namespaces of their own: not in ip link).
before() {
  ip -o link | sed 's/ link\/.*//'; echo; mount; echo; losetup -a; echo
  cat /sys/fs/cgroup/blkio/blkio.throttle.{read,write}_bps_device; echo
  echo "holders: $(pgrep -fc sluice-cluster-holder)"
}

# What the host lists before the cluster, to compare after 'down'.
before >"$work/before"
trap '"$cluster" down >/dev/null 2>&1' EXIT

if [ "$mode" = shared_file ]; then
  cluster up 2 --pfs-size 512M || { echo "FAIL: up"; exit 1; }
  # The test's own check: one shared file written by all ranks through
  # Sluice, read back and verified; here its ranks are on two nodes.
  cluster run -- "$mpiexec" -n 4 --map-by node "$prog" "$pfs/shared" \
    >"$work/out" 2>&1
  rc=$?
  tail -5 "$work/out"
  if [ $rc = 0 ] && grep -q "4 ranks, 0 failure(s)" "$work/out"; then
    ok "mpi_shared_file on 2 nodes x 2 ranks, its file on the PFS"
  else
    fail "mpi_shared_file on the cluster: exit $rc"
  fi
  hosts=$(cluster run -- "$mpiexec" -n 4 --map-by node hostname | sort | uniq -c)
  [ "$(echo "$hosts" | awk '{print $1 $2}' | tr '\n' ' ')" = "2node0 2node1 " ] &&
    ok "its ranks were two on each node" || fail "ranks per node: $hosts"
  cluster down || fail "down"
  [ $failed = 0 ] || { echo "$failed failed"; exit 1; }
  exit 0
fi

if [ "$mode" = dataset_per_node ]; then
  # Dataset ids in file_per_node mode written by 2 nodes x 2 ranks (one
  # store per node, on the PFS), restarted on 1 node x 3 ranks and on the
  # other node alone, every byte verified (dataset_mpi_test).
  cluster up 2 --pfs-size 512M || { echo "FAIL: up"; exit 1; }
  root=$pfs/ckpt
  mkdir -p "$root"
  export SLUICE_DATA_ROOTS=$root SLUICE_DATASET_MODE=file_per_node
  job() {
    local what=$1; shift
    if cluster run -- "$mpiexec" -x SLUICE_DATA_ROOTS -x SLUICE_DATASET_MODE \
        "$@" >"$work/out" 2>&1; then
      ok "$what"
    else
      fail "$what: $(tail -5 "$work/out")"
    fi
  }
  job "ids 1..3 written by 2 nodes x 2 ranks, one store a node" \
    -n 4 --map-by node "$prog" write 2
  stores=$(ls -d "$root"/sim/writer.* | xargs -n1 basename | tr '\n' ' ')
  [ "$stores" = "writer.00000000 writer.00000001 " ] &&
    ok "the stores are the nodes' leaders' (ranks 0 and 1): $stores" ||
    fail "stores: $stores"
  for which in "highest 3" "newest 3" "2 2"; do
    job "read $which on node0 x 3 ranks" -n 3 --host node0:3 \
      --oversubscribe "$prog" read $which
  done
  job "read highest on node1 x 1 rank" -n 1 --host node1:1 "$prog" read \
    highest 3
  job "read 1 on 2 nodes x 3 ranks" -n 6 --map-by node --oversubscribe \
    "$prog" read 1 1
  # A close failing on rank 1 (node1) fails on every rank; the commit of
  # bytes two ranks of different nodes wrote reads as Corruption.
  job "a failed close on node1 leaves no id" -n 4 --map-by node "$prog" \
    failclose
  job "overlapping writes of two nodes are reported" -n 4 --map-by node \
    "$prog" overlap
  cluster down || fail "down"
  [ $failed = 0 ] || { echo "$failed failed"; exit 1; }
  exit 0
fi

start=$(now)
# An 'up' killed half way (no trap of its own runs): 'down' still removes
# what it made, and so does the next 'up'.
# (Killed sooner and sooner later until a kill lands after 'up' began.)
for delay in 0.2 0.3 0.5 0.8; do
  CLUSTER_QUIET=1 timeout -s KILL $delay "$cluster" up 2 --pfs-size 512M \
    --pfs-write-cap 32M >/dev/null 2>&1
  rc=$?
  [ $rc = 137 ] && [ -d "$SLUICE_CLUSTER_STATE" ] && break
  cluster down >/dev/null 2>&1
done
[ $rc = 137 ] && [ -d "$SLUICE_CLUSTER_STATE" ] &&
  echo "     (up killed after $delay s: $(ls "$SLUICE_CLUSTER_STATE" | tr '\n' ' '))" ||
  fail "up was never killed half way (exit $rc)"
cluster down >/dev/null 2>&1 || fail "down after a killed up"
diff -q "$work/before" <(before) >/dev/null && ok "down after a killed up" ||
  fail "a killed up left: $(diff "$work/before" <(before) | head -5)"
CLUSTER_QUIET=1 timeout -s KILL 1.5 "$cluster" up 2 --pfs-size 512M \
  --pfs-write-cap 32M >/dev/null 2>&1

cluster up 2 --local-size 256M --pfs-size 512M --pfs-write-cap 32M ||
  { echo "FAIL: up"; exit 1; }
cluster status

# Processor names and node communicators; TCP between the nodes.
cluster run -- "$mpiexec" -n 4 --map-by node --mca btl self,vader,tcp \
  "$prog" >"$work/probe" 2>&1 ||
  fail "probe: exit $? ($(tail -3 "$work/probe"))"
cat "$work/probe"
[ "$(grep -c '^rank ' "$work/probe")" = 4 ] || fail "probe: not 4 ranks"
names=$(awk '/^rank /{print $4}' "$work/probe" | sort -u | tr '\n' ' ')
[ "$names" = "node0 node1 " ] && ok "processor names: $names" ||
  fail "processor names: '$names'"
[ "$(awk '/^rank /{print $2, $4}' "$work/probe" | tr '\n' ' ')" = \
  "0 node0 1 node1 2 node0 3 node1 " ] && ok "--map-by node alternates nodes" ||
  fail "placement: $(awk '/^rank /{print $2, $4}' "$work/probe" | tr '\n' ' ')"
[ "$(awk '/^rank /{print $6}' "$work/probe" | sort -u)" = 2 ] &&
  ok "each node communicator has 2 ranks" || fail "node communicator sizes"

# Shared memory within a node, and only there.
cluster run -- "$mpiexec" -n 2 --host node0:2 --mca btl self,vader "$prog" \
  >"$work/shm" 2>&1 && ok "two ranks of node0 talk over shared memory" ||
  fail "shared memory in node0: $(tail -3 "$work/shm")"
cluster run -- "$mpiexec" -n 2 --map-by node --mca btl self,vader "$prog" \
  >"$work/shm2" 2>&1
rc=$?
[ $rc != 0 ] && grep -q "processes be able to reach" "$work/shm2" &&
  ok "shared memory does not reach across nodes" ||
  fail "vader across nodes: exit $rc, $(tail -3 "$work/shm2")"
cluster exec node0 -- touch /dev/shm/mine && cluster exec node1 -- test ! -e /dev/shm/mine &&
  [ ! -e /dev/shm/mine ] && ok "/dev/shm is each node's own" ||
  fail "/dev/shm is shared"

# Node-local storage is the node's alone.
cluster exec node0 -- sh -c 'echo kept > /local/mine && sync' ||
  fail "write in node0's /local"
cluster exec node1 -- test ! -e /local/mine && ok "node1 does not see node0's /local" ||
  fail "node1 sees node0's /local/mine"
[ "$(cluster exec node1 -- hostname)" = node1 ] && ok "exec runs in the node" ||
  fail "exec node1 -- hostname"

# The PFS is shared: written by one node, read by the other.
head -c $((3 << 20)) /dev/urandom >"$work/data"
cluster exec node0 -- sh -c "cat '$work/data' > '$pfs/shared' && sync" ||
  fail "write on the PFS from node0"
if cluster exec node1 -- cmp -s "$work/data" "$pfs/shared"; then
  ok "node1 reads node0's PFS file byte for byte"
else
  fail "node1's copy of the PFS file differs"
fi

# The write cap: 64 MiB fsynced at 32 MiB/s takes about 2 s.
t0=$(now)
cluster exec node0 -- dd if=/dev/zero of="$pfs/capped" bs=1M count=64 \
  conv=fsync status=none || fail "dd on the PFS"
took=$(since "$t0")
if awk -v t="$took" 'BEGIN { exit !(t >= 1.8) }'; then
  ok "64 MiB fsynced under a 32 MiB/s cap: $took s"
else
  fail "64 MiB fsynced under a 32 MiB/s cap took $took s (< 1.8)"
fi

# A node lost during a job: the job ends with an error; node0 keeps its
# /local.
flag=$pfs/probe.ready
t0=$(now)
"$cluster" run -- "$mpiexec" -n 4 --map-by node "$prog" --hold 60 /local \
  "$flag" >"$work/held" 2>&1 &
job=$!
for _ in $(seq 200); do [ -e "$flag" ] && break; sleep 0.1; done
if [ -e "$flag" ]; then
  cluster kill node1 || fail "kill node1"
  for _ in $(seq 300); do kill -0 $job 2>/dev/null || break; sleep 0.1; done
  if kill -0 $job 2>/dev/null; then
    fail "the job still runs 30 s after node1 was killed"
    kill -9 $job
  fi
  wait $job
  rc=$?
  took=$(since "$t0")
  [ $rc != 0 ] && ok "killing node1 ended the job with exit $rc after $took s" ||
    fail "the job exited 0 after node1 was killed"
  st=$(cluster status)
  grep -q "^node1: down" <<<"$st" && grep -q "^node0: up" <<<"$st" &&
    ok "status: node0 up, node1 down" || fail "status after kill: $st"
  said=$(cluster exec node1 -- true 2>&1) && fail "exec into a killed node"
  [ "$said" = "cluster: node1 is down" ] && ok "exec into node1: $said" ||
    fail "exec into a killed node says '$said'"
  [ "$(cluster exec node0 -- cat /local/mine)" = kept ] &&
    cluster exec node0 -- test -s /local/probe.0 &&
    ok "node0's /local keeps its files" || fail "node0's /local lost files"
else
  fail "the held job never started: $(tail -3 "$work/held")"
  kill -9 $job 2>/dev/null
fi

cluster down || fail "down"
trap - EXIT
if diff "$work/before" <(before) >"$work/diff"; then
  ok "after down, ip link, mount and losetup -a list what they did before"
else
  fail "after down the host differs:"; cat "$work/diff"
fi
[ ! -e "$SLUICE_CLUSTER_STATE" ] || fail "down left $SLUICE_CLUSTER_STATE"
echo "took $(since "$start") s"
[ $failed = 0 ] || { echo "$failed failed"; exit 1; }
