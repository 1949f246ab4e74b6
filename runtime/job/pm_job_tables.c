/* What the ranks of a job agree on before its file is written
 * (pm_job_write.c): the union of their region tables and of their sampled
 * objects, and their messages, deduplicated.
 *
 * Every rank's merged region list travels up a binomial tree (rank r sends
 * to r - 2^k in round k) and is unioned by path at each step; rank 0
 * broadcasts the union. Cost per rank O(R_union · log P); nothing
 * proportional to P is gathered for it. Messages ride along the same tree,
 * deduplicated by text and capped. No HDF5 call here (its types come in
 * with pm_h5out.h) and no MPI either: the ranks talk through the job's
 * pm_comm (pm_comm.h), which the MPI wrapper library of the program's MPI
 * provides. */
#define _GNU_SOURCE
#include "pm_job_tables.h"
#include "pm_log.h"
#include "pm_names.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Beyond this many distinct messages the rest are only counted. */
#define PM_JOB_MESSAGES_MAX 1000
/* A packed buffer too large for one message (MPI counts are ints) is an error. */
#define PM_PACK_MAX ((uint64_t)1 << 30)

/* ---- a byte buffer that grows ---------------------------------------------- */

struct pm_buf {
    char *data;
    size_t len, cap;
    int failed;
};

static void pm_buf_put(struct pm_buf *b, const void *p, size_t n)
{
    if (b->failed)
        return;
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n)
            cap *= 2;
        char *grown = realloc(b->data, cap);
        if (!grown) {
            b->failed = 1;
            return;
        }
        b->data = grown;
        b->cap = cap;
    }
    memcpy(b->data + b->len, p, n);
    b->len += n;
}

static void pm_buf_put_i32(struct pm_buf *b, int32_t v) { pm_buf_put(b, &v, sizeof v); }

static void pm_buf_put_str(struct pm_buf *b, const char *s)
{
    uint32_t len = (uint32_t)strlen(s);
    pm_buf_put(b, &len, sizeof len);
    pm_buf_put(b, s, len);
}

/* A reader over a received buffer; any overrun marks it bad. */
struct pm_cursor {
    const char *p, *end;
    int bad;
};

static int32_t pm_get_i32(struct pm_cursor *c)
{
    int32_t v = 0;
    if (c->end - c->p < (ptrdiff_t)sizeof v) {
        c->bad = 1;
        return 0;
    }
    memcpy(&v, c->p, sizeof v);
    c->p += sizeof v;
    return v;
}

/* The next string, NUL-terminated into a new allocation. */
static char *pm_get_str(struct pm_cursor *c)
{
    uint32_t len = (uint32_t)pm_get_i32(c);
    if (c->bad || (size_t)(c->end - c->p) < len) {
        c->bad = 1;
        return NULL;
    }
    char *s = strndup(c->p, len);
    c->p += len;
    if (!s)
        c->bad = 1;
    return s;
}

/* Grow one of several parallel arrays to `cap` elements; on failure the old
 * array stays as it was (and valid). */
static int pm_grow(void *arrayp, size_t cap, size_t elsize)
{
    void **array = arrayp;
    void *grown = realloc(*array, cap * elsize);
    if (!grown)
        return -1;
    *array = grown;
    return 0;
}

/* ---- the union of region tables -------------------------------------------------- */

static uint32_t pm_union_hash(int32_t parent, int32_t kind, const char *name)
{
    uint32_t h = 2166136261u ^ (uint32_t)(parent + 1) * 16777619u ^ (uint32_t)kind;
    for (const unsigned char *s = (const unsigned char *)name; *s; s++)
        h = (h ^ *s) * 16777619u;
    return h;
}

