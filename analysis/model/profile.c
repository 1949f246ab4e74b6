/*
 * profile.c — the sampled profile (profile.h): one pass over the hits a
 * block at a time. Each hit is named (symbols.c) and added to its region,
 * every enclosing region and the whole run, per function, per line and in
 * all. A rank's values are summed while its hits come, and folded into the
 * statistics across ranks when the next rank starts (hits are written in
 * rank order; a file that is not gives up the spread, not the totals).
 */
#include "model/profile.h"
#include "model/symbols.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PM_HIT_BLOCK 65536

enum { PM_K_TOTAL, PM_K_FN, PM_K_LINE, PM_K_PATH };

/* An accumulator of (level, event, kind, item). */
struct pm_pacc {
    uint64_t k1, k2;    /* level << 10 | event << 2 | kind; item */
    uint64_t total;
    uint64_t cur;       /* the current rank's sum */
    uint32_t cur_rank;  /* index into rep->xr.ranks */
    uint32_t folded;    /* ranks folded in */
    double sum, min, max;
    uint32_t max_at;
};

struct pm_paccmap {
    struct pm_pacc *a;   /* entries, in creation order */
    size_t n, cap;
    size_t *hash;       /* entry + 1, 0 empty */
    size_t mask;
};

/* Names to ids: a string table with a hash. */
struct pm_names_map {
    char **key;
    size_t n, cap;
    size_t *hash;
    size_t mask;
};

struct pm_builder {
    const uint32_t *thread_rank;
    const int32_t *ranks;
    const struct pm_file *d;
    struct pm_profile *p;
    struct pm_symbols *sym;
    struct pm_paccmap acc;
    struct pm_names_map fn_names, line_names, path_names, frame_names;
    struct pm_path_frames *path_frames;  /* per path id, its frames' ids */
    size_t path_frames_cap;
    struct pm_file_chain *chains;   /* the file's call chains (none: nchains 0) */
    struct pm_file_frame *frames;
    size_t nchains, nframes;
    size_t last_rank;
    int failed;
};

/* ---- hash tables ------------------------------------------------------------- */

static size_t pm_mix2(uint64_t a, uint64_t b)
{
    uint64_t x = a * 0x9E3779B97F4A7C15ull ^ (b + 0x632BE59BD9B4E019ull) * 0xC2B2AE3D27D4EB4Full;
    return (size_t)(x ^ x >> 31);
}

static size_t pm_str_hash(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return (size_t)h;
}

static int pm_rehash(size_t **hash, size_t *mask, size_t n, size_t (*key_hash)(const void *, size_t),
                     const void *ctx)
{
    size_t size = *mask ? (*mask + 1) * 2 : 1024;
    while (size < 2 * (n + 1))
        size *= 2;
    size_t *h = calloc(size, sizeof *h);
    if (!h)
        return -1;
    for (size_t i = 0; i < n; i++) {
        size_t k = key_hash(ctx, i) & (size - 1);
        while (h[k])
            k = (k + 1) & (size - 1);
        h[k] = i + 1;
    }
    free(*hash);
    *hash = h;
    *mask = size - 1;
    return 0;
}

static size_t pm_pacc_key_hash(const void *ctx, size_t i)
{
    const struct pm_paccmap *m = ctx;
    return pm_mix2(m->a[i].k1, m->a[i].k2);
}

static size_t pm_name_key_hash(const void *ctx, size_t i)
{
    const struct pm_names_map *m = ctx;
    return pm_str_hash(m->key[i]);
}

static struct pm_pacc *pm_pacc_get(struct pm_builder *b, uint64_t k1, uint64_t k2, uint32_t rank)
{
    struct pm_paccmap *m = &b->acc;
    if (2 * (m->n + 1) > m->mask + 1 &&
        pm_rehash(&m->hash, &m->mask, m->n, pm_pacc_key_hash, m) != 0)
        return NULL;
    size_t h = pm_mix2(k1, k2) & m->mask;
    for (; m->hash[h]; h = (h + 1) & m->mask) {
        struct pm_pacc *a = &m->a[m->hash[h] - 1];
        if (a->k1 == k1 && a->k2 == k2)
            return a;
    }
    if (m->n == m->cap) {
        size_t cap = m->cap ? 2 * m->cap : 1024;
        struct pm_pacc *grown = realloc(m->a, cap * sizeof *grown);
        if (!grown)
            return NULL;
        m->a = grown;
        m->cap = cap;
    }
    struct pm_pacc *a = &m->a[m->n];
    *a = (struct pm_pacc){.k1 = k1, .k2 = k2, .cur_rank = rank, .min = INFINITY};
    m->hash[h] = ++m->n;
    return a;
}

