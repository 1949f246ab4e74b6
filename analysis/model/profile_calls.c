#define _GNU_SOURCE
#include "profile_calls.h"

#include <stdlib.h>
#include <string.h>

/* Open addressing on one or two frame ids; `stamp` is the last path that
 * counted the entry, so a recursive path counts once. */
struct pm_cg_slot {
    size_t a, b;           /* frame (b unused), or caller and callee */
    uint64_t samples, self;
    size_t stamp;          /* path index + 1 */
    int used;
};

struct pm_cg_map {
    struct pm_cg_slot *slot;
    size_t mask, n;
};

static size_t pm_cg_hash(size_t a, size_t b)
{
    unsigned long long x = (unsigned long long)a * 0x9E3779B97F4A7C15ull ^
                           ((unsigned long long)b + 1) * 0xC2B2AE3D27D4EB4Full;
    return (size_t)(x ^ x >> 29);
}

static struct pm_cg_slot *pm_cg_get(struct pm_cg_map *m, size_t a, size_t b)
{
    size_t h = pm_cg_hash(a, b) & m->mask;
    for (; m->slot[h].used; h = (h + 1) & m->mask)
        if (m->slot[h].a == a && m->slot[h].b == b)
            return &m->slot[h];
    m->slot[h] = (struct pm_cg_slot){.a = a, .b = b, .used = 1};
    m->n++;
    return &m->slot[h];
}

static int pm_cg_init(struct pm_cg_map *m, size_t entries)
{
    size_t size = 16;
    while (size < 2 * entries + 2)
        size *= 2;
    m->slot = calloc(size, sizeof *m->slot);
    m->mask = size - 1;
    m->n = 0;
    return m->slot ? 0 : -1;
}

/* The used slots of m, most samples first (by_self: most own samples), ties
 * by frame ids, so that the order is the same every time. */
struct pm_cg_order {
    const struct pm_cg_map *m;
    int by_self;
};

static int pm_cg_cmp(const void *x, const void *y, void *ctx)
{
    const struct pm_cg_order *o = ctx;
    const struct pm_cg_slot *a = &o->m->slot[*(const size_t *)x];
    const struct pm_cg_slot *b = &o->m->slot[*(const size_t *)y];
    uint64_t ka = o->by_self ? a->self : a->samples, kb = o->by_self ? b->self : b->samples;
    if (ka != kb)
        return ka > kb ? -1 : 1;
    if (a->a != b->a)
        return a->a < b->a ? -1 : 1;
    return (a->b > b->b) - (a->b < b->b);
}

static size_t pm_cg_sorted(const struct pm_cg_map *m, int by_self, size_t *idx)
{
    size_t n = 0;
    for (size_t h = 0; h <= m->mask; h++)
        if (m->slot[h].used)
            idx[n++] = h;
    struct pm_cg_order o = {m, by_self};
    qsort_r(idx, n, sizeof *idx, pm_cg_cmp, &o);
    return n;
}

int pm_prof_calls_build(const struct pm_path_count *paths, size_t n,
                        const struct pm_path_frames *frames, struct pm_prof_calls *out)
{
    memset(out, 0, sizeof *out);
    size_t entries = 0;
    uint64_t total = 0;
    for (size_t i = 0; i < n; i++) {
        entries += frames[paths[i].path].n;
        total += paths[i].samples;
    }
    struct pm_cg_map fn, edge;
    if (pm_cg_init(&fn, entries) != 0)
        return -1;
    if (pm_cg_init(&edge, entries) != 0) {
        free(fn.slot);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        const struct pm_path_frames *pf = &frames[paths[i].path];
        uint64_t s = paths[i].samples;
        for (uint32_t k = 0; k < pf->n; k++) {
            struct pm_cg_slot *f = pm_cg_get(&fn, pf->frame[k], (size_t)-1);
            if (f->stamp != i + 1)
                f->samples += s, f->stamp = i + 1;
            if (k + 1 == pf->n)
                f->self += s;
            if (k == 0)
                continue;
            struct pm_cg_slot *e = pm_cg_get(&edge, pf->frame[k - 1], pf->frame[k]);
            if (e->stamp != i + 1)
                e->samples += s, e->stamp = i + 1;
        }
    }
    size_t *idx = malloc((fn.mask + edge.mask + 2) * sizeof *idx);
    if (!idx) {
        free(fn.slot), free(edge.slot);
        return -1;
    }
    /* inclusive list: frames every path passes through without samples of
     * their own are left out, and counted */
    size_t nf = pm_cg_sorted(&fn, 0, idx);
    for (size_t i = 0; i < nf; i++) {
        const struct pm_cg_slot *f = &fn.slot[idx[i]];
        if (f->self == 0 && f->samples == total)
            out->passthrough++;
        else if (out->nincl < PM_PROF_CALLS)
            out->incl[out->nincl++] = (struct pm_prof_incl){f->a, f->samples, f->self};
    }
    /* the hottest by their own samples */
    nf = pm_cg_sorted(&fn, 1, idx);
    for (size_t i = 0; i < nf && out->nhot < PM_PROF_HOT && fn.slot[idx[i]].self; i++) {
        const struct pm_cg_slot *f = &fn.slot[idx[i]];
        out->hot[out->nhot++] = (struct pm_prof_hot){.frame = f->a, .self = f->self,
                                                     .inclusive = f->samples};
    }
    /* their callers and callees, most samples first */
    size_t ne = pm_cg_sorted(&edge, 0, idx);
    for (size_t i = 0; i < ne; i++) {
        const struct pm_cg_slot *e = &edge.slot[idx[i]];
        for (size_t k = 0; k < out->nhot; k++) {
            struct pm_prof_hot *hot = &out->hot[k];
            if (e->b == hot->frame && hot->ncallers < PM_PROF_EDGES)
                hot->callers[hot->ncallers++] = (struct pm_prof_edge){e->a, e->samples};
            if (e->a == hot->frame && hot->ncallees < PM_PROF_EDGES)
                hot->callees[hot->ncallees++] = (struct pm_prof_edge){e->b, e->samples};
        }
    }
    free(idx);
    free(fn.slot), free(edge.slot);
    return 0;
}
