#!/usr/bin/env bash
# CTest read_guard: the time budget on reading a damaged file
# (analysis/read/read_guard.c; docs/guide.md, "A damaged file").
#
#   check_read_guard.sh SOURCE_DIR BUILD_DIR
#
# stuck   the committed reproducers (tests/fuzz/repro/*.patch on the report
#         fixture `full`), on which HDF5 1.10 loops for ever: report in every
#         format, --by thread and diff end within the budget, status 1 (diff
#         2), one line naming the file, the object and "damaged"; the budget
#         from --read-timeout, PERFMARK_READ_TIMEOUT, the file's size, and the
#         total cap PERFMARK_REPORT_TIMEOUT; a parent killed from outside
#         takes its child along.
# moving  PERFMARK_TEST_READ_DELAY_MS (test-only: a sleep at every read step)
#         makes the read last many times the budget while every step stays
#         within it: never stopped, same report as an unhurried run.
# mpirun  the same two under `mpirun -np 2`: a stuck file ends the whole job
#         with status 1 and the message; a moving one is reported.
set -u
src=${1:?usage: check_read_guard.sh SOURCE_DIR BUILD_DIR} build=${2:?}
pm=$build/bin/perfmark
dir=$build/read-guard
rm -rf "$dir"
mkdir -p "$dir"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
unset PERFMARK_READ_TIMEOUT PERFMARK_REPORT_TIMEOUT PERFMARK_TEST_READ_DELAY_MS
fails=0
fail() { echo "FAIL $*"; fails=$((fails + 1)); }
now() { date +%s.%N; }
# within T0 LO HI: the time since T0 is in [LO, HI] seconds
within() { awk -v t0="$1" -v t1="$(now)" -v lo="$2" -v hi="$3" \
             'BEGIN { d = t1 - t0; printf "%.2f", d; exit !(d >= lo && d <= hi) }'; }