/* The id of `key` in the map, added if new (-1: out of memory). */
static long pm_name_id(struct pm_names_map *m, const char *key)
{
    if (2 * (m->n + 1) > m->mask + 1 &&
        pm_rehash(&m->hash, &m->mask, m->n, pm_name_key_hash, m) != 0)
        return -1;
    size_t h = pm_str_hash(key) & m->mask;
    for (; m->hash[h]; h = (h + 1) & m->mask)
        if (strcmp(m->key[m->hash[h] - 1], key) == 0)
            return (long)(m->hash[h] - 1);
    if (m->n == m->cap) {
        size_t cap = m->cap ? 2 * m->cap : 256;
        char **grown = realloc(m->key, cap * sizeof *grown);
        if (!grown)
            return -1;
        m->key = grown;
        m->cap = cap;
    }
    if (!(m->key[m->n] = strdup(key)))
        return -1;
    m->hash[h] = ++m->n;
    return (long)(m->n - 1);
}

static void pm_names_free(struct pm_names_map *m)
{
    for (size_t i = 0; i < m->n; i++)
        free(m->key[i]);
    free(m->key), free(m->hash);
}

/* ---- the pass -------------------------------------------------------------------- */

static void pm_pacc_fold(struct pm_pacc *a)
{
    double v = (double)a->cur;
    a->folded++;
    a->sum += v;
    if (v < a->min)
        a->min = v;
    if (a->folded == 1 || v > a->max) {
        a->max = v;
        a->max_at = a->cur_rank;
    }
    a->cur = 0;
}

static int pm_add(struct pm_builder *b, size_t level, size_t e, int kind, size_t item,
                  uint64_t count, uint32_t rank)
{
    uint64_t k1 = (uint64_t)level << 10 | (uint64_t)e << 2 | (uint64_t)kind;
    struct pm_pacc *a = pm_pacc_get(b, k1, item, rank);
    if (!a)
        return -1;
    if (a->cur_rank != rank) {
        pm_pacc_fold(a);
        a->cur_rank = rank;
    }
    a->total += count;
    a->cur += count;
    return 0;
}

/* The function and line ids of a hit's instruction. */
static int pm_name_hit(struct pm_builder *b, const struct pm_file_hit *h, size_t *fn, size_t *line)
{
    const struct pm_symbol *s = pm_symbolize(b->sym, h->module, h->offset);
    char label[1024], key[1200];
    if (s->function && s->inlined_in)
        snprintf(label, sizeof label, "%s (inlined in %s)", s->function, s->inlined_in);
    else
        pm_symbol_label(s, h->module, h->offset, label, sizeof label);
    /* A function is its name in its object (two objects may both have a
     * static helper of one name); the last field says whether a symbol
     * named it. */
    snprintf(key, sizeof key, "%s\x1f%s\x1f%d", label, s->object, s->function != NULL);
    long f = pm_name_id(&b->fn_names, key);
    if (s->file && s->line)
        snprintf(key, sizeof key, "%s:%d\x1f%ld", s->file, s->line, f);
    else
        snprintf(key, sizeof key, "?\x1f%ld", f);
    long l = f < 0 ? -1 : pm_name_id(&b->line_names, key);
    if (f < 0 || l < 0)
        return -1;
    *fn = (size_t)f;
    *line = (size_t)l;
    return 0;
}

#define PM_PATH_FRAMES_MAX 256

/* The id of a hit's call path (its chain's callers outermost first, then
 * fn's label), or -1 without a chain, -2 out of memory. Return addresses
 * are named at the call (address - 1). */
