#!/usr/bin/env bash
# The tiers end to end on the cluster test bed: node-local /local/ckpt as
# the first data root, $pfs/ckpt (the shared, slower PFS) as the second,
# jobs across the nodes with mpiexec, tier_mpi_test writing and reading
# every byte through the C API.
#
#   cluster_tier_test.sh MODE CLUSTER TIER_MPI_TEST MPIEXEC WORK
#
# MODE:
#   drain      every stage_mode x aggregation on 2 nodes x 2 ranks and
#              4 nodes x 2 ranks (basic, and file_per_node): after
#              sluice_fini the PFS holds, per drained id, exactly its
#              containers (N for n_n, one per node or group for n_m, 1
#              for n_1) and its index, nothing under drain/; every node's
#              /local is then wiped and a job of another rank count reads
#              HIGHEST and every drained id from the PFS. A representative
#              subset; SLUICE_CLUSTER_TIER_FULL=1 runs the whole matrix.
#   auto_skip  stage_mode auto with ids 1-8 committed about as fast as
#              they drain (the PFS capped): nothing of a skipped id is
#              left under drain/.
#   node_loss  a node killed before the drain of an id (committed on
#              /local only): the restart on the remaining node reads the
#              previous id from the PFS, HIGHEST is that id, and the torn
#              one is reported incomplete; a node killed after the drain:
#              the restart reads every id from the PFS.
#   node_loss_restart
#              the same loss before the drain, restarted with the job's
#              stage mode on 2 ranks (the context's end must not fail for
#              the drains it resumes), and on 4 ranks of the remaining
#              node (HIGHEST must still be the previous id).
#   fallback   a 200 MiB id on 4 ranks with the first root missing on one
#              node, then read-only on every node: it lands on the PFS,
#              every byte read back.
#   fallback_mid_write
#              the first root a 64 MiB tmpfs that fills up during the
#              write of the 200 MiB id: the id still lands on the PFS
#              (sluice_dataset_root, asked after the last write and before
#              the close, names it), every byte read back.
#
# Exits 77 (skipped) with the reason where the machine cannot host it.
set -uo pipefail
mode=$1 cluster=$2 prog=$3 mpiexec=$4 work=$5
case $mode in
  drain | auto_skip | node_loss | node_loss_restart | fallback | \
    fallback_mid_write) ;;
  *) echo "unknown mode '$mode'"; exit 2 ;;
esac

. "$(dirname "$0")/bed.sh"
trap '"$cluster" down >/dev/null 2>&1' EXIT
start=$(now)

ctx=$pfs/ckpt/sim  # the context's directory on the PFS
export SLUICE_DATA_ROOTS=/local/ckpt,$pfs/ckpt SLUICE_STAGE_MODE=auto \
  SLUICE_AGGREGATION=n_m SLUICE_AGGREGATION_GROUP=0 SLUICE_DATASET_MODE=basic
vars="-x SLUICE_DATA_ROOTS -x SLUICE_STAGE_MODE -x SLUICE_AGGREGATION"
vars+=" -x SLUICE_AGGREGATION_GROUP -x SLUICE_DATASET_MODE"
out=$work/out

# job WHAT MPIEXEC-ARGS...: an MPI job across the nodes; ok or fail, with
# the end of its output.
job() {
  local what=$1 t0
  shift
  t0=$(now)
  # shellcheck disable=SC2086
  if cluster run -- "$mpiexec" $vars "$@" >"$out" 2>&1; then
    ok "$what ($(since "$t0") s)"
    return 0
  fi
  fail "$what ($(since "$t0") s): $( (grep -m3 '^rank [0-9]*:' "$out" ||
    tail -8 "$out") | cut -c1-600)"
  return 1
}
# The /local/ckpt of every node named removed.
wipe_local() {
  local node
  for node in "$@"; do
    cluster exec "$node" -- rm -rf /local/ckpt || fail "rm in $node"
    cluster exec "$node" -- test ! -e /local/ckpt ||
      fail "$node kept /local/ckpt"
  done
}
# The names in directory $1, sorted, on one line ('-' when there is none).
names() {
  if [ -d "$1" ]; then ls -A "$1" | sort | tr '\n' ' '; else echo -; fi
}
seq_names() {  # PREFIX N -> "PREFIX0 ... PREFIX(N-1) " as ls sorts them
  local i
  for i in $(seq 0 $(($2 - 1))); do echo "$1$i"; done | sort | tr '\n' ' '
}

