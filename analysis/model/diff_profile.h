/*
 * diff_profile.h — `perfmark diff` of the sampled profiles (diff_profile.c):
 * for each event both files sampled (by name), the whole run and each
 * region pair found in both, the functions of either file's top list with
 * their share of the region's samples in A and in B, most changed first.
 * Informational: a shift in the profile is no regression by itself (the
 * threshold applies to the metrics).
 */
#ifndef PM_DIFF_PROFILE_H
#define PM_DIFF_PROFILE_H

#include "model/diff_model.h"
#include "model/profile.h"

#define PM_DPROF_MAX (2 * PM_PROF_TOP)

struct pm_dprof_fn {
    const char *label, *object;
    double share[2];       /* of the region's samples in A, B (0 when not in the top list) */
    uint64_t samples[2];
    int listed[2];         /* in the file's top list (else its share is below the list's last) */
    double change;         /* share B - share A */
};

struct pm_dprof_region {
    size_t pair;           /* index into df->pairs */
    uint64_t samples[2];
    double estimate[2];
    size_t nfn;
    struct pm_dprof_fn fn[PM_DPROF_MAX];  /* most changed first */
};

struct pm_dprof_event {
    const char *name, *unit;
    size_t e[2];           /* the event's row in A and B */
    size_t nreg;
    struct pm_dprof_region *reg;
};

struct pm_diff_profile {
    struct pm_profile *p[2];
    size_t nev;
    struct pm_dprof_event *ev;
};

/* After pm_diff_build: the profiles of both files compared; NULL (err "")
 * when they share no sampled event, NULL with err set on failure. */
struct pm_diff_profile *pm_diff_profiles(const struct pm_diff *df, char *err, size_t errlen);
void pm_diff_profile_free(struct pm_diff_profile *dp);

#endif