static int pm_union_grow(struct pm_union *u)
{
    size_t cap = u->cap ? (size_t)u->cap * 2 : 256;
    if (pm_grow(&u->parent, cap, sizeof *u->parent) || pm_grow(&u->depth, cap, sizeof *u->depth) ||
        pm_grow(&u->kind, cap, sizeof *u->kind) || pm_grow(&u->name, cap, sizeof *u->name))
        return -1;
    int32_t *hash = calloc(cap * 2, sizeof *hash);
    if (!hash)
        return -1;
    uint32_t mask = (uint32_t)(cap * 2 - 1);
    for (int32_t i = 0; i < u->n; i++) {
        uint32_t h = pm_union_hash(u->parent[i], u->kind[i], u->name[i]) & mask;
        while (hash[h])
            h = (h + 1) & mask;
        hash[h] = i + 1;
    }
    free(u->hash);
    u->hash = hash;
    u->mask = mask;
    u->cap = (int32_t)cap;
    return 0;
}

/* The row of (parent, kind, name), added if new (taking `name`); -1 on
 * failure. With add = 0, -1 when absent. */
int32_t pm_union_find(struct pm_union *u, int32_t parent, int32_t depth, int32_t kind,
                      char *name, int add)
{
    if (add && u->n == u->cap && pm_union_grow(u) != 0)
        return -1;
    if (!u->mask)
        return -1;
    uint32_t h = pm_union_hash(parent, kind, name) & u->mask;
    for (; u->hash[h]; h = (h + 1) & u->mask) {
        int32_t i = u->hash[h] - 1;
        if (u->parent[i] == parent && u->kind[i] == kind && strcmp(u->name[i], name) == 0) {
            if (add)
                free(name);
            return i;
        }
    }
    if (!add)
        return -1;
    int32_t i = u->n++;
    u->parent[i] = parent;
    u->depth[i] = depth;
    u->kind[i] = kind;
    u->name[i] = name;
    u->hash[h] = i + 1;
    return i;
}

void pm_union_free(struct pm_union *u)
{
    for (int32_t i = 0; i < u->n; i++)
        free(u->name[i]);
    free(u->parent), free(u->depth), free(u->kind), free(u->name), free(u->hash);
    memset(u, 0, sizeof *u);
}

/* Rows in order; each refers to its parent by row, parents first. */
static void pm_union_pack(const struct pm_union *u, struct pm_buf *b)
{
    pm_buf_put_i32(b, u->n);
    for (int32_t i = 0; i < u->n; i++) {
        pm_buf_put_i32(b, u->parent[i]);
        pm_buf_put_i32(b, u->depth[i]);
        pm_buf_put_i32(b, u->kind[i]);
        pm_buf_put_str(b, u->name[i]);
    }
}

/* Add a packed table to the union. Deterministic: the union's rows keep
 * their order and new rows follow in the sender's order, so every rank
 * that unpacks the broadcast result gets the same rows. */
static void pm_union_merge(struct pm_union *u, struct pm_cursor *c)
{
    int32_t n = pm_get_i32(c);
    if (c->bad || n < 0 || n > (int32_t)(PM_PACK_MAX / 16)) {
        c->bad = 1;
        return;
    }
    int32_t *map = malloc(((size_t)n + 1) * sizeof *map);
    if (!map) {
        u->failed = 1;
        return;
    }
    for (int32_t i = 0; i < n && !c->bad && !u->failed; i++) {
        int32_t parent = pm_get_i32(c), depth = pm_get_i32(c), kind = pm_get_i32(c);
        char *name = pm_get_str(c);
        if (c->bad || parent < -1 || parent >= i) {
            free(name);
            c->bad = 1;
            break;
        }
        map[i] = pm_union_find(u, parent < 0 ? -1 : map[parent], depth, kind, name, 1);
        if (map[i] < 0) {
            free(name);
            u->failed = 1;
        }
    }
    free(map);
}

/* ---- messages, deduplicated across ranks --------------------------------------- */