strict_auto=0 size=""  # size: block=N for tier_mpi_test
if [ "$mode" = drain ] || [ "$mode" = auto_skip ]; then
  cap=""
  [ "$mode" = drain ] || cap="--pfs-write-cap ${SLUICE_CLUSTER_TIER_CAP:-64M}"
  # shellcheck disable=SC2086
  cluster up 4 --pfs-size 1G --local-size 256M $cap ||
    { echo "FAIL: up"; exit 1; }
  all_nodes="node0 node1 node2 node3"
  # One case: TOPOLOGY (2x2, 4x2) STAGE AGGREGATION GROUP DATASET_MODE
  # [LAST]: ids 1..LAST (default 3).
  drain_case() {
    local topo=$1 stage=$2 agg=$3 group=$4 dsmode=$5 last=${6:-3}
    local n nodes hosts rhosts rn wait=
    # The restart: another rank count on the same nodes, whose /local
    # would hold the ids were it not wiped.
    if [ "$topo" = 2x2 ]; then
      n=4 nodes="node0 node1" hosts=node0:2,node1:2
      rn=3 rhosts=node0:2,node1:1
    else
      n=8 nodes=$all_nodes hosts=node0:2,node1:2,node2:2,node3:2
      rn=5 rhosts=node0:2,node1:1,node2:1,node3:1
    fi
    local what="$topo $stage $agg${group:+ group $group} $dsmode"
    echo "---- $what"
    export SLUICE_STAGE_MODE=$stage SLUICE_AGGREGATION=$agg \
      SLUICE_AGGREGATION_GROUP=${group:-0} SLUICE_DATASET_MODE=$dsmode
    rm -rf "$pfs/ckpt"
    wipe_local $all_nodes
    # Immediate: each id durable when drain_wait returns; end_of_job and
    # disable: nothing queued before the end.
    case $stage in
      immediate) wait=wait=durable ;;
      end_of_job | disable) wait=wait=none ;;
    esac
    job "$what: ids 1-$last written to /local by $n ranks" -n $n \
      --host $hosts --map-by node "$prog" write ids=1-$last $size root=/local/ckpt \
      $wait || return
    # Every node's leader keeps a copy of each commit record.
    local node records all
    all=$(for i in $(seq "$last"); do echo "ckpt.$i"; done | sort | tr '\n' ' ')
    for node in $nodes; do
      records=$(cluster exec $node -- ls /local/ckpt/sim/commit | sort |
                tr '\n' ' ')
      [ "$records" = "$all" ] || fail "$what: $node's records: $records"
    done
    # What the PFS holds: the index of each drained id, its containers.
    local want_ids
    case $stage in
      immediate | end_of_job) want_ids=$(seq $last) ;;
      auto) want_ids=$(names "$ctx/commit" | tr ' ' '\n' |
                       sed -n 's/^ckpt\.\([0-9]*\)\.index$/\1/p') ;;
      disable) want_ids= ;;
    esac
    want_ids=$(echo $want_ids)
    local k
    case $agg in
      n_n) k=$n ;;
      n_1) k=1 ;;
      n_m) if [ "${group:-0}" -gt 0 ]; then k=$(((n + group - 1) / group))
           else k=$(echo $nodes | wc -w); fi ;;
    esac
    local idx="" dirs="" i bad=
    for i in $want_ids; do idx+="ckpt.$i.index "; dirs+="ckpt.$i "; done
    [ -n "$idx" ] || idx=- dirs=-
    if [ "$stage" = disable ]; then
      [ "$(names "$ctx/commit")" = - ] || [ "$(names "$ctx/commit")" = "" ] ||
        bad+=" commit/: $(names "$ctx/commit")"
      [ "$(names "$ctx/data")" = - ] || [ "$(names "$ctx/data")" = "" ] ||
        bad+=" data/: $(names "$ctx/data")"
    else
      [ "$(names "$ctx/commit")" = "$idx" ] ||
        bad+=" commit/ holds '$(names "$ctx/commit")', not '$idx'"
      [ "$(names "$ctx/data")" = "$dirs" ] ||
        bad+=" data/ holds '$(names "$ctx/data")', not '$dirs'"
      for i in $want_ids; do
        [ "$(names "$ctx/data/ckpt.$i")" = "$(seq_names c. $k)" ] ||
          bad+=" data/ckpt.$i holds '$(names "$ctx/data/ckpt.$i")', not $k"
      done
      [ "$stage" != auto ] || [[ " $want_ids " = *" $last "* ]] ||
        bad+=" auto: the newest id $last is not durable (drained: '$want_ids')"
    fi
    local left
    # drain/ keeps its lock file, nothing else.
    left=$(names "$ctx/drain" | sed 's/\(^\| \)lock\( \|$\)/\1/; s/ *$//')
    if [ "$left" != - ] && [ -n "$left" ]; then
      bad+=" drain/ holds $left"
    fi
    if [ -z "$bad" ]; then
      ok "$what: the PFS holds ids '$want_ids', $k container(s) each, indexed"
    else
      fail "$what:$bad"
    fi
    if [ "$stage" = disable ]; then
      # The ids are on /local only: readable there, gone with it.
      # (By the same ranks on the same nodes: a rank reads the stores of
      # its own node's /local alone.)
      job "$what: ids read from /local by the same ranks" -n $n \
        --host $hosts --map-by node "$prog" read highest=$last ids=1-$last $size \
        root=/local/ckpt
      wipe_local $nodes
      job "$what: no id left once /local is wiped" -n $rn --host $rhosts \
        "$prog" read highest=none
      return
    fi
    wipe_local $nodes
    job "$what: HIGHEST and ids '$want_ids' read from the PFS by $rn ranks" \
      -n $rn --host $rhosts "$prog" read highest=$last $size \
      ids="$(echo $want_ids | tr ' ' ,)" root="$pfs/ckpt"
  }
  if [ "$mode" = auto_skip ]; then
    # stage_mode auto with ids committed about as fast as they drain
    # (4 MiB a rank, the PFS capped): a skipped id leaves nothing on the
    # PFS, an id drained is whole.
    strict_auto=1 size=block=${SLUICE_CLUSTER_TIER_BLOCK:-4194304}
    drain_case 2x2 auto n_1 "" basic 8
    drain_case 4x2 auto n_n "" basic 8
    drain_case 2x2 auto n_m "" basic 8
  elif [ "${SLUICE_CLUSTER_TIER_FULL:-0}" = 1 ]; then
    for stage in immediate end_of_job auto disable; do
      for agg in n_n n_m n_1; do
        drain_case 2x2 $stage $agg "" basic
        drain_case 4x2 $stage $agg "" basic
        drain_case 2x2 $stage $agg "" file_per_node
      done
      drain_case 4x2 $stage n_m 2 basic
      drain_case 4x2 $stage n_m 3 basic
    done
  else
    # Every stage mode and every aggregation on each shape at least once,
    # n_m by node and by group, file_per_node on both shapes.
    drain_case 2x2 immediate n_n "" basic
    drain_case 2x2 end_of_job n_m "" basic
    drain_case 2x2 auto n_1 "" basic
    drain_case 2x2 disable n_m "" basic
    drain_case 2x2 end_of_job n_n "" file_per_node
    drain_case 2x2 immediate n_1 "" file_per_node
    drain_case 4x2 immediate n_m 2 basic
    drain_case 4x2 end_of_job n_1 "" basic
    drain_case 4x2 auto n_n "" basic
    drain_case 4x2 disable n_n "" basic
    drain_case 4x2 auto n_m 3 basic
    drain_case 4x2 immediate n_m "" file_per_node
  fi
