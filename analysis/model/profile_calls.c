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

/* Most first; ties by the frame id, so the order is the same every time. */
static int pm_cg_before(uint64_t x, size_t fx, uint64_t y, size_t fy)
{
    return x != y ? x > y : fx < fy;
}

static void pm_edge_insert(struct pm_prof_edge *top, size_t *n, size_t frame, uint64_t samples)
{
    size_t k = *n;
    if (k == PM_PROF_EDGES && !pm_cg_before(samples, frame, top[k - 1].samples, top[k - 1].frame))
        return;
    if (k < PM_PROF_EDGES)
        (*n)++;
    else
        k--;
    for (; k > 0 && pm_cg_before(samples, frame, top[k - 1].samples, top[k - 1].frame); k--)
        top[k] = top[k - 1];
    top[k] = (struct pm_prof_edge){frame, samples};
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
    /* inclusive list and hot functions */
    for (size_t h = 0; h <= fn.mask; h++) {
        const struct pm_cg_slot *f = &fn.slot[h];
        if (!f->used)
            continue;
        if (f->self == 0 && f->samples == total) {
            out->passthrough++;
        } else {
            size_t k = out->nincl;
            struct pm_prof_incl it = {f->a, f->samples, f->self};
            if (k < PM_PROF_CALLS || pm_cg_before(it.inclusive, it.frame,
                                                  out->incl[k - 1].inclusive,
                                                  out->incl[k - 1].frame)) {
                if (k < PM_PROF_CALLS)
                    out->nincl++;
                else
                    k--;
                for (; k > 0 && pm_cg_before(it.inclusive, it.frame, out->incl[k - 1].inclusive,
                                             out->incl[k - 1].frame); k--)
                    out->incl[k] = out->incl[k - 1];
                out->incl[k] = it;
            }
        }
        if (!f->self)
            continue;
        size_t k = out->nhot;
        if (k == PM_PROF_HOT &&
            !pm_cg_before(f->self, f->a, out->hot[k - 1].self, out->hot[k - 1].frame))
            continue;
        if (k < PM_PROF_HOT)
            out->nhot++;
        else
            k--;
        for (; k > 0 && pm_cg_before(f->self, f->a, out->hot[k - 1].self, out->hot[k - 1].frame);
             k--)
            out->hot[k] = out->hot[k - 1];
        out->hot[k] = (struct pm_prof_hot){.frame = f->a, .self = f->self,
                                           .inclusive = f->samples};
    }
    for (size_t h = 0; h <= edge.mask; h++) {
        const struct pm_cg_slot *e = &edge.slot[h];
        if (!e->used)
            continue;
        for (size_t k = 0; k < out->nhot; k++) {
            struct pm_prof_hot *hot = &out->hot[k];
            if (e->b == hot->frame)
                pm_edge_insert(hot->callers, &hot->ncallers, e->a, e->samples);
            if (e->a == hot->frame)
                pm_edge_insert(hot->callees, &hot->ncallees, e->b, e->samples);
        }
    }
    free(fn.slot), free(edge.slot);
    return 0;
}
