/*
 * series.h — counts over time (/series, docs/hdf5-schema.md) as the report
 * shows them: the rows of every thread put into bins of one width (the
 * coarsest interval the file kept, widened when there would be more than
 * PM_SERIES_MAX_BINS), per rank (a rank's value: the sum over its threads,
 * scaled like every count: raw x enabled / running) and for the job: the
 * total, and the min and max over ranks of each bin (imbalance over time).
 * The first PM_SERIES_RANKS ranks are kept bin by bin, with the region their
 * first thread was in at the end of each bin.
 */
#ifndef PM_SERIES_MODEL_H
#define PM_SERIES_MODEL_H

#include "h5read.h"

#include <stddef.h>
#include <stdint.h>

#define PM_SERIES_MAX_BINS 2000
#define PM_SERIES_RANKS 64

struct pm_series_view {
    uint64_t asked_ns;    /* PERFMARK_INTERVAL */
    uint64_t kept_ns;     /* the coarsest interval a thread's rows have */
    uint64_t bin_ns;      /* the bins' width: kept_ns, or wider */
    uint64_t t0_ns;       /* CLOCK_REALTIME at the start of bin 0 (half an interval
                             before the first reading: bin b holds the interval
                             that ends about (b + 1) x bin_ns after the start) */
    size_t nbins, E;
    size_t nranks;        /* ranks with rows */
    double *total;        /* [nbins * E] summed over ranks */
    int *estimate;        /* [nbins * E] some part was scaled (multiplexed) */
    int *untrusted;       /* [nbins * E] some part was not counted or lost */
    double *min, *max;    /* [nbins * E] over the ranks (0 for a rank without rows there) */
    int32_t *min_rank, *max_rank; /* [nbins * E] the rank of each (lowest on ties) */
    size_t nshown;        /* ranks kept bin by bin */
    int32_t *shown_rank;  /* [nshown] */
    double *rank_value;   /* [nshown * nbins * E] */
    int32_t *rank_region; /* [nshown * nbins] its first thread's region at the bin's end, -1 */
    uint64_t rows, flagged_rows; /* rows read, rows flagged LOST_GENERATION */
    uint64_t bad_rows;    /* rows naming a thread or region the file does not have: left out */
};

/* The series of file d (streamed: pm_file_open), or NULL with err "" when
 * it has none, NULL with err set on failure. thread_rank[t]: rank index
 * of thread row t among ranks[nranks] (ascending). */
struct pm_series_view *pm_series_build(const struct pm_file *d, const uint32_t *thread_rank,
                                       const int32_t *ranks, size_t nranks, char *err,
                                       size_t errlen);
void pm_series_free(struct pm_series_view *s);

/* The end of the interval of bin b - 1 (b >= 1), in seconds since the
 * start of the first interval. */
static inline double pm_series_bin_s(const struct pm_series_view *s, size_t b)
{
    return (double)b * (double)s->bin_ns / 1e9;
}

#endif