fi

if [ "$mode" = node_loss ] || [ "$mode" = node_loss_restart ]; then
  cluster up 4 --pfs-size 1G --local-size 256M || { echo "FAIL: up"; exit 1; }
  # Before the drain: id 1 drained (drain_wait: durable), id 2 committed
  # with stage_mode end_of_job, then node1 is lost before the job's end.
  export SLUICE_STAGE_MODE=immediate SLUICE_AGGREGATION=n_m
  flag=$pfs/held
  # shellcheck disable=SC2086
  cluster run -- "$mpiexec" $vars -n 4 --host node0:2,node1:2 --map-by node \
    "$prog" write ids=1-2 root=/local/ckpt wait@1=durable wait@2=none \
    set@2=stage_mode=end_of_job hold="$flag" >"$out" 2>&1 &
  held=$!
  for _ in $(seq 300); do [ -e "$flag" ] && break; sleep 0.1; done
  if [ ! -e "$flag" ]; then
    kill -9 $held
    fail "the job never held: $(tail -5 "$out")"
    exit 1
  fi
  ok "ids 1 (drained) and 2 (end_of_job) written by node0 and node1"
  [ "$(names "$ctx/commit")" = "ckpt.1.index " ] &&
    ok "the PFS holds id 1 only" || fail "PFS commit/: $(names "$ctx/commit")"
  for node in node0 node1; do
    cluster exec $node -- test -e /local/ckpt/sim/commit/ckpt.2 ||
      fail "$node has no record of id 2"
  done
  cluster kill node1 || fail "kill node1"
  for _ in $(seq 300); do kill -0 $held 2>/dev/null || break; sleep 0.1; done
  kill -0 $held 2>/dev/null && { fail "the job outlived node1"; kill -9 $held; }
  wait $held && fail "the job ended well without node1"
  [ "$(names "$ctx/commit")" = "ckpt.1.index " ] &&
    ok "node1 lost: id 2 is on node0's /local only" ||
    fail "after the kill the PFS holds $(names "$ctx/commit")"