void pm_joblog_add(struct pm_joblog *l, char *text, int32_t first, int32_t nranks)
{
    for (int32_t i = 0; i < l->n; i++)
        if (strcmp(l->text[i], text) == 0) {
            l->nranks[i] += nranks;
            if (first < l->first_rank[i])
                l->first_rank[i] = first;
            free(text);
            return;
        }
    if (l->n == PM_JOB_MESSAGES_MAX) {
        l->dropped += nranks;
        free(text);
        return;
    }
    if (l->n == l->cap) {
        size_t cap = l->cap ? (size_t)l->cap * 2 : 32;
        if (pm_grow(&l->text, cap, sizeof *l->text) ||
            pm_grow(&l->first_rank, cap, sizeof *l->first_rank) ||
            pm_grow(&l->nranks, cap, sizeof *l->nranks)) {
            l->dropped += nranks;
            free(text);
            return;
        }
        l->cap = (int32_t)cap;
    }
    l->text[l->n] = text;
    l->first_rank[l->n] = first;
    l->nranks[l->n] = nranks;
    l->n++;
}

static void pm_joblog_pack(const struct pm_joblog *l, struct pm_buf *b)
{
    pm_buf_put_i32(b, l->n);
    pm_buf_put_i32(b, l->dropped);
    for (int32_t i = 0; i < l->n; i++) {
        pm_buf_put_i32(b, l->first_rank[i]);
        pm_buf_put_i32(b, l->nranks[i]);
        pm_buf_put_str(b, l->text[i]);
    }
}

static void pm_joblog_merge(struct pm_joblog *l, struct pm_cursor *c)
{
    int32_t n = pm_get_i32(c);
    l->dropped += pm_get_i32(c);
    for (int32_t i = 0; i < n && !c->bad; i++) {
        int32_t first = pm_get_i32(c), nranks = pm_get_i32(c);
        char *text = pm_get_str(c);
        if (text)
            pm_joblog_add(l, text, first, nranks);
    }
}

void pm_joblog_free(struct pm_joblog *l)
{
    for (int32_t i = 0; i < l->n; i++)
        free(l->text[i]);
    free(l->text), free(l->first_rank), free(l->nranks);
    memset(l, 0, sizeof *l);
}

/* "[all 8 ranks] text", "[rank 3] text", "[rank 3 and 2 more] text". */
char **pm_joblog_lines(const struct pm_joblog *l, int size, size_t *count)
{
    char **lines = calloc((size_t)l->n + 2, sizeof *lines);
    *count = 0;
    if (!lines)
        return NULL;
    for (int32_t i = 0; i < l->n; i++) {
        char who[64];
        if (l->nranks[i] >= size)
            snprintf(who, sizeof who, "all %d ranks", size);
        else if (l->nranks[i] == 1)
            snprintf(who, sizeof who, "rank %d", l->first_rank[i]);
        else
            snprintf(who, sizeof who, "rank %d and %d more", l->first_rank[i],
                     l->nranks[i] - 1);
        if (asprintf(&lines[*count], "[%s] %s", who, l->text[i]) >= 0)
            (*count)++;
    }
    if (l->dropped && asprintf(&lines[*count], "(%d further messages were not kept)",
                               l->dropped) >= 0)
        (*count)++;
    return lines;
}

/* ---- the tree ------------------------------------------------------------------- */

/* Pack the payloads; a failed pack travels as a length of UINT64_MAX. */
static void pm_pack_all(const struct pm_tables *t, struct pm_buf *b)
{
    pm_union_pack(&t->regions, b);
    pm_union_pack(&t->modules, b);
    pm_joblog_pack(&t->log, b);
}

static int pm_send_buf(const struct pm_comm *c, int to, const struct pm_buf *b)
{
    uint64_t len = b->failed || b->len > PM_PACK_MAX ? UINT64_MAX : b->len;
    if (c->send(c, to, 1, &len, sizeof len) != 0)
        return -1;
    if (len == UINT64_MAX)
        return 0;
    return c->send(c, to, 2, b->data, (size_t)len);
}

