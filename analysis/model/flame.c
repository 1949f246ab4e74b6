/*
 * flame.c — folded stacks merged into a tree (flame.h).
 *
 * Children are found through one hash of (parent, name); the tree is then
 * laid out depth-first with each node's children sorted by name.
 */
#define _GNU_SOURCE
#include "model/flame.h"

#include <stdlib.h>
#include <string.h>

struct pm_fl_build {
    struct pm_flame *fl;
    size_t cap, name_cap;
    size_t *hash, mask;        /* node + 1 by (parent, name) */
    size_t *name_hash, name_mask; /* name + 1 by its text */
};

static size_t pm_fl_str_hash(const char *s, size_t len)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return (size_t)h;
}

static size_t pm_fl_pair_hash(size_t parent, size_t name)
{
    uint64_t x = (uint64_t)parent * 0x9E3779B97F4A7C15ull ^ (uint64_t)name * 0xC2B2AE3D27D4EB4Full;
    return (size_t)(x ^ x >> 31);
}

static int pm_fl_rehash(size_t **hash, size_t *mask, size_t n)
{
    size_t size = 1024;
    while (size < 2 * (n + 1))
        size *= 2;
    if (*hash && size <= *mask + 1)
        return 0;
    free(*hash);
    *hash = calloc(size, sizeof **hash);
    *mask = size - 1;
    return *hash ? 0 : -1;
}

/* The id of the frame name s[0..len). */
static long pm_fl_name(struct pm_fl_build *b, const char *s, size_t len)
{
    struct pm_flame *fl = b->fl;
    if (2 * (fl->nname + 1) > b->name_mask + 1 || !b->name_hash) {
        if (pm_fl_rehash(&b->name_hash, &b->name_mask, 2 * fl->nname + 2) != 0)
            return -1;
        for (size_t i = 0; i < fl->nname; i++) {
            size_t h = pm_fl_str_hash(fl->name[i], strlen(fl->name[i])) & b->name_mask;
            while (b->name_hash[h])
                h = (h + 1) & b->name_mask;
            b->name_hash[h] = i + 1;
        }
    }
    size_t h = pm_fl_str_hash(s, len) & b->name_mask;
    for (; b->name_hash[h]; h = (h + 1) & b->name_mask) {
        const char *k = fl->name[b->name_hash[h] - 1];
        if (strncmp(k, s, len) == 0 && k[len] == '\0')
            return (long)(b->name_hash[h] - 1);
    }
    if (fl->nname == b->name_cap) {
        size_t cap = b->name_cap ? 2 * b->name_cap : 256;
        char **grown = realloc(fl->name, cap * sizeof *grown);
        if (!grown)
            return -1;
        fl->name = grown;
        b->name_cap = cap;
    }
    if (!(fl->name[fl->nname] = strndup(s, len)))
        return -1;
    b->name_hash[h] = ++fl->nname;
    return (long)(fl->nname - 1);
}

/* The child `name` of `parent`, made if new. */
static long pm_fl_child(struct pm_fl_build *b, size_t parent, size_t name, uint32_t depth)
{
    struct pm_flame *fl = b->fl;
    if (2 * (fl->n + 1) > b->mask + 1 || !b->hash) {
        if (pm_fl_rehash(&b->hash, &b->mask, 2 * fl->n + 2) != 0)
            return -1;
        for (size_t i = 1; i < fl->n; i++) {
            size_t h = pm_fl_pair_hash(fl->node[i].parent, fl->node[i].name) & b->mask;
            while (b->hash[h])
                h = (h + 1) & b->mask;
            b->hash[h] = i + 1;
        }
    }
    size_t h = pm_fl_pair_hash(parent, name) & b->mask;
    for (; b->hash[h]; h = (h + 1) & b->mask) {
        const struct pm_flame_node *c = &fl->node[b->hash[h] - 1];
        if (c->parent == parent && c->name == name)
            return (long)(b->hash[h] - 1);
    }
    if (fl->n == b->cap) {
        size_t cap = 2 * b->cap;
        struct pm_flame_node *grown = realloc(fl->node, cap * sizeof *grown);
        if (!grown)
            return -1;
        fl->node = grown;
        b->cap = cap;
    }
    fl->node[fl->n] = (struct pm_flame_node){.name = name, .parent = parent, .depth = depth};
    if (depth > fl->depth)
        fl->depth = depth;
    b->hash[h] = ++fl->n;
    return (long)(fl->n - 1);
}

/* Children grouped by parent, each group by name. */
static int pm_fl_child_cmp(const void *x, const void *y, void *ctx)
{
    const struct pm_flame *fl = ctx;
    const struct pm_flame_node *a = &fl->node[*(const size_t *)x];
    const struct pm_flame_node *c = &fl->node[*(const size_t *)y];
    if (a->parent != c->parent)
        return a->parent < c->parent ? -1 : 1;
    return strcmp(fl->name[a->name], fl->name[c->name]);
}

