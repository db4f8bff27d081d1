# Sourced by the tests that start the cluster test bed (cluster_test.sh,
# cluster_tier_test.sh), with $cluster (the script), $mpiexec and $work
# (a directory of the test's own) set: exits 77 (skipped) with the reason
# where the machine cannot host it; otherwise points the cluster at $work
# (its state beside the user's, its PFS at $work/pfs), takes down what a
# crashed run left, and gives ok, fail, cluster, now and since.
skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "needs root (namespaces, mounts, loop devices)"
for t in unshare nsenter ip losetup mkfs.ext4; do
  command -v $t >/dev/null || skip "'$t' is not installed"
done
unshare --net --mount --uts --ipc --pid --fork true 2>/dev/null ||
  skip "cannot create namespaces here"
[ -e /dev/loop-control ] || skip "no loop devices (/dev/loop-control)"
[ -w /sys/fs/cgroup/blkio/blkio.throttle.write_bps_device ] ||
  skip "no cgroup-v1 blkio throttle to cap the PFS"
[ -x "$mpiexec" ] || skip "no mpiexec"

export SLUICE_CLUSTER_STATE=/run/sluice-cluster-test
export SLUICE_CLUSTER_PFS=$work/pfs
export SLUICE_CLUSTER_IMAGE_DIR=$work/image
"$cluster" down >/dev/null 2>&1  # what a crashed run left, before its files go
rm -rf "$work"
mkdir -p "$work"
pfs=$SLUICE_CLUSTER_PFS

failed=0
ok() { echo "ok   $*"; }
fail() { echo "FAIL: $*"; failed=$((failed + 1)); }
cluster() { "$cluster" "$@"; }
now() { date +%s.%N; }
since() { awk -v a="$(now)" -v b="$1" 'BEGIN { printf "%.2f", a - b }'; }