static long pm_path_hit(struct pm_builder *b, const struct pm_file_hit *h, size_t fn)
{
    if (h->chain < 0 || (uint64_t)h->chain >= b->nchains)
        return -1;
    const struct pm_file_chain *c = &b->chains[h->chain];
    char path[4096], frame[512];
    size_t len = 0, ids[PM_PATH_FRAMES_MAX];
    uint32_t nids = 0;
    path[0] = '\0';
    for (int32_t k = c->length - 1; k >= 0 && len < sizeof path; k--) {
        uint64_t f = c->first + (uint64_t)k;
        if (f >= b->nframes)
            continue;
        uint64_t at = b->frames[f].offset;
        int32_t module = b->frames[f].module;
        uint64_t off = at ? at - 1 : at;
        pm_symbol_label(pm_symbolize(b->sym, module, off), module, off, frame, sizeof frame);
        len += (size_t)snprintf(path + len, sizeof path - len, "%s > ", frame);
        long id = pm_name_id(&b->frame_names, frame);
        if (id < 0)
            return -2;
        if (nids < PM_PATH_FRAMES_MAX)
            ids[nids++] = (size_t)id;
    }
    /* the function as the profile names it */
    const char *label = b->fn_names.key[fn];
    const char *us = strchr(label, '\x1f');
    snprintf(frame, sizeof frame, "%.*s", (int)(us ? us - label : (long)strlen(label)), label);
    if (len < sizeof path)
        snprintf(path + len, sizeof path - len, "%s", frame);
    long leaf = pm_name_id(&b->frame_names, frame);
    size_t known = b->path_names.n;
    long id = leaf < 0 ? -1 : pm_name_id(&b->path_names, path);
    if (id < 0)
        return -2;
    if (b->path_names.n == known)
        return id;
    /* a new path: its frames, for the call graph (profile_calls.h) */
    if ((size_t)id >= b->path_frames_cap) {
        size_t cap = b->path_frames_cap ? 2 * b->path_frames_cap : 256;
        struct pm_path_frames *grown = realloc(b->path_frames, cap * sizeof *grown);
        if (!grown)
            return -2;
        memset(grown + b->path_frames_cap, 0, (cap - b->path_frames_cap) * sizeof *grown);
        b->path_frames = grown;
        b->path_frames_cap = cap;
    }
    if (nids < PM_PATH_FRAMES_MAX)
        ids[nids++] = (size_t)leaf;
    size_t *copy = malloc(nids * sizeof *copy);
    if (!copy)
        return -2;
    memcpy(copy, ids, nids * sizeof *copy);
    b->path_frames[id] = (struct pm_path_frames){copy, nids};
    return id;
}

static int pm_take_hit(struct pm_builder *b, const struct pm_file_hit *h)
{
    const struct pm_file *d = b->d;
    struct pm_profile *p = b->p;
    if (h->thread < 0 || (size_t)h->thread >= d->T || h->region < -1 ||
        h->region >= (int64_t)d->R || h->event < 0 || (size_t)h->event >= d->S ||
        h->module < -1 || h->module >= (int64_t)d->K) {
        p->bad_rows++;
        return 0;
    }
    uint32_t rank = b->thread_rank[h->thread];
    if (rank < b->last_rank)
        p->has_ranks = 0;  /* out of rank order: the spread cannot be folded */
    b->last_rank = rank;
    size_t fn, line, e = (size_t)h->event;
    if (pm_name_hit(b, h, &fn, &line) != 0)
        return -1;
    long path = b->nchains ? pm_path_hit(b, h, fn) : -1;
    if (path == -2)
        return -1;
    if (h->region >= 0)
        p->cell[(size_t)h->region * p->S + e].self += h->count;
    else
        p->cell[p->R * p->S + e].self += h->count;
    /* the region, each enclosing one (parents come first: bounded), the run */
    size_t level = h->region >= 0 ? (size_t)h->region : p->R;
    for (size_t steps = 0; steps <= d->R; steps++) {
        if (pm_add(b, level, e, PM_K_TOTAL, 0, h->count, rank) != 0 ||
            pm_add(b, level, e, PM_K_FN, fn, h->count, rank) != 0 ||
            pm_add(b, level, e, PM_K_LINE, line, h->count, rank) != 0 ||
            (path >= 0 && pm_add(b, level, e, PM_K_PATH, (size_t)path, h->count, rank) != 0))
            return -1;
        if (level == p->R)
            break;
        int32_t parent = d->regions[level].parent;
        level = parent >= 0 ? (size_t)parent : p->R;
    }
    return 0;
}

/* ---- results ------------------------------------------------------------------------- */

