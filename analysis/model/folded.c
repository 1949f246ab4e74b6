/*
 * folded.c — folded stacks of a sampled profile (folded.h).
 *
 * Each hit (samples at one instruction of one thread, region and event) is
 * one stack: the region path, the callers its chain recorded (return
 * addresses, named at address - 1: the call instruction, not the one after
 * it, which may start another function or line), and the function of the
 * instruction. Stacks are counted in a hash table by their text.
 */
#include "model/folded.h"
#include "model/symbols.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PM_FOLD_BLOCK 4096 /* hits read at once */

struct pm_fold_map {
    char **key;
    uint64_t *count;
    size_t n, cap; /* cap: a power of two */
};

static uint64_t pm_fold_hash(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static int pm_fold_grow(struct pm_fold_map *m)
{
    size_t cap = m->cap ? m->cap * 2 : 1024;
    char **key = calloc(cap, sizeof *key);
    uint64_t *count = calloc(cap, sizeof *count);
    if (!key || !count) {
        free(key), free(count);
        return -1;
    }
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->key[i])
            continue;
        size_t j = pm_fold_hash(m->key[i]) & (cap - 1);
        while (key[j])
            j = (j + 1) & (cap - 1);
        key[j] = m->key[i], count[j] = m->count[i];
    }
    free(m->key), free(m->count);
    m->key = key, m->count = count, m->cap = cap;
    return 0;
}

static int pm_fold_add(struct pm_fold_map *m, const char *stack, uint64_t n)
{
    if ((m->n + 1) * 2 > m->cap && pm_fold_grow(m) < 0)
        return -1;
    size_t j = pm_fold_hash(stack) & (m->cap - 1);
    while (m->key[j] && strcmp(m->key[j], stack) != 0)
        j = (j + 1) & (m->cap - 1);
    if (!m->key[j]) {
        if (!(m->key[j] = strdup(stack)))
            return -1;
        m->n++;
    }
    m->count[j] += n;
    return 0;
}

/* A growing line of frames. */
struct pm_fold_buf {
    char *s;
    size_t len, cap;
    int failed;
};

/* One frame: ';' would split it and a line break end the line. */
static void pm_fold_push(struct pm_fold_buf *b, const char *name)
{
    size_t n = strlen(name) + 2;
    if (b->len + n + 1 > b->cap) {
        size_t cap = (b->len + n + 1) * 2;
        char *s = realloc(b->s, cap);
        if (!s) {
            b->failed = 1;
            return;
        }
        b->s = s, b->cap = cap;
    }
    if (b->len)
        b->s[b->len++] = ';';
    for (; *name; name++) {
        char c = *name;
        b->s[b->len++] = c == ';' ? ':' : (c == '\n' || c == '\r' || c == '\t') ? ' ' : c;
    }
    b->s[b->len] = '\0';
}

/* The function at (module, offset), as the flame graph names its frame: an
 * inlined function under the one it is inlined in. */
static void pm_fold_function(struct pm_fold_buf *b, struct pm_symbols *sym, int32_t module,
                             uint64_t offset)
{
    const struct pm_symbol *s = pm_symbolize(sym, module, offset);
    char label[1024];
    if (s->function && s->inlined_in)
        pm_fold_push(b, s->inlined_in);
    pm_symbol_label(s, module, offset, label, sizeof label);
    pm_fold_push(b, label);
}

static void pm_fold_regions(struct pm_fold_buf *b, const struct pm_file *d, int32_t r)
{
    if (r < 0 || (size_t)r >= d->R)
        return;
    pm_fold_regions(b, d, d->regions[r].parent < r ? d->regions[r].parent : -1);
    pm_fold_push(b, d->regions[r].name);
}

size_t pm_folded_event(const struct pm_file *d, const char *want)
{
    for (size_t e = 0; e < d->S; e++)
        if (!want || strcmp(d->sample_events[e].name, want) == 0 ||
            strcmp(d->sample_events[e].requested, want) == 0)
            return e;
    return SIZE_MAX;
}

