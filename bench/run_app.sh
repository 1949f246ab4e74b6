#!/usr/bin/env bash
# bench/run_app.sh BUILD_DIR [--rounds R] [--apps LIST]
#
# What perfmark costs whole applications (issue "Real applications measured
# at a few percent"): each one plain, under `perfmark run -e none`, under
# `perfmark run -e sw`, sampling only (`-e none --sample cpu-clock@1ms`,
# issue "Sampling") and counts over time (`-e sw --interval 10ms`, issue
# "Over time") and, as the floor of any perf_event tool, `perf stat` counting
# the same software events as -e sw over the whole job (where perf can), all
# interleaved in every round (the order rotates so that drift hits all
# alike), the median time of R rounds, and each mode's ratio against the
# plain run of the same app as the median of its R per-round ratios.
#
#   hpcc     Debian's hpcc (HPC Challenge), 2 ranks, its tiny input (N=1000,
#            NB=64, a 1x2 grid): its RandomAccess phase polls with ~4 M
#            MPI_Testany calls. Skipped if hpcc is not installed.
#   omp      bench/app_omp: 10^5 parallel loops of ~25 us (2 threads, clang +
#            libomp, so the OMPT tool is active under perfmark)
#   omp_fine the same with ~3 us loops (for information: libomp's own OMPT
#            cost is a fixed ~0.2 us per construct, bench/run_omp.sh)
#   markers  bench/app_markers: 10^6 visits of a tiny user region
#   hello    bench/app_mpi_hello, 2 ranks: MPI_Init and MPI_Finalize only,
#            hpcc's fixed part (added whenever hpcc runs)
#   omp_gcc  app_omp built with gcc (libgomp: its constructs through its entry
#            points, wrappers/gomp), beside the clang build
#   omp1_gcc the same with one loop (added whenever omp_gcc runs)
#   elk      Debian's elk-lapw (GCC: gfortran, libgomp, Open MPI), 2 ranks x
#            2 threads, its ground state of aluminium (examples/basic/Al):
#            a real MPI + OpenMP code with nested teams (~75 short-lived
#            libgomp threads per rank). OMP_WAIT_POLICY=passive: 4 threads
#            spin-waiting on 2 vCPUs would time the spinning. Skipped if
#            elk-lapw is not installed (not in the default list).
#   omp1     app_omp with one parallel loop: omp's fixed part (added
#            whenever omp runs)
#
# Targets (hpcc and omp): -e sw <= 1.05x plain, -e none <= 1.02x plain;
# sampling cpu-clock@1ms <= 1.03x plain; --interval 10ms <= 1.02x plain (its
# own part: ivl/sw, the same run with and without the series).
# Where the time goes with -e none: bench/README.md, "Whole applications".
# Timings are wall clock of the whole command (launch, run, file write).
# Each run starts after --settle S seconds (default 1.2) without a command:
# the kernel switches its perf scheduling hooks off 1 s after the last perf
# event on the machine closed, and the next first open waits for an RCU
# grace period (4-14 ms here), as a batch job's first command does. With
# --settle 0 a run may find the hooks still on from the run before.
# Where the cost goes: for hpcc and omp, each mode's median per-round
# difference to plain, split into the fixed part (the same mode's cost on
# hello or omp1: start, the writer's load, the file at the end) and the
# rest (what grows with the run), each as a share of the app's plain time.
# Exit 0 when everything ran, 1 when a run failed.
set -u
usage() { echo "usage: $0 BUILD_DIR [--rounds R] [--apps 'hpcc omp omp_gcc omp_fine markers hello omp1 omp1_gcc elk'] [--settle S]" >&2; exit "${1:-1}"; }
[ $# -ge 1 ] || usage
case $1 in -h|--help) usage 0 ;; esac
build=$(CDPATH= cd -- "$1" 2>/dev/null && pwd) || { echo "$0: $1: not a build directory" >&2; usage; }
shift
[ -x "$build/bin/perfmark" ] || { echo "$0: $build/bin/perfmark not found: build perfmark first" >&2; exit 1; }
rounds=5
settle=1.2
apps="hpcc omp omp_gcc omp_fine markers"
while [ $# -gt 0 ]; do
  case $1 in
    --rounds) [ $# -ge 2 ] || usage; rounds=$2; shift 2 ;;
    --apps)   [ $# -ge 2 ] || usage; apps=$2; shift 2 ;;
    --settle) [ $# -ge 2 ] || usage; settle=$2; shift 2 ;;
    -h|--help) usage 0 ;;
    *) usage ;;
  esac