fi

if [ "$mode" = node_loss ]; then
  # The restart on the remaining node. (stage_mode disable: with a stage
  # mode that drains, the restart resumes the drain of id 2 on a rank
  # whose store holds none of it, and its end fails: node_loss_restart.)
  SLUICE_STAGE_MODE=disable job \
    "restart on node0 x 2: HIGHEST is id 1 from the PFS, id 2 incomplete" \
    -n 2 --host node0:2 "$prog" read highest=1 ids=1 root="$pfs/ckpt" \
    incomplete=2 && grep "^id 2:" "$out"
  # After the drain: ids 1 and 2 drained at the job's end (end_of_job),
  # then node3 is lost: the restart on node2 reads both from the PFS.
  rm -rf "$pfs/ckpt"
  export SLUICE_STAGE_MODE=end_of_job SLUICE_AGGREGATION=n_1
  job "ids 1-2 written by node2 and node3, drained at the end" -n 4 \
    --host node2:2,node3:2 --map-by node "$prog" write ids=1-2 \
    root=/local/ckpt
  cluster kill node3 || fail "kill node3"
  job "restart on node2 x 3: ids 1 and 2 read from the PFS" -n 3 \
    --host node2:3 --oversubscribe "$prog" read highest=2 ids=1-2 \
    root="$pfs/ckpt"
fi

