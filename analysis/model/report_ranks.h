/*
 * report_ranks.h — the report across ranks (report_ranks.c): each region's
 * quantities compared across ranks, the MPI functions summed over every path
 * they were called from, each rank's MPI share.
 */
#ifndef PM_REPORT_RANKS_H
#define PM_REPORT_RANKS_H

#include "model/report_count.h"

#include <stddef.h>
#include <stdint.h>

struct pm_file;

/* Bins of the histogram over ranks (pm_xstat.hist): [0] values below 1,
 * [k] values in [2^(k-1), 2^k) for k = 1..64. Fixed edges: histograms of
 * ranks folded anywhere add up bin by bin. */
#define PM_XHIST 65

/* The quantities of a region compared across ranks; event e is at
 * PM_Q_EVENTS + e. */
enum { PM_Q_VISITS, PM_Q_WALL, PM_Q_BYTES, PM_Q_BYTES_UNKNOWN, PM_Q_EVENTS };

/* One quantity across ranks. A rank's value is the sum over its threads of
 * their cells (events scaled per cell like everywhere else); min/mean/max
 * are over the ranks that entered the region and have a value. */
struct pm_xstat {
    int has_total;
    double total; /* over every rank and cell */
    size_t nspread; /* ranks behind min/mean/max; 0 = none */
    double min, mean, max;
    int32_t min_rank, max_rank; /* the lowest rank holding the min / the max */
    int has_imbalance; /* mean > 0 */
    double imbalance;  /* max / mean */
    int estimate, untrusted;
    size_t n_na; /* ranks that entered but have no value */
    double sd;   /* added with issue 6: population stddev over the same ranks */
    uint32_t hist[PM_XHIST]; /* the ranks behind the spread by their value's octave */
};
/* The bin of a value (PM_XHIST). */
size_t pm_xhist_bin(double v);

/* A region, or an MPI function summed over every path it was called from. */
struct pm_xregion {
    const char *name;
    size_t entered;     /* ranks with visits > 0 */
    struct pm_xstat *q; /* [PM_Q_EVENTS + E]; MPI functions: [PM_Q_EVENTS] */
};

struct pm_mpishare {
    int32_t rank;
    int estimate;      /* some of mpi_ns is extrapolated from sampled visits */
    uint64_t mpi_ns;   /* wall time of its outermost MPI cells, summed over its threads */
    uint64_t total_ns; /* its longest thread's /thread/wall_ns */
    int has_share;     /* total_ns > 0 */
    double share;      /* mpi_ns / total_ns; above 1 when threads overlap in MPI */
};

struct pm_rankstat {
    struct pm_evstat proc; /* the inherited set */
    struct pm_evstat sum;  /* Σ per-thread totals of the threads of that row */
};

/* One rank's running sum of one quantity of one region: what pm_acc keeps
 * for a total, without the spread (report_stream.c, report_ranks.c). */
struct pm_rq {
    pm_fix sum; /* exact (exact_sum.h): a rank's threads may come in several blocks */
    uint32_t nvals;
    uint32_t n_na : 30, estimate : 1, untrusted : 1;
};
void pm_rq_add(struct pm_rq *q, uint64_t raw, uint64_t en, uint64_t run, int visited);
/* The same for a cell's time (pm_cell_time): kind says exact, estimate or none. */
void pm_rq_add_time(struct pm_rq *q, enum pm_vkind kind, uint64_t ns, int visited);

/* Running state of a pm_xstat while ranks are folded in (report_ranks.c). */
struct pm_xacc {
    size_t vals, cells_na;
    int frac;           /* fraction bits of its sums: 0 = PM_FIX_FRAC, or a share's */
    pm_fix total;       /* over every rank */
    pm_fix sum;         /* over the ranks behind the spread */
    struct pm_fixsq sq; /* their squares */
};

/* The report across ranks: what pm_report_ranks_setup sets up for the
 * streaming (report_stream.c) and the statistics it folds ranks into
 * (report_model.h: pm_report.xr). */