static void pm_pacc_stats(const struct pm_builder *b, const struct pm_pacc *a, double *min,
                         double *mean, double *max, int32_t *max_at)
{
    size_t nranks = b->p->nranks ? b->p->nranks : 1;
    *mean = a->sum / (double)nranks;
    *min = a->folded < nranks ? 0 : a->min;
    *max = a->max;
    *max_at = b->ranks ? b->ranks[a->max_at] : (int32_t)a->max_at;
}

static int pm_item_cmp(const void *x, const void *y)
{
    const struct pm_prof_item *a = x, *c = y;
    if (a->samples != c->samples)
        return a->samples < c->samples ? 1 : -1;
    return a->id < c->id ? -1 : a->id > c->id;
}

/* Insert into a top list kept sorted, at most PM_PROF_TOP long. */
static void pm_top_insert(struct pm_prof_item *top, size_t *n, const struct pm_prof_item *it)
{
    size_t k = *n;
    if (k == PM_PROF_TOP && pm_item_cmp(it, &top[k - 1]) >= 0)
        return;
    if (k < PM_PROF_TOP)
        (*n)++;
    else
        k--;
    while (k > 0 && pm_item_cmp(it, &top[k - 1]) < 0) {
        top[k] = top[k - 1];
        k--;
    }
    top[k] = *it;
}

/* A cell's path with its samples, for the call graphs. */
struct pm_cell_path {
    size_t cell;
    struct pm_path_count pc;
};

static int pm_cell_path_cmp(const void *x, const void *y)
{
    const struct pm_cell_path *a = x, *c = y;
    if (a->cell != c->cell)
        return a->cell < c->cell ? -1 : 1;
    return a->pc.path < c->pc.path ? -1 : a->pc.path > c->pc.path;
}

/* Each cell's paths as a call graph (profile_calls.h). */
static int pm_call_graphs(struct pm_builder *b, struct pm_cell_path *cp, size_t n)
{
    struct pm_profile *p = b->p;
    struct pm_path_count *pc = malloc((n + 1) * sizeof *pc);
    if (!pc)
        return -1;
    qsort(cp, n, sizeof *cp, pm_cell_path_cmp);
    for (size_t i = 0; i < n;) {
        size_t j = i;
        for (; j < n && cp[j].cell == cp[i].cell; j++)
            pc[j - i] = cp[j].pc;
        struct pm_prof_cell *c = &p->cell[cp[i].cell];
        if (!(c->calls = malloc(sizeof *c->calls)) ||
            pm_prof_calls_build(pc, j - i, b->path_frames, c->calls) != 0) {
            free(pc);
            return -1;
        }
        i = j;
    }
    free(pc);
    return 0;
}

static int pm_results(struct pm_builder *b)
{
    struct pm_profile *p = b->p;
    struct pm_cell_path *cp = NULL;
    size_t ncp = 0, cp_cap = 0;
    for (size_t i = 0; i < b->acc.n; i++) {
        struct pm_pacc *a = &b->acc.a[i];
        if (a->cur)
            pm_pacc_fold(a);
    }
    for (size_t i = 0; i < b->acc.n; i++) {
        const struct pm_pacc *a = &b->acc.a[i];
        size_t level = (size_t)(a->k1 >> 10), e = (size_t)(a->k1 >> 2 & 0xff);
        int kind = (int)(a->k1 & 3);
        struct pm_prof_cell *c = &p->cell[level * p->S + e];
        double period = (double)p->ev[e].period;
        if (kind == PM_K_TOTAL) {
            c->samples = a->total;
            c->estimate = (double)a->total * period;
            pm_pacc_stats(b, a, &c->rank_min, &c->rank_mean, &c->rank_max, &c->rank_max_at);
            continue;
        }
        struct pm_prof_item it = {.id = (size_t)a->k2, .samples = a->total,
                                  .estimate = (double)a->total * period};
        pm_pacc_stats(b, a, &it.rank_min, &it.rank_mean, &it.rank_max, &it.rank_max_at);
        if (kind == PM_K_FN)
            pm_top_insert(c->fn, &c->nfn, &it);
        else if (kind == PM_K_LINE)
            pm_top_insert(c->line, &c->nline, &it);
        else {
            pm_top_insert(c->path, &c->npath, &it);
            c->with_path += a->total;
            if (ncp == cp_cap) {
                cp_cap = cp_cap ? 2 * cp_cap : 1024;
                struct pm_cell_path *grown = realloc(cp, cp_cap * sizeof *grown);
                if (!grown) {
                    free(cp);
                    return -1;
                }
                cp = grown;
            }
            cp[ncp++] = (struct pm_cell_path){(size_t)(c - p->cell), {(size_t)a->k2, a->total}};
        }
    }
    int rc = ncp ? pm_call_graphs(b, cp, ncp) : 0;
    free(cp);
    for (size_t c = 0; c < (p->R + 1) * p->S; c++) {
        struct pm_prof_cell *cell = &p->cell[c];
        for (size_t i = 0; i < cell->nfn; i++)
            cell->fn[i].share = cell->samples ? (double)cell->fn[i].samples / (double)cell->samples : 0;
        for (size_t i = 0; i < cell->nline; i++)
            cell->line[i].share =
                cell->samples ? (double)cell->line[i].samples / (double)cell->samples : 0;
        for (size_t i = 0; i < cell->npath; i++)
            cell->path[i].share =
                cell->samples ? (double)cell->path[i].samples / (double)cell->samples : 0;
    }
    return rc;
}

