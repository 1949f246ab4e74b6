/* mpi_job_writer — one HDF5 file for the whole MPI job, written inside the
 * MPI_Finalize wrapper while MPI still works.
 *
 * 1. Regions: every rank's merged region list travels up a binomial tree
 *    (rank r sends to r - 2^k in round k) and is unioned by path at each
 *    step; rank 0 broadcasts the union. Cost per rank O(R_union · log P);
 *    nothing proportional to P is gathered anywhere. Messages ride along the
 *    same tree, deduplicated by text and capped.
 * 2. Rows: thread offsets by MPI_Exscan; every rank writes its own slab of
 *    every per-thread dataset collectively into one parallel file.
 * 3. Tables: variable-length strings cannot be written in parallel with
 *    HDF5 1.10, so rank 0 reopens the file serially for /events, /regions,
 *    /messages and the root attributes.
 * Any failure is agreed on by all ranks, and each then writes its own file.
 * All MPI traffic uses PMPI on a private communicator: perfmark's own
 * messages are never counted as the application's. */
#define _GNU_SOURCE
#include "pm_h5out.h"
#include "pm_log.h"
#include "pm_names.h"

#include <hdf5.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Beyond this many distinct messages the rest are only counted. */
#define PM_JOB_MESSAGES_MAX 1000
/* A packed buffer too large for one MPI message (int count) is an error. */
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