/* Depth-first order with children by name; start offsets on the way. */
static int pm_fl_layout(struct pm_flame *fl)
{
    size_t n = fl->n;
    size_t *by_parent = malloc(n * sizeof *by_parent), *first = calloc(n + 1, sizeof *first);
    size_t *order = malloc(n * sizeof *order), *stack = malloc(n * sizeof *stack);
    struct pm_flame_node *laid = malloc(n * sizeof *laid);
    size_t *new_id = malloc(n * sizeof *new_id);
    if (!by_parent || !first || !order || !stack || !laid || !new_id) {
        free(by_parent), free(first), free(order), free(stack), free(laid), free(new_id);
        return -1;
    }
    /* every node but the root, grouped by parent; first[p] .. first[p + 1]:
     * p's children in by_parent */
    for (size_t i = 0; i < n; i++)
        by_parent[i] = i;
    qsort_r(by_parent + 1, n - 1, sizeof *by_parent, pm_fl_child_cmp, fl);
    for (size_t i = 1; i < n; i++)
        first[fl->node[by_parent[i]].parent]++;
    for (size_t p = 0, at = 1; p <= n; p++) {
        size_t c = p < n ? first[p] : 0;
        first[p] = at;
        at += c;
    }
    /* depth-first: the root, then each child before its next sibling */
    size_t top = 0, k = 0;
    stack[top++] = 0;
    fl->node[0].start = 0;
    while (top) {
        size_t v = stack[--top];
        order[k++] = v;
        uint64_t at = fl->node[v].start;
        size_t lo = first[v], hi = first[v + 1];
        for (size_t i = lo; i < hi; i++) {
            fl->node[by_parent[i]].start = at;
            at += fl->node[by_parent[i]].samples;
        }
        for (size_t i = hi; i > lo; i--)
            stack[top++] = by_parent[i - 1];
    }
    for (size_t i = 0; i < k; i++)
        new_id[order[i]] = i;
    for (size_t i = 0; i < k; i++) {
        laid[i] = fl->node[order[i]];
        laid[i].parent = laid[i].parent == SIZE_MAX ? SIZE_MAX : new_id[laid[i].parent];
    }
    free(fl->node);
    fl->node = laid;
    fl->n = k;
    free(by_parent), free(first), free(order), free(stack), free(new_id);
    return 0;
}

int pm_flame_build(const struct pm_folded *f, struct pm_flame *out)
{
    memset(out, 0, sizeof *out);
    struct pm_fl_build b = {.fl = out, .cap = 1024};
    if (!(out->node = malloc(b.cap * sizeof *out->node)))
        return -1;
    long root_name = pm_fl_name(&b, "all", 3);
    if (root_name < 0)
        goto fail;
    out->node[0] = (struct pm_flame_node){.name = (size_t)root_name, .parent = SIZE_MAX};
    out->n = 1;
    for (size_t i = 0; i < f->n; i++) {
        uint64_t s = f->count[i];
        size_t at = 0;
        uint32_t depth = 0;
        out->node[0].samples += s;
        for (const char *p = f->stack[i]; *p;) {
            const char *semi = strchr(p, ';');
            size_t len = semi ? (size_t)(semi - p) : strlen(p);
            long name = pm_fl_name(&b, p, len);
            long child = name < 0 ? -1 : pm_fl_child(&b, at, (size_t)name, ++depth);
            if (child < 0)
                goto fail;
            at = (size_t)child;
            out->node[at].samples += s;
            p += len + (semi != NULL);
        }
        out->node[at].self += s;
    }
    if (pm_fl_layout(out) != 0)
        goto fail;
    free(b.hash), free(b.name_hash);
    return 0;
fail:
    free(b.hash), free(b.name_hash);
    return -1;
}

void pm_flame_free(struct pm_flame *fl)
{
    for (size_t i = 0; i < fl->nname; i++)
        free(fl->name[i]);
    free(fl->name), free(fl->node);
    memset(fl, 0, sizeof *fl);
}

static int pm_fl_u64_desc(const void *x, const void *y)
{
    uint64_t a = *(const uint64_t *)x, c = *(const uint64_t *)y;
    return a < c ? 1 : a > c ? -1 : 0;
}

uint64_t pm_flame_min_samples(const struct pm_flame *fl, size_t max)
{
    if (!fl->n)
        return 1;
    uint64_t floor = fl->node[0].samples / 1000;
    if (floor < 1)
        floor = 1;
    if (fl->n <= max)
        return floor;
    uint64_t *s = malloc(fl->n * sizeof *s);
    if (!s)
        return fl->node[0].samples;  /* the root alone */
    for (size_t i = 0; i < fl->n; i++)
        s[i] = fl->node[i].samples;
    qsort(s, fl->n, sizeof *s, pm_fl_u64_desc);
    uint64_t cut = s[max - 1] + 1;  /* strictly more than the max-th: at most max - 1 drawn */
    free(s);
    return cut > floor ? cut : floor;
}