done
case $rounds in ''|*[!0-9]*|0) echo "$0: --rounds wants a whole number of at least 1" >&2; exit 1 ;; esac
perfmark=$build/bin/perfmark
tmp=$(mktemp -d "${TMPDIR:-/tmp}/perfmark-bench-app.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

# hpcc reads hpccinf.txt from its working directory: the HPL sample input
# with N=1000, NB=64 and a 1x2 process grid.
write_hpccinf() {
  cat >"$1/hpccinf.txt" <<'EOF'
HPLinpack benchmark input file
Innovative Computing Laboratory, University of Tennessee
HPL.out      output file name (if any)
8            device out (6=stdout,7=stderr,file)
1            # of problems sizes (N)
1000         Ns
1            # of NBs
64           NBs
0            PMAP process mapping (0=Row-,1=Column-major)
1            # of process grids (P x Q)
1            Ps
2            Qs
16.0         threshold
1            # of panel fact
2            PFACTs (0=left, 1=Crout, 2=Right)
1            # of recursive stopping criterium
4            NBMINs (>= 1)
1            # of panels in recursion
2            NDIVs
1            # of recursive panel fact.
1            RFACTs (0=left, 1=Crout, 2=Right)
1            # of broadcast
1            BCASTs (0=1rg,1=1rM,2=2rg,3=2rM,4=Lng,5=LnM)
1            # of lookahead depth
1            DEPTHs (>=0)
2            SWAP (0=bin-exch,1=long,2=mix)
64           swapping threshold
0            L1 in (0=transposed,1=no-transposed) form
0            U  in (0=transposed,1=no-transposed) form
1            Equilibration (0=no,1=yes)
8            memory alignment in double (> 0)
##### This line (no. 32) is ignored (it serves as a separator). ######
0                      		Number of additional problem sizes for PTRANS
1200 10000 30000        	values of N
0                       	number of additional blocking sizes for PTRANS
40 9 8 13 13 20 16 32 64       	values of NB
EOF
}

# elk reads elk.in from its working directory: Debian's aluminium ground
# state, its species path pointed at the installed species files.
elk_example=/usr/share/doc/elk-lapw/examples/basic/Al/elk.in
elk_species=/usr/share/elk-lapw/species
write_elk_in() {
  sed "s#'[^']*species/'#'$elk_species/'#" "$elk_example" >"$1/elk.in"
}

# The command line of an app (run in its own directory $tmp/APP).
app_cmd() {
  case $1 in
    hpcc)     echo "mpirun -np 2 hpcc" ;;
    omp)      echo "env OMP_NUM_THREADS=2 OMP_PROC_BIND=close OMP_PLACES=cores $build/bin/app_omp 100000 65536" ;;
    omp_fine) echo "env OMP_NUM_THREADS=2 OMP_PROC_BIND=close OMP_PLACES=cores $build/bin/app_omp 100000 8192" ;;
    markers)  echo "$build/bin/app_markers 1000000" ;;
    hello)    echo "mpirun -np 2 $build/bin/app_mpi_hello" ;;
    omp1)     echo "env OMP_NUM_THREADS=2 OMP_PROC_BIND=close OMP_PLACES=cores $build/bin/app_omp 1 65536" ;;
    omp_gcc)  echo "env OMP_NUM_THREADS=2 OMP_PROC_BIND=close OMP_PLACES=cores $build/bin/app_omp_gcc 100000 65536" ;;
    omp1_gcc) echo "env OMP_NUM_THREADS=2 OMP_PROC_BIND=close OMP_PLACES=cores $build/bin/app_omp_gcc 1 65536" ;;
    elk)      echo "env OMP_NUM_THREADS=2 OMP_WAIT_POLICY=passive mpirun -np 2 --oversubscribe --bind-to none elk-lapw" ;;
  esac
}

