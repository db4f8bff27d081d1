#!/usr/bin/env bash
# The ADIOS2 plugin engine, end to end, through real ADIOS2 and Open MPI:
#   1. 4 ranks write 3 steps through the plugin (chosen by the XML alone),
#      3 ranks read them back with selections that cross the writers'
#      blocks; every value checked.
#   2. Drop-in: the same two programs, XML switched to BP5, give the same
#      values (the same digest) as through the plugin. One writer rank and
#      one reader: this ADIOS2 (the PyPI wheel) has no MPI, so BP5 cannot
#      put several ranks' blocks into one output.
#   3. A writer killed (SIGKILL, every rank) in the middle of step 3: a
#      reader finds steps 1 and 2, whole, and no step 3.
#   4. Puts without steps; a failing commit on one rank; tiers (the steps
#      drain, and are read from the drained copy once the first is lost).
#   5. A misspelt parameter is an error naming the right one; nothing is
#      written.
# ADIOS2 2.12 hands a plugin its plugin's name, not the name the program
# opens: the output goes to the IO's context, DATA_ROOT/checkpoint.sluice
# (data_roots "." by default: each case runs in a directory of its own),
# or where the engine's parameters say.
#   adios2_plugin_test.sh WRITER READER MPIEXEC PLUGIN_DIR TMP SLUICE_TOOL
set -euo pipefail
writer=$1 reader=$2 mpiexec=$3 plugin_dir=$4 tmp=$5 sluice=$6
export ADIOS2_PLUGIN_PATH=$plugin_dir
rm -rf "$tmp"
mkdir -p "$tmp"
cd "$tmp"

fail() { echo "FAIL: $*" >&2; exit 1; }

xml() {  # xml FILE ENGINE [PARAMETERS]
  local params=""
  if [ "$2" = Plugin ]; then
    params='<parameter key="PluginName" value="sluice"/>
      <parameter key="PluginLibrary" value="sluice_adios2"/>'
  fi
  cat > "$1" <<EOF
<?xml version="1.0"?>
<adios-config>
  <io name="checkpoint">
    <engine type="$2">
      $params
      ${3:-}
    </engine>
  </io>
</adios-config>
EOF
}
xml plugin.xml Plugin
xml bp5.xml BP5 '<parameter key="Profile" value="Off"/>'
xml typo.xml Plugin '<parameter key="data_rots" value="/nowhere"/>'

in_dir() { rm -rf "$tmp/$1" && mkdir -p "$tmp/$1" && cd "$tmp/$1"; }

echo "== 4 writers, 3 readers, through the plugin"
in_dir four
"$mpiexec" -n 4 "$writer" ../plugin.xml out.bp 3
[ -d checkpoint.sluice/commit ] || fail "no context directory checkpoint.sluice"
[ ! -e out.bp ] || fail "out.bp was created"
"$mpiexec" -n 3 "$reader" ../plugin.xml out.bp 3 4 | tee read4.txt
grep -q "^digest" read4.txt || fail "reader printed no digest"

echo "== Mode::Append goes on after the last step"
"$mpiexec" -n 4 "$writer" ../plugin.xml out.bp 2 --append 3
"$mpiexec" -n 3 "$reader" ../plugin.xml out.bp 5 4

echo "== drop-in: the plugin and BP5 give the same values"
in_dir one
"$writer" ../plugin.xml one.bp 3
"$reader" ../plugin.xml one.bp 3 1 | tee plugin1.txt
"$writer" ../bp5.xml one.bp 3
"$reader" ../bp5.xml one.bp 3 1 | tee bp5.txt
[ -f one.bp/md.idx ] || fail "BP5 wrote no one.bp/md.idx: was BP5 used?"
[ -d checkpoint.sluice/commit ] || fail "the plugin wrote no checkpoint.sluice"
a=$(grep '^digest' plugin1.txt) b=$(grep '^digest' bp5.txt)
[ "$a" = "$b" ] || fail "plugin $a, BP5 $b"

echo "== a writer killed in step 3, the output placed by parameters"
in_dir killed
xml ../placed.xml Plugin '<parameter key="data_roots" value="'"$tmp"'/killed/root"/>
      <parameter key="ContextName" value="job"/>
      <parameter key="DatasetName" value="restart"/>'
