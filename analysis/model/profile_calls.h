/*
 * profile_calls.h — a region's sampled call paths read as a call graph: per
 * function, the samples whose path goes through it (inclusive, once per
 * sample however often it recurses) and those that fell in it (self); and
 * for the functions with the most samples of their own, who called them
 * and whom they called, with the samples on each edge.
 *
 * Frames that every path of the region passes through without samples of
 * their own (_start, main above a single call...) say nothing and are
 * left out of the inclusive list (counted in `passthrough`).
 */
#ifndef PM_PROFILE_CALLS_H
#define PM_PROFILE_CALLS_H

#include <stddef.h>
#include <stdint.h>

#define PM_PROF_CALLS 10  /* functions kept by inclusive samples */
#define PM_PROF_HOT 3     /* functions whose callers and callees are kept */
#define PM_PROF_EDGES 5   /* callers (callees) kept per hot function */

struct pm_prof_incl {
    size_t frame;          /* into pm_profile.frame */
    uint64_t inclusive, self;
};

struct pm_prof_edge {
    size_t frame;
    uint64_t samples;      /* samples whose path has this call */
};

struct pm_prof_hot {
    size_t frame;
    uint64_t self, inclusive;
    size_t ncallers, ncallees;
    struct pm_prof_edge callers[PM_PROF_EDGES], callees[PM_PROF_EDGES];
};

struct pm_prof_calls {
    size_t nincl, nhot;
    struct pm_prof_incl incl[PM_PROF_CALLS];
    struct pm_prof_hot hot[PM_PROF_HOT];
    size_t passthrough;    /* frames on every path, no samples of their own */
};

/* A call path's frames (ids of frame names), outermost caller first, the
 * sampled function last. */
struct pm_path_frames {
    size_t *frame;
    uint32_t n;
};

/* One of a region's call paths with its samples. */
struct pm_path_count {
    size_t path;           /* into the pm_path_frames array */
    uint64_t samples;
};

/* The call graph of a region's paths into *out. 0, or -1 out of memory. */
int pm_prof_calls_build(const struct pm_path_count *paths, size_t n,
                        const struct pm_path_frames *frames, struct pm_prof_calls *out);

#endif /* PM_PROFILE_CALLS_H */