available() {
  case $1 in
    hpcc)         command -v hpcc >/dev/null && command -v mpirun >/dev/null ;;
    omp|omp_fine|omp1) [ -x "$build/bin/app_omp" ] ;;
    omp_gcc|omp1_gcc) [ -x "$build/bin/app_omp_gcc" ] ;;
    hello)        [ -x "$build/bin/app_mpi_hello" ] && command -v mpirun >/dev/null ;;
    markers)      [ -x "$build/bin/app_markers" ] ;;
    elk)          command -v elk-lapw >/dev/null && command -v mpirun >/dev/null &&
                    [ -f "$elk_example" ] && [ -d "$elk_species" ] ;;
    *) echo "$0: unknown app '$1'" >&2; return 1 ;;
  esac
}

# one APP MODE: append the wall time in seconds of one run to $tmp/APP.MODE
one() {
  local app=$1 mode=$2 dir=$tmp/$1 t0 t1 rc
  local cmd; cmd=$(app_cmd "$app")
  rm -f "$dir"/*.h5 "$dir"/HPL.out "$dir"/hpccoutf.txt
  sleep "$settle"
  t0=$(date +%s%N)
  if [ "$mode" = plain ]; then
    (cd "$dir" && $cmd >"$dir/out.$mode" 2>"$dir/err.$mode")
  elif [ "$mode" = ivl ]; then
    (cd "$dir" && "$perfmark" run -q -e sw --interval 10ms -o "$dir/m.h5" -- $cmd \
       >"$dir/out.$mode" 2>"$dir/err.$mode")
  elif [ "$mode" = pstat ]; then
    (cd "$dir" && perf stat -x, -o "$dir/pstat.txt" -e "$sw_events" -- $cmd \
       >"$dir/out.$mode" 2>"$dir/err.$mode")
  elif [ "$mode" = smp ]; then
    (cd "$dir" && "$perfmark" run -q -e none --sample cpu-clock@1ms -o "$dir/m.h5" -- $cmd \
       >"$dir/out.$mode" 2>"$dir/err.$mode")
  else
    (cd "$dir" && "$perfmark" run -q -e "$mode" -o "$dir/m.h5" -- $cmd \
       >"$dir/out.$mode" 2>"$dir/err.$mode")
  fi
  rc=$?
  t1=$(date +%s%N)
  if [ $rc -ne 0 ]; then
    echo "$0: $app ($mode) failed with status $rc:" >&2
    tail -5 "$dir/err.$mode" >&2
    return 1
  fi
  if [ "$mode" != plain ] && [ "$mode" != pstat ] && [ ! -s "$dir/m.h5" ]; then
    echo "$0: $app ($mode): no perfmark file" >&2
    return 1
  fi
  [ "$mode" = sw ] && cp "$dir/m.h5" "$dir/last_sw.h5"
  echo "$(( (t1 - t0) / 1000 ))" >>"$tmp/$app.$mode"  # microseconds
}

median() { sort -g "$1" | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }

# The median over the rounds of each round's A/B (files of one time per
# round, in round order): what drifts between rounds hits both sides of a
# round alike and cancels (on a 2-vCPU VM the same command drifts by a few
# percent from minute to minute).
ratio() {
  local f; f=$(mktemp "$tmp/ratio.XXXXXX")
  paste "$1" "$2" | awk '{printf "%.6f\n", $1 / $2}' >"$f"
  median "$f"
  rm -f "$f"
}

# The median over the rounds of each round's A - B, in microseconds.
diffmed() {
  local f; f=$(mktemp "$tmp/diff.XXXXXX")
  paste "$1" "$2" | awk '{print $1 - $2}' >"$f"
  median "$f"
  rm -f "$f"
}

# The first quartile, median and third quartile of each round's ratio.
quartiles() {
  paste "$1" "$2" | awk '{print $1 / $2}' | sort -g |
    awk '{a[NR]=$1} END {q=int((NR+3)/4); printf "%.3f %.3f %.3f\n", a[q],
         (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2, a[NR+1-q]}'
}

# perf stat's events: perfmark's sw group (docs/event-groups.md)
# hpcc and omp bring the runs that tell their fixed part (where they can run)
case " $apps " in *" hpcc "*) case " $apps " in *" hello "*) ;; *)
  available hpcc 2>/dev/null && apps="$apps hello" ;; esac ;; esac
case " $apps " in *" omp "*) case " $apps " in *" omp1 "*) ;; *)
  available omp 2>/dev/null && apps="$apps omp1" ;; esac ;; esac
case " $apps " in *" omp_gcc "*) case " $apps " in *" omp1_gcc "*) ;; *)
  available omp_gcc 2>/dev/null && apps="$apps omp1_gcc" ;; esac ;; esac

sw_events=task-clock,page-faults,context-switches,cpu-migrations
modes="plain none sw smp ivl"
if command -v perf >/dev/null && perf stat -x, -o /dev/null -e "$sw_events" true 2>/dev/null; then
  modes="$modes pstat"
else
  echo "# perf stat cannot count $sw_events here: no pstat column"
fi
set -- $modes
nmodes=$#

status=0
ran=""
for app in $apps; do
  if ! available "$app"; then
    echo "# $app: not available here (hpcc: apt-get install hpcc; elk: apt-get install elk-lapw; app_omp: needs clang; hello: mpirun)"
    continue
  fi
  mkdir -p "$tmp/$app"
  [ "$app" = hpcc ] && write_hpccinf "$tmp/$app"
  [ "$app" = elk ] && write_elk_in "$tmp/$app"
  one "$app" plain >/dev/null || { status=1; continue; }  # warm the caches and the page cache
  rm -f "$tmp/$app.plain"
  ok=1
  for r in $(seq 1 "$rounds"); do
    set -- $modes $modes
    shift $((r % nmodes))
    order=""
    for k in $(seq 1 "$nmodes"); do order="$order $1"; shift; done
    for mode in $order; do
      one "$app" "$mode" || { ok=0; status=1; break 2; }
    done
  done
  [ $ok = 1 ] && ran="$ran $app"
done

printf "\n%-9s %8s %8s %8s %8s %8s %8s %8s %8s %8s %8s %8s %8s\n" app "plain s" "none s" \
  "none/pl" "sw s" "sw/pl" "sample s" "smp/pl" "ivl s" "ivl/pl" "ivl/sw" "pstat s" "pst/pl"
for app in $ran; do
  d=$tmp/$app
  p=$(median "$d.plain"); n=$(median "$d.none"); s=$(median "$d.sw")
  m=$(median "$d.smp"); i=$(median "$d.ivl")
  rn=$(ratio "$d.none" "$d.plain"); rs=$(ratio "$d.sw" "$d.plain")
  rsm=$(ratio "$d.smp" "$d.plain"); ri=$(ratio "$d.ivl" "$d.plain"); ris=$(ratio "$d.ivl" "$d.sw")
  ps=0 rps=0
  [ -s "$d.pstat" ] && ps=$(median "$d.pstat") && rps=$(ratio "$d.pstat" "$d.plain")
  awk -v a="$app" -v p="$p" -v n="$n" -v s="$s" -v m="$m" -v i="$i" -v ps="$ps" \
      -v rn="$rn" -v rs="$rs" -v rsm="$rsm" -v ri="$ri" -v ris="$ris" -v rps="$rps" \
    'BEGIN {printf "%-9s %8.3f %8.3f %8.3f %8.3f %8.3f %8.3f %8.3f %8.3f %8.3f %8.3f", a,
            p/1e6, n/1e6, rn, s/1e6, rs, m/1e6, rsm, i/1e6, ri, ris
            if (ps > 0) printf " %8.3f %8.3f\n", ps/1e6, rps; else printf " %8s %8s\n", "-", "-"}'
done
echo "targets (hpcc, omp): none/pl <= 1.02, sw/pl <= 1.05, smp/pl <= 1.03, ivl/sw <= 1.02"
echo "(sample = -e none --sample cpu-clock@1ms: sampling alone; ivl = -e sw --interval 10ms:"
echo " ivl/sw is the series' own part; pstat = perf stat over the whole command, counting"
echo " $sw_events: the kernel's own cost of counting, the floor of -e sw)"
printf "\n(times: medians of %d interleaved rounds, wall time of the whole command; ratios:\n" "$rounds"
echo " the median of each round's ratio, so that drift between rounds cancels)"
# A verdict only where the rounds can give one: met when even the third
# quartile of the rounds' ratios is within the target, missed when even the
# first is beyond it; otherwise this machine's noise is larger than what is
# judged, and it says so instead of printing a verdict from one median.
echo
echo "verdicts (each round's ratio; q1-q3: the middle half of the rounds):"
for app in $ran; do
  case $app in hpcc|omp) ;; *) continue ;; esac
  d=$tmp/$app
  # mode:target:floor (the series' target is its own part, ivl/sw)
  for mt in none:1.02:plain sw:1.05:plain smp:1.03:plain ivl:1.02:sw; do
    mode=${mt%%:*} floor=${mt##*:} target=${mt#*:}; target=${target%:*}
    set -- $(quartiles "$d.$mode" "$d.$floor")
    awk -v a="$app" -v m="$mode" -v f="$floor" -v t="$target" -v q1="$1" -v md="$2" -v q3="$3" 'BEGIN {
      v = (q3 <= t) ? "met" : (q1 > t) ? "missed" : "cannot tell here (the middle half spans the target)"
      printf "  %-5s %s/%s <= %.2f: median %.3f, q1-q3 %.3f-%.3f: %s\n", a, m, f, t, md, q1, q3, v }'
  done
  set -- $(quartiles "$d.pstat" "$d.plain" 2>/dev/null)
  [ -s "$d.pstat" ] && echo "  $app  perf stat alone (the kernel's floor): median $2, q1-q3 $1-$3"
done

# Where it goes: fixed per job (the same mode on hello / omp1) and the rest.
in_ran() { case " $ran " in *" $1 "*) return 0 ;; esac; return 1; }
pairs=""
for pair in hpcc:hello omp:omp1 omp_gcc:omp1_gcc; do
  in_ran "${pair%%:*}" && in_ran "${pair##*:}" && pairs="$pairs $pair"
done
[ -n "$pairs" ] && echo && echo "where the cost goes (median of each round's difference to plain; % of the app's plain time):"
for pair in $pairs; do
  app=${pair%%:*} base=${pair##*:}
  d=$tmp/$app b=$tmp/$base
  p=$(median "$d.plain")
  for mt in none:1.02 sw:1.05 smp:1.03; do
    mode=${mt%%:*} target=${mt##*:}
    all=$(diffmed "$d.$mode" "$d.plain"); fixed=$(diffmed "$b.$mode" "$b.plain")
    awk -v a="$app" -v b="$base" -v m="$mode" -v t="$target" -v p="$p" -v all="$all" -v fx="$fixed" 'BEGIN {
      printf "  %-5s %-9s %+7.1f ms (%4.1f %%): fixed %+6.1f ms (%4.1f %%, %s), the rest %+6.1f ms (%4.1f %%)\n",
             a, (m == "smp") ? "sampling" : "-e " m, all/1e3, 100*all/p, fx/1e3, 100*fx/p, b,
             (all-fx)/1e3, 100*(all-fx)/p
      if (fx / p > t - 1)
        printf "               the fixed part alone is over the %.2f target: a run of %.2f s cannot meet it here\n", t, p/1e6 }'
  done
  # perf stat split the same way: its rest is the kernel counting -e sw's
  # events while the app runs, the floor of -e sw's rest for any tool
  if [ -s "$d.pstat" ] && [ -s "$b.pstat" ]; then
    k=$(diffmed "$d.pstat" "$d.plain"); kf=$(diffmed "$b.pstat" "$b.plain")
    awk -v a="$app" -v b="$base" -v p="$p" -v k="$k" -v kf="$kf" 'BEGIN {
      printf "  %-5s %-9s %+7.1f ms (%4.1f %%): fixed %+6.1f ms (%4.1f %%, %s), the rest %+6.1f ms (%4.1f %%)\n",
             a, "perf stat", k/1e3, 100*k/p, kf/1e3, 100*kf/p, b, (k-kf)/1e3, 100*(k-kf)/p }'
  fi
done
if [ -n "$pairs" ]; then
  echo "(fixed = the same mode on a run that only starts and ends: perfmark run, the preload, the"
  echo " writer's load, the file; the rest grows with the run: per MPI call or OpenMP construct,"
  echo " counter reads, what the fixed work takes from a machine with every core busy; perf stat's"
  echo " rest is the kernel counting -e sw's events while the app runs, any tool's floor for -e sw)"
fi

for app in $ran; do
  f=$tmp/$app/last_sw.h5
  [ -s "$f" ] || continue
  line=$("$perfmark" report "$f" 2>/dev/null | grep -m1 "perfmark's reads" || true)
  [ -n "$line" ] && echo "$app -e sw: ${line# }"
done
exit $status