if "$mpiexec" -n 4 "$writer" ../placed.xml x.bp 5 --die-in-step 3 2>killed.err; then
  fail "the killed writer's job succeeded"
fi
grep -q "kills itself in step 3" killed.err || { cat killed.err; fail "the writer did not reach step 3"; }
[ -d root/job/commit ] || fail "no context directory root/job"
"$mpiexec" -n 3 "$reader" ../placed.xml x.bp 2 4 | tee killed.txt
# A writer replacing the output (Mode::Write) that dies in its first step:
# the old steps are still there, whole.
if "$mpiexec" -n 4 "$writer" ../placed.xml x.bp 2 --die-in-step 1 2>killed2.err; then
  fail "the second killed writer's job succeeded"
fi
"$mpiexec" -n 3 "$reader" ../placed.xml x.bp 2 4
# One that commits a step replaces them.
"$mpiexec" -n 2 "$writer" ../placed.xml x.bp 1
"$mpiexec" -n 2 "$reader" ../placed.xml x.bp 1 2

echo "== Puts without BeginStep/EndStep: one step, at Close"
in_dir nosteps
"$mpiexec" -n 4 "$writer" ../plugin.xml x.bp 1 --no-steps
"$mpiexec" -n 3 "$reader" ../plugin.xml x.bp 1 4
"$writer" ../plugin.xml x.bp 1 --no-steps
"$reader" ../plugin.xml x.bp 1 1 | tee plugin1.txt
"$writer" ../bp5.xml one.bp 1 --no-steps
"$reader" ../bp5.xml one.bp 1 1 | tee bp5.txt
a=$(grep '^digest' plugin1.txt) b=$(grep '^digest' bp5.txt)
[ "$a" = "$b" ] || fail "without steps: plugin $a, BP5 $b"
# Only rank 0 puts: every rank still opens and commits the one step (no
# rank waits alone in a collective call), and rank 0's blocks are in it.
in_dir rank0
timeout -k 10 300 "$mpiexec" -n 4 "$writer" ../plugin.xml x.bp 1 --no-steps --only-rank-0 ||
  fail "a writer whose rank 0 alone put data failed or hung"
"$sluice" ls checkpoint.sluice steps | tee ls.txt
[ "$(grep -c ' committed ' ls.txt)" = 1 ] || fail "not one step committed"
grep -q ' committed .* 4 ' ls.txt || fail "the step is not every rank's"

echo "== a rank that fails its commit: every rank fails, no step appears"
in_dir failing
xml ../failing.xml Plugin '<parameter key="test_fail_commit_rank" value="2"/>'
"$mpiexec" -n 4 "$writer" ../failing.xml x.bp 2 --expect-failure 2>failing.err ||
  { cat failing.err; fail "the failing writer did not fail alike on every rank"; }
[ "$(grep -c 'failed as expected' failing.err)" = 4 ] || { cat failing.err; fail "not every rank failed"; }
grep -q "failure injected by test_fail_commit_rank" failing.err ||
  { cat failing.err; fail "the failure does not name its cause"; }
"$mpiexec" -n 3 "$reader" ../plugin.xml x.bp 0 4

echo "== tiers: the steps drain like any dataset's ids"
in_dir tiers
xml ../tiers.xml Plugin '<parameter key="data_roots" value="'"$tmp"'/tiers/fast,'"$tmp"'/tiers/slow"/>
      <parameter key="stage_mode" value="immediate"/>'
"$mpiexec" -n 4 "$writer" ../tiers.xml x.bp 3
# MPI_Finalize ended the context, which waited for the drains.
for id in 0 1 2; do
  [ -f slow/checkpoint.sluice/commit/steps.$id.index ] || fail "step $id was not drained"
done
# The fast root's stores lost (a node gone): the drained copy is read.
rm -rf fast/checkpoint.sluice/writer.*
"$mpiexec" -n 3 "$reader" ../tiers.xml x.bp 3 4

echo "== a misspelt parameter"
in_dir typo
if "$writer" ../typo.xml typo.bp 1 2>../typo.err; then fail "data_rots was accepted"; fi
grep -q "unknown parameter data_rots (did you mean data_roots" ../typo.err ||
  { cat ../typo.err; fail "the error does not name data_roots"; }
[ -z "$(ls -A)" ] || { ls -la; fail "the failed open left files"; }
echo "PASS"
