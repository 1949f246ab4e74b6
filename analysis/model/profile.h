/*
 * profile.h — the sampled profile of a file (/samples, docs/hdf5-schema.md):
 * per region and sampled event, the functions and source lines its samples
 * fell in, most first, with their share of the region, the estimated count
 * (samples x period: an estimate, never shown as exact) and their spread
 * across ranks. A sample counts for its innermost region and, through the
 * tree, every enclosing one; "the whole run" holds every sample, including
 * those taken outside every region.
 *
 * Built after the report's pass over the cells (pm_profile_build), from the
 * hits a block at a time; names come from symbols.h.
 */
#ifndef PM_PROFILE_H
#define PM_PROFILE_H

#include "h5read.h"
#include "profile_calls.h"

#include <stddef.h>
#include <stdint.h>

#define PM_PROF_TOP 10   /* functions and lines kept per region and event */
#define PM_PROF_RUN SIZE_MAX /* the "region" of the whole run */

/* A function or a source line of a region, for one event. */
struct pm_prof_item {
    size_t id;            /* into pm_profile.fn or .line */
    uint64_t samples;     /* over every thread of every rank */
    double share;         /* of the region's samples */
    double estimate;      /* samples x period */
    /* across ranks: a rank's value is its threads' sum (0 for a rank
     * without any); has_ranks = 0 when hits were not in rank order */
    double rank_min, rank_mean, rank_max;
    int32_t rank_max_at;
};

/* One region (or the whole run) and one event. */
struct pm_prof_cell {
    uint64_t samples;      /* inclusive: its own and its subtree's */
    uint64_t self;         /* taken while it was the innermost region */
    uint64_t lost, throttled; /* inclusive, from /region/samples_lost, _throttled */
    double estimate;       /* samples x period */
    double rank_min, rank_mean, rank_max;
    int32_t rank_max_at;
    size_t nfn, nline, npath;
    struct pm_prof_item fn[PM_PROF_TOP], line[PM_PROF_TOP];
    /* call paths (files sampled with call chains): the callers, outermost
     * first, then the function; id into pm_profile.path */
    struct pm_prof_item path[PM_PROF_TOP];
    uint64_t with_path;    /* samples with a call path (the sum over every path) */
    struct pm_prof_calls *calls; /* its paths as a call graph; NULL without paths */
};

/* A function as the report names it. */
struct pm_prof_fn {
    char *label;      /* "spin_light", "inner (inlined in outer)", "obj+0x1a2b" */
    char *object;     /* the object's base name */
    int named;        /* 1 when a symbol gave the name */
};

struct pm_prof_line {
    char *label;      /* "file.c:42", or "?" */
    size_t fn;        /* the function holding it */
};

struct pm_prof_event {
    const char *name, *requested, *unit;
    uint64_t period;
};

struct pm_profile {
    size_t S, R;
    struct pm_prof_event *ev;  /* [S] */
    struct pm_prof_cell *cell; /* [(R + 1) * S]: region r at r * S + e, the run at R * S + e */
    struct pm_prof_fn *fn;
    size_t nfn;
    struct pm_prof_line *line;
    size_t nline;
    char **path;               /* "main > solve > kernel": callers, then the function */
    size_t npath;
    char **frame;              /* the names in call paths (pm_prof_calls' frame ids) */
    size_t nframe;
    int has_ranks;             /* the spread across ranks is known (hits in rank order) */
    size_t nranks;
    uint64_t bad_rows;         /* hits rows out of range: left out */
    char **notes;              /* objects that could not be read, and the like */
    size_t nnotes;
    int symbols;               /* this build names functions (elfutils) */
    int chains;                /* the file has call chains: a sample without one had no
                                  callers that could be found */
};

/* The profile of file d, or NULL with *err set (out of memory, a read that
 * failed); NULL with err "" when the file has no samples. thread_rank[t]:
 * the index in ranks[nranks] (ascending) of thread row t's rank. */
struct pm_profile *pm_profile_build(const struct pm_file *d, const uint32_t *thread_rank,
                                    const int32_t *ranks, size_t nranks, char *err,
                                    size_t errlen);
void pm_profile_free(struct pm_profile *p);

/* The cell of region row r (PM_PROF_RUN: the whole run) and event e. */
static inline const struct pm_prof_cell *pm_prof_cell(const struct pm_profile *p, size_t r,
                                                      size_t e)
{
    return &p->cell[(r == PM_PROF_RUN ? p->R : r) * p->S + e];
}

/* The relative error of an estimate from n samples at about 95 %
 * (2 sqrt(n) / n); 0 samples: 1 (no estimate). */
double pm_prof_rel_error(uint64_t n);

#endif