struct pm_xranks {
    int multi_rank;           /* the job had, or the file holds, more than one rank */
    size_t nranks;            /* distinct /threads rank values */
    int32_t *ranks;           /* [nranks] ascending */
    uint32_t *thread_rank;    /* [T] index into ranks (4 bytes: grows with the threads) */
    struct pm_xregion *xreg;  /* [R] by row */
    struct pm_xregion *mpif;  /* [nmpif] MPI functions, most time first */
    size_t nmpif;
    struct pm_xstat *xq;      /* storage behind xreg[].q and mpif[].q */
    struct pm_mpishare *share; /* [nranks] */
    struct pm_xstat share_stat; /* the shares over the ranks that have one */
    int has_omp_wait;         /* the file has omp wait regions */
    struct pm_xstat *xexcl;   /* [R] exclusive time across ranks (multi_rank only) */
    struct pm_xstat *xomp;    /* [R] omp wait share across ranks (multi_rank, has_omp_wait) */
    size_t *mpi_fn;             /* [R] MPI function of a row, SIZE_MAX for other kinds */
    unsigned char *mpi_outer;   /* [R] no MPI region above it */
    size_t nwait;               /* OpenMP wait pairs (pm_omp_wait_pairs) */
    size_t *wait_above, *wait_row;
    size_t *mpi_rows, *mpi_start; /* rows of MPI function f: mpi_rows[mpi_start[f] ..
                                     mpi_start[f + 1]) */
    struct pm_xacc *xacc;       /* running state behind xreg, xexcl, xomp and mpif */
    struct pm_rq *xtmp;         /* [PM_Q_EVENTS] scratch: one rank's MPI function */
};

/* Rank index, MPI functions, OpenMP wait pairs and the statistics across
 * ranks, before any cell (pm_report_setup). Then, in ascending rank order,
 * each rank's sums once all its threads are in: rq [R][nq + 1] (PM_Q_*
 * quantities, then exclusive time), omp [R][2] (time in the region, OpenMP
 * wait below it), mpi_ns (time in outermost MPI regions). The report keeps
 * no rank's sums beyond that call: its memory is bounded by the ranks open
 * at once, not by the ranks of the file. pm_report_ranks_finish completes
 * the statistics after the last rank. */
int pm_report_ranks_setup(struct pm_xranks *x, const struct pm_file *d);
void pm_report_rank_done(struct pm_xranks *x, const struct pm_file *d, size_t k,
                         const struct pm_rq *rq, const uint64_t *omp, uint64_t mpi_ns,
                         int mpi_est);
void pm_report_ranks_finish(struct pm_xranks *x, const struct pm_file *d);

/* The running state of the statistics across ranks, for a summary
 * (report_state.h): the arrays of a pm_xranks before pm_report_ranks_finish
 * (xq and xacc of pm_xranks_nxq / _nxacc entries, xexcl and xomp [R],
 * entered [R + nmpif], share and ranks [nranks]). */
struct pm_xrun {
    const struct pm_xstat *xq, *xexcl, *xomp;
    const struct pm_xacc *xacc;
    const uint64_t *entered;
    const struct pm_mpishare *share;
    const int32_t *ranks;
    size_t nranks;
};
size_t pm_xranks_nxq(const struct pm_xranks *x, const struct pm_file *d);
size_t pm_xranks_nxacc(const struct pm_xranks *x, const struct pm_file *d);
/* x's state as a pm_xrun (entered: [R + nmpif] of the caller's). */
void pm_xranks_run(const struct pm_xranks *x, const struct pm_file *d, uint64_t *entered,
                   struct pm_xrun *out);
/* Ranks folded elsewhere, all above x's, into x: as if folded here in
 * order. 0, or -1 out of memory. Before pm_report_ranks_finish. */
int pm_report_ranks_join(struct pm_xranks *x, const struct pm_file *d, const struct pm_xrun *b);
void pm_report_ranks_free(struct pm_xranks *x);

#endif /* PM_REPORT_RANKS_H */