/* Losses per region, summed up the tree like the samples. */
static void pm_losses(struct pm_builder *b)
{
    const struct pm_file *d = b->d;
    struct pm_profile *p = b->p;
    for (size_t r = 0; r < p->R; r++)
        for (size_t e = 0; e < p->S; e++) {
            p->cell[r * p->S + e].lost = d->sample_lost[r * p->S + e];
            p->cell[r * p->S + e].throttled = d->sample_throttled[r * p->S + e];
        }
    for (size_t e = 0; e < p->S; e++) {
        p->cell[p->R * p->S + e].lost = d->sample_root_lost[e];
        p->cell[p->R * p->S + e].throttled = d->sample_root_throttled[e];
    }
    /* children after parents: walk back, adding each to its parent */
    for (size_t r = p->R; r-- > 0;) {
        int32_t parent = d->regions[r].parent;
        size_t up = parent >= 0 ? (size_t)parent : p->R;
        for (size_t e = 0; e < p->S; e++) {
            p->cell[up * p->S + e].lost += p->cell[r * p->S + e].lost;
            p->cell[up * p->S + e].throttled += p->cell[r * p->S + e].throttled;
        }
    }
}

/* The function and line tables, from the keys "label US object" and
 * "file:line US fn". */
static int pm_tables(struct pm_builder *b)
{
    struct pm_profile *p = b->p;
    p->fn = calloc(b->fn_names.n + 1, sizeof *p->fn);
    p->line = calloc(b->line_names.n + 1, sizeof *p->line);
    if (!p->fn || !p->line)
        return -1;
    for (size_t i = 0; i < b->fn_names.n; i++) {
        char *key = b->fn_names.key[i], *us = strchr(key, '\x1f');
        char *named = strrchr(key, '\x1f');
        *us = '\0';
        *named = '\0';
        p->fn[i].label = key;
        p->fn[i].object = strdup(us + 1);
        p->fn[i].named = named[1] == '1';
        b->fn_names.key[i] = NULL;
        p->nfn++;
        if (!p->fn[i].object)
            return -1;
    }
    for (size_t i = 0; i < b->line_names.n; i++) {
        char *key = b->line_names.key[i], *us = strchr(key, '\x1f');
        *us = '\0';
        p->line[i].label = key;
        p->line[i].fn = (size_t)strtoul(us + 1, NULL, 10);
        b->line_names.key[i] = NULL;
        p->nline++;
    }
    p->path = calloc(b->path_names.n + 1, sizeof *p->path);
    if (!p->path)
        return -1;
    for (size_t i = 0; i < b->path_names.n; i++) {
        p->path[i] = b->path_names.key[i];
        b->path_names.key[i] = NULL;
        p->npath++;
    }
    p->frame = calloc(b->frame_names.n + 1, sizeof *p->frame);
    if (!p->frame)
        return -1;
    for (size_t i = 0; i < b->frame_names.n; i++) {
        p->frame[i] = b->frame_names.key[i];
        b->frame_names.key[i] = NULL;
        p->nframe++;
    }
    return 0;
}