struct pm_union {
    int32_t n, cap;
    int32_t *parent, *depth, *kind;
    char **name;
    int32_t *hash;  /* index + 1, 0 empty */
    uint32_t mask;
    int failed;
};

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
static int32_t pm_union_find(struct pm_union *u, int32_t parent, int32_t depth, int32_t kind,
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

static void pm_union_free(struct pm_union *u)
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

struct pm_joblog {
    int32_t n, cap;
    char **text;
    int32_t *first_rank, *nranks;
    int32_t dropped;
};

static void pm_joblog_add(struct pm_joblog *l, char *text, int32_t first, int32_t nranks)
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

static void pm_joblog_free(struct pm_joblog *l)
{
    for (int32_t i = 0; i < l->n; i++)
        free(l->text[i]);
    free(l->text), free(l->first_rank), free(l->nranks);
    memset(l, 0, sizeof *l);
}

/* "[all 8 ranks] text", "[rank 3] text", "[rank 3 and 2 more] text". */
static char **pm_joblog_lines(const struct pm_joblog *l, int size, size_t *count)
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

/* Pack both payloads; a failed pack travels as a length of UINT64_MAX. */
static void pm_pack_all(const struct pm_union *u, const struct pm_joblog *l, struct pm_buf *b)
{
    pm_union_pack(u, b);
    pm_joblog_pack(l, b);
}

static int pm_send_buf(MPI_Comm comm, int to, const struct pm_buf *b)
{
    uint64_t len = b->failed || b->len > PM_PACK_MAX ? UINT64_MAX : b->len;
    if (PMPI_Send(&len, 1, MPI_UINT64_T, to, 1, comm) != MPI_SUCCESS)
        return -1;
    if (len == UINT64_MAX)
        return 0;
    return PMPI_Send(b->data, (int)len, MPI_BYTE, to, 2, comm) == MPI_SUCCESS ? 0 : -1;
}

/* Receive a buffer; NULL with *failed set when the sender failed. */
static char *pm_recv_buf(MPI_Comm comm, int from, size_t *len, int *failed)
{
    uint64_t n = 0;
    if (PMPI_Recv(&n, 1, MPI_UINT64_T, from, 1, comm, MPI_STATUS_IGNORE) != MPI_SUCCESS ||
        n == UINT64_MAX) {
        *failed = 1;
        return NULL;
    }
    char *data = malloc(n ? n : 1);
    /* Receive even without memory, so the sender is not left blocked. */
    char scratch[1];
    int rc = PMPI_Recv(data ? data : scratch, data ? (int)n : 0, MPI_BYTE, from, 2, comm,
                       MPI_STATUS_IGNORE);
    if (!data || rc != MPI_SUCCESS) {
        free(data);
        *failed = 1;
        return NULL;
    }
    *len = n;
    return data;
}

/* Union every rank's tables into rank 0's `u` and `l`. Returns -1 on rank 0
 * if any rank failed (other ranks return 0 after sending). */
static int pm_tree_reduce(MPI_Comm comm, int rank, int size, struct pm_union *u,
                          struct pm_joblog *l)
{
    int failed = u->failed;
    for (int step = 1; step < size; step <<= 1) {
        if (rank & step) {
            struct pm_buf b = {0};
            b.failed = failed;
            pm_pack_all(u, l, &b);
            int rc = pm_send_buf(comm, rank - step, &b);
            free(b.data);
            return rc;
        }
        if (rank + step >= size)
            continue;
        size_t len = 0;
        char *data = pm_recv_buf(comm, rank + step, &len, &failed);
        if (data) {
            struct pm_cursor c = {data, data + len, 0};
            pm_union_merge(u, &c);
            pm_joblog_merge(l, &c);
            failed |= c.bad || u->failed;
            free(data);
        }
    }
    return failed ? -1 : 0;
}

/* Rank 0's union to everyone: a failure on rank 0 travels as length 0. */
static int pm_bcast_union(MPI_Comm comm, int rank, struct pm_union *u, int ok)
{
    struct pm_buf b = {0};
    uint64_t len = 0;
    if (rank == 0 && ok) {
        pm_union_pack(u, &b);
        len = b.failed || b.len > PM_PACK_MAX ? 0 : b.len;
    }
    int rc = -1;
    if (PMPI_Bcast(&len, 1, MPI_UINT64_T, 0, comm) == MPI_SUCCESS && len > 0) {
        char *data = rank == 0 ? b.data : malloc(len);
        int have = data != NULL, all = 0;
        /* Everyone must take part in the broadcast, or nobody. */
        PMPI_Allreduce(&have, &all, 1, MPI_INT, MPI_MIN, comm);
        if (all && PMPI_Bcast(data, (int)len, MPI_BYTE, 0, comm) == MPI_SUCCESS) {
            rc = 0;
            if (rank != 0) {
                struct pm_cursor c = {data, data + len, 0};
                pm_union_free(u);
                pm_union_merge(u, &c);
                rc = c.bad || u->failed ? -1 : 0;
            }
        }
        if (rank != 0)
            free(data);
    }
    free(b.data);
    return rc;
}

/* ---- agreement helpers ------------------------------------------------------------ */

static int pm_all_ok(MPI_Comm comm, int ok)
{
    int all = 0;
    if (PMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS)
        return 0;
    return all;
}

/* Every rank must have measured the same events to share datasets. */
static uint64_t pm_events_fingerprint(const struct pm_eventset *set)
{
    uint64_t h = 1469598103934665603ull ^ (uint64_t)set->n ^ (uint64_t)set->ngroups << 8;
    for (int i = 0; i < set->n; i++) {
        const struct pm_event *e = &set->ev[i];
        for (const unsigned char *s = (const unsigned char *)e->name; *s; s++)
            h = (h ^ *s) * 1099511628211ull;
        h = (h ^ e->attr.config ^ (uint64_t)e->attr.type << 40 ^ (uint64_t)e->group << 56) *
            1099511628211ull;
    }
    return h;
}

static int pm_same_events(MPI_Comm comm, const struct pm_eventset *set)
{
    uint64_t h = pm_events_fingerprint(set), mine[2] = {h, ~h}, low[2] = {0, 0};
    if (PMPI_Allreduce(mine, low, 2, MPI_UINT64_T, MPI_MIN, comm) != MPI_SUCCESS)
        return 0;
    return low[0] == ~low[1];  /* min(h) == max(h) */
}

/* ---- writing ---------------------------------------------------------------------- */

/* Rows of every rank into one parallel file. */
static int pm_write_rows(MPI_Comm comm, const char *tmp, const struct pm_output *o,
                         int32_t *const *map, const struct pm_slab *base)
{
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_fapl_mpio(fapl, comm, MPI_INFO_NULL);
    hid_t file = H5Fcreate(tmp, H5F_ACC_EXCL, H5P_DEFAULT, fapl);
    H5Pclose(fapl);
    if (!pm_all_ok(comm, file >= 0)) {
        if (file >= 0)
            H5Fclose(file);
        return -1;
    }
    hid_t dxpl = H5Pcreate(H5P_DATASET_XFER);
    H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE);
    struct pm_slab slab = *base;
    slab.dxpl = dxpl;
    int rc = pm_h5out_rows(file, o, map, &slab);
    rc |= H5Fclose(file) < 0;
    H5Pclose(dxpl);
    return pm_all_ok(comm, rc == 0) ? 0 : -1;
}

/* Rank 0 adds the string tables and attributes serially. */
static int pm_write_tables(const char *tmp, const struct pm_output *o, const struct pm_union *u,
                           const struct pm_joblog *log)
{
    struct pm_region_desc *desc = calloc((size_t)u->n + 1, sizeof *desc);
    size_t nlines = 0;
    char **lines = pm_joblog_lines(log, o->ranks, &nlines);
    hid_t file = H5Fopen(tmp, H5F_ACC_RDWR, H5P_DEFAULT);
    int rc = -1;
    if (desc && lines && file >= 0) {
        for (int32_t i = 0; i < u->n; i++)
            desc[i] = (struct pm_region_desc){u->name[i], u->parent[i], u->depth[i],
                                              u->kind[i]};
        struct pm_output job = *o;
        job.rank = -1;  /* the file holds every rank */
        rc = pm_h5out_tables(file, &job, desc, u->n, (const char *const *)lines, nlines);
    }
    if (file >= 0 && H5Fclose(file) < 0)
        rc = -1;
    for (size_t i = 0; lines && i < nlines; i++)
        free(lines[i]);
    free(lines), free(desc);
    return rc;
}