/usr/bin/python3 "$src/tests/report/make_fixture.py" "$dir/full.h5" full || exit 1
for p in "$src"/tests/fuzz/repro/*.patch; do
  "$build/tests/fuzz_mutants" patch "$dir/full.h5" "$dir/$(basename "$p" .patch).h5" "$p" || exit 1
done
attr=$dir/global-heap-attr.h5 table=$dir/global-heap-table.h5 crash=$dir/vlen-heap-crash.h5
obj_attr="reading attribute 'perfmark_version' of /"
obj_table="of dataset '/regions'"

# expect NAME WANT_RC LO HI OBJECT CMD...: status, time, one line with the
# file, the object and "damaged"
expect() {
  local name=$1 want=$2 lo=$3 hi=$4 obj=$5 t0 d rc
  shift 5
  t0=$(now)
  "$@" >"$dir/out" 2>"$dir/err"
  rc=$?
  d=$(within "$t0" "$lo" "$hi") || fail "$name: took $d s, not $lo-$hi s"
  [ "$rc" -eq "$want" ] || fail "$name: status $rc, not $want"
  [ "$(wc -l <"$dir/err")" -eq 1 ] || fail "$name: not one line: $(cat "$dir/err")"
  grep -qF -- "$obj" "$dir/err" || fail "$name: no '$obj' in: $(cat "$dir/err")"
  grep -q "damaged" "$dir/err" || fail "$name: does not say damaged: $(cat "$dir/err")"
  echo "ok   $name ($d s): $(head -c 300 "$dir/err")"
}

echo "== stuck: HDF5 loops on the reproducers"
for f in text csv json html; do
  expect "attr --format $f" 1 0.9 4 "$obj_attr" "$pm" report "$attr" --format "$f" --read-timeout 1
done
expect "attr --by thread" 1 0.9 4 "$obj_attr" "$pm" report "$attr" --by thread --read-timeout 1
expect "table --format json" 1 0.9 4 "$obj_table" "$pm" report "$table" --format json --read-timeout 1
expect "table --by rank" 1 0.9 4 "$obj_table" "$pm" report "$table" --by rank --read-timeout 1
expect "diff full attr" 2 0.9 4 "$attr" "$pm" diff "$dir/full.h5" "$attr" --read-timeout 1
expect "diff table full" 2 0.9 4 "$obj_table" "$pm" diff "$table" "$dir/full.h5" --read-timeout 1
# HDF5 crashes on this one: the diff (which reads both files again after the
# check) must say so in one line too, in either order
expect "diff full crash" 2 0 4 "crashed reading it" "$pm" diff "$dir/full.h5" "$crash"
expect "diff crash full" 2 0 4 "crashed reading it" "$pm" diff "$crash" "$dir/full.h5"
expect "report crash" 1 0 4 "crashed reading it" "$pm" report "$crash" --format html
expect "PERFMARK_READ_TIMEOUT=1" 1 0.9 4 "no progress for 1 s" \
  env PERFMARK_READ_TIMEOUT=1 "$pm" report "$attr"
expect "PERFMARK_REPORT_TIMEOUT=1 (a total cap)" 1 0.9 4 "after 1 s (PERFMARK_REPORT_TIMEOUT)" \
  env PERFMARK_READ_TIMEOUT=0 PERFMARK_REPORT_TIMEOUT=1 "$pm" report "$attr"
# The default budget follows the size: 10 s + 1 s per 100 MB. A 300 MB
# sparse copy (HDF5 ignores the bytes past its end of data) gets 13 s.
cp "$attr" "$dir/big.h5" && truncate -s 300000000 "$dir/big.h5"
expect "default budget of a 300 MB file" 1 12.9 17 "no progress for 13 s" "$pm" report "$dir/big.h5"

echo "== a parent killed from outside takes its child along"
PERFMARK_READ_TIMEOUT=0 "$pm" report "$attr" >/dev/null 2>&1 &
parent=$!
# the child is forked once the report starts: look for it, a while at most
child=
for _ in $(seq 100); do
  child=$(pgrep -P "$parent") && break
  sleep 0.1
done
kill -KILL "$parent"
wait "$parent" 2>/dev/null
sleep 0.5
if [ -z "$child" ]; then
  fail "no child process found under the report"
elif [ -r "/proc/$child/stat" ] && ! awk '{ exit $3 != "Z" }' "/proc/$child/stat"; then
  # gone, or a zombie (a container's PID 1 may never reap it): ended either way
  fail "child $child still running after its parent was killed"
  kill -KILL "$child"
else
  echo "ok   child $child ended with its parent"
fi

echo "== moving: slow reads are never stopped"
"$pm" report "$dir/full.h5" >"$dir/fast.txt" || fail "full.h5 not reported"
"$pm" report "$dir/full.h5" --by thread >"$dir/fast-by.txt" || fail "full.h5 --by not reported"
for by in region thread; do
  t0=$(now)
  PERFMARK_TEST_READ_DELAY_MS=100 "$pm" report "$dir/full.h5" --by "$by" --read-timeout 1.5 \
    >"$dir/slow.txt" 2>"$dir/err"
  rc=$?
  # many steps of 100 ms each: the read takes several times the budget
  d=$(within "$t0" 4.5 120) || fail "slow --by $by: took $d s, not several budgets"
  want=$dir/fast.txt
  [ "$by" = thread ] && want=$dir/fast-by.txt
  if [ "$rc" -ne 0 ] || ! cmp -s "$want" "$dir/slow.txt"; then
    fail "slow --by $by: status $rc or another report: $(cat "$dir/err")"
  else
    echo "ok   slow --by $by: reported in $d s with a 1.5 s stall budget"
  fi
done

echo "== mpirun -np 2"
mpi=(mpirun -np 2 --oversubscribe)
t0=$(now)
"${mpi[@]}" "$pm" report "$attr" --read-timeout 1 >"$dir/out" 2>"$dir/err"
rc=$?
d=$(within "$t0" 0.9 15) || fail "mpirun stuck: took $d s"
[ "$rc" -eq 1 ] || fail "mpirun stuck: status $rc, not 1"
grep -F "perfmark report: $attr: rank" "$dir/err" | grep -qF "$obj_attr" ||
  fail "mpirun stuck: no message naming the file and object: $(head -5 "$dir/err")"
[ "$rc" -eq 1 ] && echo "ok   mpirun stuck: status 1 in $d s: $(grep -m1 "perfmark report" "$dir/err")"
t0=$(now)
PERFMARK_TEST_READ_DELAY_MS=100 "${mpi[@]}" -x PERFMARK_TEST_READ_DELAY_MS "$pm" report \
  "$dir/full.h5" --read-timeout 1.5 >"$dir/slow.txt" 2>"$dir/err"
rc=$?
d=$(within "$t0" 4.5 120) || fail "mpirun slow: took $d s, not several budgets"
if [ "$rc" -ne 0 ] || ! cmp -s "$dir/fast.txt" "$dir/slow.txt"; then
  fail "mpirun slow: status $rc or another report: $(head -5 "$dir/err")"
else
  echo "ok   mpirun slow: the same report in $d s with a 1.5 s stall budget"
fi

if [ "$fails" -gt 0 ]; then
  echo "read_guard: $fails failures"
  exit 1
fi
echo "read_guard: all checks passed"