if [ "$mode" = node_loss_restart ]; then
  # The restart on the remaining node with the job's stage mode: it
  # resumes the drains of id 2, and its end must not fail for them.
  job "restart on node0 x 2 (immediate): the context ends well" \
    -n 2 --host node0:2 "$prog" read highest=1 ids=1 root="$pfs/ckpt" \
    incomplete=2
  # As many ranks as before, on the remaining node: the stores of the
  # lost node's ranks are made anew, empty, on node0; they hold nothing
  # of id 2, which is still incomplete.
  SLUICE_STAGE_MODE=disable job \
    "restart on node0 x 4: HIGHEST is id 1 from the PFS, id 2 incomplete" \
    -n 4 --host node0:4 --oversubscribe "$prog" read highest=1 ids=1 \
    root="$pfs/ckpt" incomplete=2
fi

if [ "$mode" = fallback ] || [ "$mode" = fallback_mid_write ]; then
  cluster up 2 --pfs-size 1G --local-size 64M || { echo "FAIL: up"; exit 1; }
  # 40 MiB a rank in the shared element and 10 in its own: 200 MiB.
  big=$((40 << 20))
  # fallback_case WHAT FIRST-ROOT [REASON]: REASON, what stderr must say
  # of the first root when it is refused at the start.
  fallback_case() {
    local what=$1 first=$2 reason=$3 at
    rm -rf "$pfs/ckpt"
    export SLUICE_DATA_ROOTS=$first,$pfs/ckpt
    # Refused at the start, every rank writes to the PFS. Full during the
    # write, a rank may still be on the first root at its last write (a
    # rank of its node that moved gave space back): the commit gathers
    # every rank's parts on the PFS, its record there.
    at="root=$pfs/ckpt"
    [ -n "$reason" ] || at=""
    # shellcheck disable=SC2086
    job "$what: a 200 MiB id written by 2 x 2 ranks to the PFS" -n 4 \
      --host node0:2,node1:2 --map-by node "$prog" write ids=1 \
      block=$big $at || return
    [ -e "$ctx/commit/ckpt.1" ] && ok "$what: the id's record is on the PFS" ||
      fail "$what: no record of id 1 on the PFS: $(names "$ctx/commit")"
    if [ -n "$reason" ]; then
      # Chosen at the start: said on stderr, every store on the PFS.
      grep -q "$reason" "$out" &&
        grep -q "^writing to data root $pfs/ckpt" "$out" &&
        ok "$what: stderr says why: $(grep -m1 "$reason" "$out")" ||
        fail "$what: stderr does not say '$reason': $(head -5 "$out")"
      local stores
      stores=$(names "$ctx" | tr ' ' '\n' | grep -c '^writer\.')
      [ "$stores" = 4 ] && ok "$what: the 4 ranks' stores are on the PFS" ||
        fail "$what: $stores stores on the PFS: $(names "$ctx")"
    fi
    job "$what: every byte read back by 3 ranks" -n 3 \
      --host node0:2,node1:1 "$prog" read highest=1 ids=1 block=$big \
      root="$pfs/ckpt"
  }
  if [ "$mode" = fallback ]; then
    # Missing on node1, and impossible to make there (what should be a
    # directory is a file): every rank goes to the PFS.
    cluster exec node1 -- sh -c 'echo x > /local/bb' || fail "/local/bb"
    fallback_case "first root missing on node1" /local/bb/ckpt \
      "data root /local/bb/ckpt is not usable on rank 1"
    [ "$(cluster exec node0 -- find /local/bb -name 'writer.*')" = "" ] ||
      fail "stores left in node0's /local/bb"
    for node in node0 node1; do
      cluster exec $node -- rm -rf /local/bb /local/ckpt || fail "rm in $node"
      cluster exec $node -- mount -o remount,ro /local || fail "ro /local"
    done
    fallback_case "first root read-only" /local/ckpt "Read-only file system"
    for node in node0 node1; do
      cluster exec $node -- mount -o remount,rw /local || fail "rw /local"
    done
  else
    fallback_case "first root a 64 MiB tmpfs, full during the write" \
      /local/ckpt ""
  fi
fi

cluster down || fail "down"
trap - EXIT
echo "took $(since "$start") s"
[ $failed = 0 ] || { echo "$failed failed"; exit 1; }
