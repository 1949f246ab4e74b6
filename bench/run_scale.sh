#!/usr/bin/env bash
# bench/run_scale.sh BUILD_DIR [SIZES...] — how the job's file and its write
# grow with ranks (issue 42). For each job size (default 2 4 8 16 32 64 128
# 256 ranks, oversubscribed on this machine), an MPI job of idle ranks, each
# with 2 threads x 50 regions, under `perfmark run -e sw` (4 events):
#   - perfmark's own time inside MPI_Finalize, by phase, from its own
#     timestamps (PERFMARK_JOB_TIMES, runtime/job/pm_job_write.c), and rank
#     0's CPU time in it;
#   - rank 0's and the last rank's resident set before the write and at its
#     peak (the peak is the process's, the write's share is the difference);
#   - the file's size;
#   - `perfmark report`'s wall time and peak RSS on it.
# Then a least-squares fit of size and rank 0's time against ranks, and the
# same figures extrapolated to 10^4 and 10^5 ranks x 64 threads (cells scale:
# threads x regions x events per rank). Prints figures; never fails on timing.
set -u
build=${1:?usage: $0 BUILD_DIR [SIZES...]}
shift
sizes=${*:-2 4 8 16 32 64 128 256}
bench=$build/bin/bench_finalize
perfmark=$build/bin/perfmark
threads=2 regions=50 events=4
tmp=$(mktemp -d "${TMPDIR:-/tmp}/perfmark-scale.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_mpi_yield_when_idle=1
# Shared memory only: 256 ranks on 2 CPUs need no network; sm's per-peer
# buffers are what grows, and they are the MPI's, not perfmark's.
export OMPI_MCA_btl=self,vader
mpirun=(mpirun --oversubscribe --bind-to none)

# field NAME LINE: the value after NAME in a PERFMARK_JOB_TIMES line
field() { awk -v k="$1" '{ for (i = 1; i < NF; i++) if ($i == k) { print $(i + 1); exit } }' <<< "$2"; }

printf '%6s %9s %9s | %8s %8s %8s %8s %8s %8s | %9s %9s %9s %9s | %8s %9s\n' \
  ranks file_kB B/rank total_s cpu_s agree_s rows_s gather_s build_s \
  r0_rss_MB r0_write_MB rN_rss_MB rN_write_MB report_s report_MB
: > "$tmp/fit"
for np in $sizes; do
  times=$tmp/times.$np out=$tmp/np$np.h5
  PERFMARK_JOB_TIMES=$times timeout 1200 "$perfmark" run -q -e sw -o "$out" -- \
    "${mpirun[@]}" -np "$np" "$bench" "$threads" "$regions" > "$tmp/app.$np" 2>&1
  if [ ! -f "$out" ] || [ ! -s "$times" ]; then
    echo "np $np: no job file or no timings (see below)" >&2
    tail -5 "$tmp/app.$np" >&2
    continue
  fi
  r0=$(grep '^rank 0 ' "$times") rn=$(grep -v '^rank 0 ' "$times" | head -1)
  [ -n "$rn" ] || rn=$r0
  bytes=$(stat -c %s "$out")
  /usr/bin/time -f "%e %M" -o "$tmp/rtime" "$perfmark" report "$out" > /dev/null 2>&1
  read -r rep_s rep_kb < "$tmp/rtime"
  awk -v np="$np" -v b="$bytes" -v tot="$(field total_s "$r0")" -v cpu="$(field cpu_s "$r0")" -v ag="$(field agree_s "$r0")" \
      -v ro="$(field rows_s "$r0")" -v ga="$(field gather_s "$r0")" -v bu="$(field build_s "$r0")" \
      -v r0b="$(field rss_before_kB "$r0")" -v r0p="$(field peak_rss_kB "$r0")" \
      -v rnb="$(field rss_before_kB "$rn")" -v rnp="$(field peak_rss_kB "$rn")" \
      -v rs="$rep_s" -v rk="$rep_kb" 'BEGIN {
    printf "%6d %9.1f %9.0f | %8.3f %8.3f %8.3f %8.3f %8.3f %8.3f | %9.1f %9.1f %9.1f %9.1f | %8.2f %9.1f\n",
      np, b / 1024, b / np, tot, cpu, ag, ro, ga, bu, r0p / 1024, (r0p - r0b) / 1024,
      rnp / 1024, (rnp - rnb) / 1024, rs, rk / 1024 }'
  echo "$np $bytes $(field agree_s "$r0") $(field cpu_s "$r0") 0 $(field rss_before_kB "$r0") $(field peak_rss_kB "$r0")" >> "$tmp/fit"