/* Receive a buffer; NULL with *failed set when the sender failed. */
static char *pm_recv_buf(const struct pm_comm *c, int from, size_t *len, int *failed)
{
    uint64_t n = 0;
    if (c->recv(c, from, 1, &n, sizeof n) != 0 || n == UINT64_MAX || n > PM_PACK_MAX) {
        *failed = 1;
        return NULL;
    }
    char *data = malloc(n ? n : 1);
    /* Receive even without memory, so the sender is not left blocked. */
    char scratch[1];
    int rc = c->recv(c, from, 2, data ? data : scratch, data ? (size_t)n : 0);
    if (!data || rc != 0) {
        free(data);
        *failed = 1;
        return NULL;
    }
    *len = n;
    return data;
}

/* Union every rank's tables into rank 0's. Returns -1 on rank 0
 * if any rank failed (other ranks return 0 after sending). */
int pm_tree_reduce(const struct pm_comm *c, struct pm_tables *t)
{
    int rank = c->rank, size = c->size;
    int failed = t->regions.failed || t->modules.failed;
    for (int step = 1; step < size; step <<= 1) {
        if (rank & step) {
            struct pm_buf b = {0};
            b.failed = failed;
            pm_pack_all(t, &b);
            int rc = pm_send_buf(c, rank - step, &b);
            free(b.data);
            return rc;
        }
        if (rank + step >= size)
            continue;
        size_t len = 0;
        char *data = pm_recv_buf(c, rank + step, &len, &failed);
        if (data) {
            struct pm_cursor cur = {data, data + len, 0};
            pm_union_merge(&t->regions, &cur);
            pm_union_merge(&t->modules, &cur);
            pm_joblog_merge(&t->log, &cur);
            failed |= cur.bad || t->regions.failed || t->modules.failed;
            free(data);
        }
    }
    return failed ? -1 : 0;
}

/* Rank 0's unions to everyone: a failure on rank 0 travels as length 0. */
int pm_bcast_union(const struct pm_comm *c, struct pm_tables *t, int ok)
{
    int rank = c->rank;
    struct pm_union *u = &t->regions, *mods = &t->modules;
    struct pm_buf b = {0};
    uint64_t len = 0;
    if (rank == 0 && ok) {
        pm_union_pack(u, &b);
        pm_union_pack(mods, &b);
        len = b.failed || b.len > PM_PACK_MAX ? 0 : b.len;
    }
    int rc = -1;
    if (c->bcast(c, &len, sizeof len) == 0 && len > 0 && len <= PM_PACK_MAX) {
        char *data = rank == 0 ? b.data : malloc(len);
        /* Everyone must take part in the broadcast, or nobody. */
        if (pm_comm_all_ok(c, data != NULL) && c->bcast(c, data, (size_t)len) == 0) {
            rc = 0;
            if (rank != 0) {
                struct pm_cursor cur = {data, data + len, 0};
                pm_union_free(u);
                pm_union_free(mods);
                pm_union_merge(u, &cur);
                pm_union_merge(mods, &cur);
                rc = cur.bad || u->failed || mods->failed ? -1 : 0;
            }
        }
        if (rank != 0)
            free(data);
    }
    free(b.data);
    return rc;
}

/* ---- sampled objects as union rows ----------------------------------------------- */

/* A sampled object as a union row: "build-id TAB path" (neither holds a tab
 * that matters: a path with one only loses its tail in the table). */
static char *pm_module_key(const struct pm_module_desc *m)
{
    char *key = NULL;
    return asprintf(&key, "%s\t%s", m->build_id, m->path) < 0 ? NULL : key;
}

/* The union's rows as /samples/modules descriptions; the keys are cut in
 * place at their tab. */