/* This rank's regions and messages as the starting union. */
static void pm_local_tables(const struct pm_merged *m, int rank, struct pm_union *u,
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

/* Point every thread node at its column in the union. */
static int pm_remap(const struct pm_merged *m, struct pm_union *u, const struct pm_output *o)
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
    free(to_union);
    return rc;
}

/* The job writer (pm_writer.h, struct pm_writer_entry): 1 on the rank that
 * must publish `tmp` under `want`, 0 on the others, -1 on every rank when
 * the job file could not be written (each rank then writes its own). */
int pm_mpi_job_writer(const struct pm_output *o, const char *want, char *tmp, size_t tmplen,
                      char *err, size_t errlen);
int pm_mpi_job_writer(const struct pm_output *o, const char *want, char *tmp, size_t tmplen,
                      char *err, size_t errlen)
{
    int initialized = 0, finalized = 0;
    if (PMPI_Initialized(&initialized) != MPI_SUCCESS || !initialized ||
        PMPI_Finalized(&finalized) != MPI_SUCCESS || finalized)
        return -1;
    MPI_Comm comm;
    if (PMPI_Comm_dup(MPI_COMM_WORLD, &comm) != MPI_SUCCESS) {
        snprintf(err, errlen, "cannot duplicate MPI_COMM_WORLD for the job file");
        return -1;
    }
    int rank = 0, size = 1;
    PMPI_Comm_rank(comm, &rank);
    PMPI_Comm_size(comm, &size);
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);

    struct pm_merged m;
    struct pm_union u = {0};
    struct pm_joblog log = {0};
    int ok = pm_merge(&m, o) == 0;
    if (ok)
        pm_local_tables(&m, rank, &u, &log);
    u.failed |= !ok;  /* travels up the tree to rank 0 */
    int role = -1;

    if (!pm_all_ok(comm, pm_same_events(comm, o->set))) {
        snprintf(err, errlen, "the ranks measured different event sets (nodes of different "
                 "kinds?): they cannot share one file");
        goto out;
    }
    int reduced = pm_tree_reduce(comm, rank, size, &u, &log);
    /* Every rank takes part in each collective below, whatever happened
     * locally, so that a failure on one rank cannot leave others waiting. */
    int have_union = pm_bcast_union(comm, rank, &u, reduced == 0 && !u.failed) == 0;
    int mapped = have_union && ok && pm_remap(&m, &u, o) == 0;
    if (!pm_all_ok(comm, mapped)) {
        snprintf(err, errlen, "merging the region tables of all ranks failed (out of memory?)");
        goto out;
    }

    /* Row offsets: threads in rank order; /rank rows for ranks with totals. */
    long long mine[2] = {o->nthreads, o->totals ? 1 : 0}, before[2] = {0, 0}, total[2];
    PMPI_Exscan(mine, before, 2, MPI_LONG_LONG, MPI_SUM, comm);
    PMPI_Allreduce(mine, total, 2, MPI_LONG_LONG, MPI_SUM, comm);
    if (rank == 0)
        before[0] = before[1] = 0;  /* Exscan leaves rank 0's result undefined */
    struct pm_slab slab = {.thread_offset = (hsize_t)before[0], .thread_total = (hsize_t)total[0],
                           .rank_offset = (hsize_t)before[1], .rank_total = (hsize_t)total[1],
                           .regions = (hsize_t)u.n};

    /* Same temporary name everywhere: rank 0's pid. */
    long pid = (long)getpid();
    PMPI_Bcast(&pid, 1, MPI_LONG, 0, comm);
    snprintf(tmp, tmplen, "%s.tmp-%ld", want, pid);
    if (rank == 0)
        unlink(tmp);  /* a leftover of an earlier job with the same pid */
    PMPI_Barrier(comm);

    if (pm_write_rows(comm, tmp, o, m.map, &slab) != 0) {
        snprintf(err, errlen, "writing the job file %s in parallel failed", tmp);
        if (rank == 0)
            unlink(tmp);
        goto out;
    }
    int tables_ok = rank == 0 ? pm_write_tables(tmp, o, &u, &log) == 0 : 1;
    PMPI_Bcast(&tables_ok, 1, MPI_INT, 0, comm);
    if (!tables_ok) {
        snprintf(err, errlen, "writing the tables of the job file %s failed", tmp);
        if (rank == 0)
            unlink(tmp);
        goto out;
    }
    role = rank == 0 ? 1 : 0;
out:
    pm_union_free(&u);
    pm_joblog_free(&log);
    pm_merge_free(&m, o->nthreads);
    PMPI_Comm_free(&comm);
    return role;
}