done

# A summary job (PERFMARK_DETAIL=summary): the gather column is the whole
# summary (each rank's own file, the engine, the tree, the kept ranks'
# rows); the file stops growing once the kept ranks reach their cap, and
# rank 0's CPU time grows with the rounds of the tree: fitted as
# c + d x log2(ranks) and extrapolated (rows and regions as measured).
if [ "${PERFMARK_DETAIL:-}" = summary ]; then
  awk '
  function log2(x) { return log(x) / log(2) }
  { n++; x[n] = log2($1); y[n] = $4; s[n] = $2 }
  END {
    if (n < 2) { print "fewer than 2 sizes measured: no fit"; exit }
    for (i = 1; i <= n; i++) { sx += x[i]; sy += y[i]; sxx += x[i] ^ 2; sxy += x[i] * y[i] }
    d = (n * sxy - sx * sy) / (n * sxx - sx * sx); c = (sy - d * sx) / n
    printf "\nsummary: rank 0 CPU in the write = %.1f ms + %.2f ms per log2(ranks) round; file %.0f kB at %d ranks\n",
      c * 1e3, d * 1e3, s[n] / 1024, 2 ^ x[n]
    printf "extrapolated rank 0 CPU, 10^4 ranks: %.0f ms; 10^5 ranks: %.0f ms (this run'"'"'s rows and regions)\n",
      (c + d * log2(10000)) * 1e3, (c + d * log2(100000)) * 1e3
  }' "$tmp/fit"
  exit 0
fi

# The model (docs/design.md, "Jobs at scale"): the file grows as a + b x
# ranks; rank 0's gather and build as its bytes (one writer: least squares
# through the origin, time per byte); its extra memory as its bytes; the
# agreement as log2(ranks) rounds. Extrapolated to 10^4 and 10^5 ranks x 64
# threads (a rank's cells scale with its threads), at this run's 50 regions
# x 4 events and at 200 regions x 8 events. Oversubscribed ranks inflate
# the agreement's latency here (256 processes on 2 CPUs take turns): its
# fit is an upper bound. Rank 0's time per byte is its CPU time in the
# write (waiting for its turn on a CPU is not counted).
awk -v th="$threads" -v rg="$regions" -v ev="$events" '
function log2(x) { return log(x) / log(2) }
{ n++; x[n] = $1; s[n] = $2; ag[n] = $3; w[n] = $4 + $5; m[n] = ($7 - $6) * 1024 }
END {
  if (n < 2) { print "fewer than 2 sizes measured: no fit"; exit }
  for (i = 1; i <= n; i++) {
    sx += x[i]; ss += s[i]; sxx += x[i] * x[i]; sxs += x[i] * s[i]
    sbw += s[i] * w[i]; sbb += s[i] * s[i]; sbm += s[i] * m[i]
    sl += log2(x[i]) * ag[i]; sll += log2(x[i]) ^ 2
  }
  d = n * sxx - sx * sx
  bs = (n * sxs - sx * ss) / d; as = (ss - bs * sx) / n
  tpb = sbw / sbb; mpb = sbm / sbb; agr = sl / sll
  cells = th * rg * ev
  printf "\nfit: file = %.0f B + %.0f B/rank (%d cells/rank: %.1f B/cell)\n", as, bs, cells, bs / cells
  printf "     rank 0 CPU time in the write: %.1f ns per file byte; rank 0 extra memory: %.1f B per file byte; agreement: %.1f ms per log2(ranks) round (oversubscribed)\n",
    tpb * 1e9, mpb, agr * 1e3
  split("10000 100000", R, " "); split("50 200", RG, " "); split("4 8", EV, " ")
  for (c = 1; c <= 2; c++)
    for (k = 1; k <= 2; k++) {
      r = R[k]; bytes = as + r * 64 * RG[c] * EV[c] * bs / cells
      printf "extrapolated full file, %6d ranks x 64 threads x %3d regions x %d events: %8.1f GB; rank 0: CPU %7.0f s, %8.1f GB of memory; agreement %.2f s\n",
        r, RG[c], EV[c], bytes / 1e9, bytes * tpb, bytes * mpb / 1e9, agr * log2(r)
    }
}' "$tmp/fit"