struct pm_module_desc *pm_module_descs(const struct pm_union *mods, char **copy)
{
    size_t bytes = 1;
    for (int32_t i = 0; i < mods->n; i++)
        bytes += strlen(mods->name[i]) + 1;
    struct pm_module_desc *d = calloc((size_t)mods->n + 1, sizeof *d);
    char *at = *copy = malloc(bytes);
    if (!d || !at) {
        free(d), free(at);
        *copy = NULL;
        return NULL;
    }
    for (int32_t i = 0; i < mods->n; i++) {
        size_t n = strlen(mods->name[i]) + 1;
        memcpy(at, mods->name[i], n);
        char *tab = strchr(at, '\t');
        if (tab)
            *tab = '\0';
        d[i] = (struct pm_module_desc){at, tab ? tab + 1 : ""};
        at += n;
    }
    return d;
}

/* ---- this rank's tables in, the union's columns out --------------------------------- */

/* This rank's sampled objects as the starting union, row k its object k. */
void pm_local_modules(const struct pm_sample_rows *r, struct pm_union *mods)
{
    for (int32_t k = 0; k < r->nmodules && !mods->failed; k++) {
        char *key = pm_module_key(&r->modules[k]);
        int32_t row = key ? pm_union_find(mods, -1, 0, 0, key, 1) : -1;
        if (row < 0)
            free(key);
        if (row != k)
            mods->failed = 1;  /* out of memory, or one object listed twice */
    }
}

/* Point this rank's sample rows at the job's objects. */
int pm_remap_modules(struct pm_union *mods, struct pm_sample_rows *r)
{
    int32_t *to = malloc(((size_t)r->nmodules + 1) * sizeof *to);
    int rc = to ? 0 : -1;
    for (int32_t k = 0; k < r->nmodules && rc == 0; k++) {
        char *key = pm_module_key(&r->modules[k]);
        to[k] = key ? pm_union_find(mods, -1, 0, 0, key, 0) : -1;
        free(key);
        rc = to[k] < 0 ? -1 : 0;
    }
    if (rc == 0)
        pm_sample_rows_remap(r, to);
    free(to);
    return rc;
}

/* This rank's regions and messages as the starting union. */
void pm_local_tables(const struct pm_merged *m, int rank, struct pm_union *u,
                     struct pm_joblog *log)
{
    for (int32_t r = 0; r < m->n && !u->failed; r++) {
        char *name = strdup(pm_name_get(m->name[r]));
        if (!name) {
            u->failed = 1;
            break;
        }
        /* pm_union_find takes `name` (frees it if the row exists) */
        int32_t row = pm_union_find(u, m->parent[r], m->depth[r],
                                    (int32_t)pm_name_kind(m->name[r]), name, 1);
        if (row < 0)
            free(name);
        if (row != r)
            u->failed = 1;  /* out of memory, or a merge that was not by path */
    }
    for (size_t i = 0; i < pm_msg_count(); i++) {
        char *text = strdup(pm_msg_get(i));
        if (text)
            pm_joblog_add(log, text, rank, 1);
    }
}

/* Point every thread node, and every sample row, at its column in the union. */
int pm_remap(const struct pm_merged *m, struct pm_union *u, const struct pm_output *o,
             struct pm_sample_rows *samples)
{
    int32_t *to_union = malloc(((size_t)m->n + 1) * sizeof *to_union);
    if (!to_union)
        return -1;
    int rc = 0;
    for (int32_t r = 0; r < m->n && rc == 0; r++) {
        char *name = (char *)pm_name_get(m->name[r]);
        int32_t parent = m->parent[r] < 0 ? -1 : to_union[m->parent[r]];
        to_union[r] = pm_union_find(u, parent, m->depth[r], (int32_t)pm_name_kind(m->name[r]),
                                    name, 0);
        rc = to_union[r] < 0 ? -1 : 0;
    }
    for (int32_t t = 0; rc == 0 && t < o->nthreads; t++)
        for (int32_t n = 0; n < o->threads[t]->nnodes; n++)
            m->map[t][n] = to_union[m->map[t][n]];
    for (size_t i = 0; rc == 0 && i < samples->nhits; i++)
        if (samples->hits[i].region >= 0)
            samples->hits[i].region = to_union[samples->hits[i].region];
    free(to_union);
    return rc;
}