static int pm_profile_setup(struct pm_builder *b)
{
    const struct pm_file *d = b->d;
    struct pm_profile *p = b->p;
    p->S = d->S;
    p->R = d->R;

    p->has_ranks = 1;
    p->symbols = pm_symbols_available();
    p->ev = calloc(d->S + 1, sizeof *p->ev);
    p->cell = calloc((d->R + 1) * d->S + 1, sizeof *p->cell);
    b->sym = pm_symbols_new(d->sample_modules, d->K);
    if (!p->ev || !p->cell || !b->sym)
        return -1;
    /* call chains, where the file has them and is open for streaming */
    char err[256];
    if (d->stream && pm_file_call_chains(d, &b->chains, &b->nchains, &b->frames, &b->nframes,
                                         err, sizeof err) < 0)
        b->nchains = b->nframes = 0;
    p->chains = b->nchains > 0 || (d->sample_callchain[0] && strcmp(d->sample_callchain, "none"));
    for (size_t e = 0; e < d->S; e++)
        p->ev[e] = (struct pm_prof_event){d->sample_events[e].name, d->sample_events[e].requested,
                                          d->sample_events[e].unit, d->sample_events[e].period};
    return 0;
}

struct pm_profile *pm_profile_build(const struct pm_file *d, const uint32_t *thread_rank,
                                    const int32_t *ranks, size_t nranks, char *err,
                                    size_t errlen)
{
    err[0] = '\0';
    if (!d->S)
        return NULL;
    struct pm_profile *p = calloc(1, sizeof *p);
    struct pm_builder b = {.thread_rank = thread_rank, .ranks = ranks, .d = d, .p = p};
    if (p)
        p->nranks = nranks;
    struct pm_file_hit *hits = malloc(PM_HIT_BLOCK * sizeof *hits);
    int rc = p && hits ? pm_profile_setup(&b) : -1;
    for (size_t h0 = 0; rc == 0 && h0 < d->H; h0 += PM_HIT_BLOCK) {
        size_t nh = d->H - h0 < PM_HIT_BLOCK ? d->H - h0 : PM_HIT_BLOCK;
        if (pm_file_hits(d, h0, nh, hits, err, errlen) != 0) {
            rc = -2;
            break;
        }
        for (size_t i = 0; i < nh && rc == 0; i++)
            rc = pm_take_hit(&b, &hits[i]);
    }
    if (rc == 0)
        rc = pm_results(&b);
    if (rc == 0) {
        pm_losses(&b);
        rc = pm_tables(&b);
    }
    if (rc == 0) {
        size_t n;
        const char *const *notes = pm_symbols_notes(b.sym, &n);
        p->notes = calloc(n + 1, sizeof *p->notes);
        for (size_t i = 0; p->notes && i < n; i++)
            if ((p->notes[i] = strdup(notes[i])))
                p->nnotes++;
    }
    free(hits);
    free(b.acc.a), free(b.acc.hash);
    pm_names_free(&b.fn_names);
    pm_names_free(&b.line_names);
    pm_names_free(&b.path_names);
    pm_names_free(&b.frame_names);
    for (size_t i = 0; i < b.path_frames_cap; i++)
        free(b.path_frames[i].frame);
    free(b.path_frames);
    free(b.chains), free(b.frames);
    pm_symbols_free(b.sym);
    if (rc != 0) {
        if (rc == -1 || !err[0])
            snprintf(err, errlen, "out of memory making the sampled profile");
        pm_profile_free(p);
        return NULL;
    }
    return p;
}

void pm_profile_free(struct pm_profile *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->nfn; i++)
        free(p->fn[i].label), free(p->fn[i].object);
    for (size_t i = 0; i < p->nline; i++)
        free(p->line[i].label);
    for (size_t i = 0; i < p->npath; i++)
        free(p->path[i]);
    free(p->path);
    for (size_t i = 0; i < p->nframe; i++)
        free(p->frame[i]);
    free(p->frame);
    for (size_t c = 0; p->cell && c < (p->R + 1) * p->S; c++)
        free(p->cell[c].calls);
    for (size_t i = 0; i < p->nnotes; i++)
        free(p->notes[i]);
    free(p->notes), free(p->fn), free(p->line), free(p->ev), free(p->cell), free(p);
}

double pm_prof_rel_error(uint64_t n)
{
    return n ? 2.0 / sqrt((double)n) : 1.0;
}