struct pm_fold_pair {
    char *key;
    uint64_t count;
};

static int pm_cmp_pair(const void *a, const void *b)
{
    return strcmp(((const struct pm_fold_pair *)a)->key, ((const struct pm_fold_pair *)b)->key);
}

int pm_folded_build(const struct pm_file *d, size_t e, struct pm_folded *f, char *err,
                    size_t errlen)
{
    memset(f, 0, sizeof *f);
    struct pm_file_chain *chains = NULL;
    struct pm_file_frame *frames = NULL;
    size_t nc = 0, nf = 0;
    struct pm_fold_map m = {0};
    struct pm_fold_buf b = {0};
    struct pm_file_hit *hits = malloc(PM_FOLD_BLOCK * sizeof *hits);
    struct pm_symbols *sym = pm_symbols_new(d->sample_modules, d->K);
    int rc = -1;
    if (!hits || !sym) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    if (pm_file_call_chains(d, &chains, &nc, &frames, &nf, err, errlen) < 0)
        goto out;
    for (size_t h0 = 0; h0 < d->H; h0 += PM_FOLD_BLOCK) {
        size_t nh = d->H - h0 < PM_FOLD_BLOCK ? d->H - h0 : PM_FOLD_BLOCK;
        if (pm_file_hits(d, h0, nh, hits, err, errlen) < 0)
            goto out;
        for (size_t i = 0; i < nh; i++) {
            const struct pm_file_hit *h = &hits[i];
            if (h->event < 0 || (size_t)h->event != e || h->count == 0)
                continue;
            b.len = 0;
            pm_fold_regions(&b, d, h->region);
            /* callers, outermost first; a chain out of range is left out */
            if (h->chain >= 0 && (uint64_t)h->chain < nc) {
                const struct pm_file_chain *c = &chains[h->chain];
                for (int32_t k = c->length - 1; k >= 0; k--) {
                    uint64_t f = c->first + (uint64_t)k;
                    if (f >= nf)
                        continue;
                    uint64_t at = frames[f].offset;
                    pm_fold_function(&b, sym, frames[f].module, at ? at - 1 : at);
                }
            }
            pm_fold_function(&b, sym, h->module, h->offset);
            if (b.failed || !b.len || pm_fold_add(&m, b.s, h->count) < 0) {
                snprintf(err, errlen, "out of memory");
                goto out;
            }
        }
    }
    /* sorted: the same file gives the same bytes; the keys move to f */
    struct pm_fold_pair *pairs = malloc((m.n ? m.n : 1) * sizeof *pairs);
    f->stack = malloc((m.n ? m.n : 1) * sizeof *f->stack);
    f->count = malloc((m.n ? m.n : 1) * sizeof *f->count);
    if (!pairs || !f->stack || !f->count) {
        free(pairs);
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    size_t n = 0;
    for (size_t i = 0; i < m.cap; i++)
        if (m.key[i]) {
            pairs[n++] = (struct pm_fold_pair){m.key[i], m.count[i]};
            m.key[i] = NULL;
        }
    qsort(pairs, n, sizeof *pairs, pm_cmp_pair);
    for (f->n = 0; f->n < n; f->n++) {
        f->stack[f->n] = pairs[f->n].key;
        f->count[f->n] = pairs[f->n].count;
    }
    free(pairs);
    rc = 0;
out:
    for (size_t i = 0; i < m.cap; i++)
        free(m.key[i]);
    free(m.key), free(m.count), free(b.s), free(hits), free(chains), free(frames);
    if (sym)
        pm_symbols_free(sym);
    return rc;
}

void pm_folded_free(struct pm_folded *f)
{
    for (size_t i = 0; f->stack && i < f->n; i++)
        free(f->stack[i]);
    free(f->stack), free(f->count);
    memset(f, 0, sizeof *f);
}
