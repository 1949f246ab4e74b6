/*
 * diff_profile.c — the sampled profiles of perfmark diff's two files
 * (diff_profile.h): each file's profile (profile.c), its events paired by
 * name, its regions by the diff's pairs, its functions by name and object.
 */
#include "model/diff_profile.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* thread_rank[t] and the ascending distinct ranks of a file (profile.h). */
static int pm_dp_ranks(const struct pm_file *d, uint32_t **thread_rank, int32_t **ranks,
                       size_t *nranks)
{
    *thread_rank = calloc(d->T + 1, sizeof **thread_rank);
    *ranks = calloc(d->T + 1, sizeof **ranks);
    if (!*thread_rank || !*ranks)
        return -1;
    size_t n = 0;
    for (size_t t = 0; t < d->T; t++) {
        int32_t r = d->tids[t].rank;
        size_t k = 0;
        while (k < n && (*ranks)[k] < r)
            k++;
        if (k == n || (*ranks)[k] != r) {
            memmove(*ranks + k + 1, *ranks + k, (n - k) * sizeof **ranks);
            (*ranks)[k] = r;
            n++;
        }
    }
    for (size_t t = 0; t < d->T; t++) {
        size_t lo = 0, hi = n;
        while (lo + 1 < hi) {
            size_t mid = (lo + hi) / 2;
            if ((*ranks)[mid] <= d->tids[t].rank)
                lo = mid;
            else
                hi = mid;
        }
        (*thread_rank)[t] = (uint32_t)lo;
    }
    *nranks = n;
    return 0;
}

static struct pm_profile *pm_dp_build(const struct pm_file *d, char *err, size_t errlen)
{
    uint32_t *thread_rank = NULL;
    int32_t *ranks = NULL;
    size_t nranks = 0;
    struct pm_profile *p = NULL;
    err[0] = '\0';
    if (pm_dp_ranks(d, &thread_rank, &ranks, &nranks) == 0)
        p = pm_profile_build(d, thread_rank, ranks, nranks, err, errlen);
    else
        snprintf(err, errlen, "out of memory");
    free(thread_rank), free(ranks);
    return p;
}

static int pm_dp_change_cmp(const void *x, const void *y)
{
    const struct pm_dprof_fn *a = x, *b = y;
    double ca = fabs(a->change), cb = fabs(b->change);
    if (ca != cb)
        return ca < cb ? 1 : -1;
    return strcmp(a->label, b->label);
}

static void pm_dp_region(const struct pm_diff_profile *dp, const struct pm_dprof_event *ev,
                         const size_t row[2], struct pm_dprof_region *out)
{
    for (int f = 0; f < 2; f++) {
        const struct pm_profile *p = dp->p[f];
        const struct pm_prof_cell *c =
            pm_prof_cell(p, row[f] == PM_DIFF_WHOLE ? PM_PROF_RUN : row[f], ev->e[f]);
        out->samples[f] = c->samples;
        out->estimate[f] = c->estimate;
        for (size_t i = 0; i < c->nfn; i++) {
            const struct pm_prof_fn *fn = &p->fn[c->fn[i].id];
            size_t k = 0;
            while (k < out->nfn && !(strcmp(out->fn[k].label, fn->label) == 0 &&
                                     strcmp(out->fn[k].object, fn->object) == 0))
                k++;
            if (k == out->nfn) {
                if (out->nfn == PM_DPROF_MAX)
                    continue;
                out->fn[out->nfn++] = (struct pm_dprof_fn){.label = fn->label, .object = fn->object};
            }
            out->fn[k].share[f] = c->fn[i].share;
            out->fn[k].samples[f] = c->fn[i].samples;
            out->fn[k].listed[f] = 1;
        }
    }
    for (size_t k = 0; k < out->nfn; k++)
        out->fn[k].change = out->fn[k].share[1] - out->fn[k].share[0];
    qsort(out->fn, out->nfn, sizeof *out->fn, pm_dp_change_cmp);
}

struct pm_diff_profile *pm_diff_profiles(const struct pm_diff *df, char *err, size_t errlen)
{
    const struct pm_file *a = &df->f[0].d, *b = &df->f[1].d;
    err[0] = '\0';
    if (!a->S || !b->S)
        return NULL;
    struct pm_diff_profile *dp = calloc(1, sizeof *dp);
    if (!dp) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    for (int f = 0; f < 2 && !err[0]; f++)
        dp->p[f] = pm_dp_build(&df->f[f].d, err, errlen);
    dp->ev = calloc(a->S + 1, sizeof *dp->ev);
    if (err[0] || !dp->p[0] || !dp->p[1] || !dp->ev) {
        if (!err[0])
            snprintf(err, errlen, "out of memory");
        pm_diff_profile_free(dp);
        return NULL;
    }
    for (size_t ea = 0; ea < a->S; ea++)
        for (size_t eb = 0; eb < b->S; eb++) {
            if (strcmp(a->sample_events[ea].name, b->sample_events[eb].name) != 0)
                continue;
            struct pm_dprof_event *ev = &dp->ev[dp->nev++];
            ev->name = a->sample_events[ea].name;
            ev->unit = a->sample_events[ea].unit;
            ev->e[0] = ea;
            ev->e[1] = eb;
            ev->reg = calloc(df->npairs + 1, sizeof *ev->reg);
            if (!ev->reg) {
                snprintf(err, errlen, "out of memory");
                pm_diff_profile_free(dp);
                return NULL;
            }
            for (size_t p = 0; p < df->npairs; p++) {
                const struct pm_diff_pair *pr = &df->pairs[p];
                if (pr->row[0] == PM_DIFF_NONE || pr->row[1] == PM_DIFF_NONE)
                    continue;
                struct pm_dprof_region *reg = &ev->reg[ev->nreg];
                reg->pair = p;
                pm_dp_region(dp, ev, pr->row, reg);
                if (reg->samples[0] || reg->samples[1])
                    ev->nreg++;
                else
                    memset(reg, 0, sizeof *reg);
            }
        }
    if (!dp->nev) {
        pm_diff_profile_free(dp);
        return NULL;
    }
    return dp;
}

void pm_diff_profile_free(struct pm_diff_profile *dp)
{
    if (!dp)
        return;
    for (size_t e = 0; e < dp->nev; e++)
        free(dp->ev[e].reg);
    free(dp->ev);
    pm_profile_free(dp->p[0]);
    pm_profile_free(dp->p[1]);
    free(dp);
}
