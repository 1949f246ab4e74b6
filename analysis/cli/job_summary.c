/*
 * job_summary.c — the report's engine inside the job, for a summary file
 * (runtime/job/pm_summary.h: the contract; docs/design.md, "Summary files").
 * Linked into the HDF5 writer library of each MPI ABI, which the runtime
 * loads in the MPI_Finalize wrapper; the ranks talk through the job's
 * pm_comm only.
 *
 * Each rank opens the file of its own rows (the job's tables, so every
 * rank's regions and events are the same rows) and runs the report's pass
 * over it, keeping the state (report_state.h). The states go up the same
 * binomial tree as the region union: in round k a rank with bit k set sends
 * its state to rank - 2^k, which joins it after its own, so every join is of
 * a lower range of ranks with the next higher one. Per rank that is one
 * state (regions x events, not ranks x anything) a round, log2 P rounds.
 */
#include "model/report_model.h"
#include "model/report_state.h"
#include "model/summary_tables.h"
#include "pm_job_summary.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PM_EXPORT __attribute__((visibility("default")))

/* Ranks the summary keeps at most, whatever the budget: the file is read on
 * a laptop. */
#define PM_KEEP_MAX 64

static int pm_send_state(const struct pm_comm *c, int to, const void *buf, size_t len,
                         int failed)
{
    /* a state MPI cannot move in one message goes as a failure */
    failed |= len > (size_t)INT32_MAX;
    uint64_t n = failed ? UINT64_MAX : (uint64_t)len;

    if (c->send(c, to, 11, &n, sizeof n) != 0)
        return -1;
    return failed ? 0 : c->send(c, to, 12, buf, len);
}

/* NULL with *failed set when the sender failed (or memory ran out: the
 * bytes are still taken, so that the sender is not left waiting). */
static void *pm_recv_state(const struct pm_comm *c, int from, size_t *len, int *failed)
{
    uint64_t n = 0;

    if (c->recv(c, from, 11, &n, sizeof n) != 0 || n == UINT64_MAX || n > (uint64_t)INT32_MAX) {
        *failed = 1;
        return NULL;
    }
    char *data = malloc(n ? n : 1), scratch[1];
    int rc = c->recv(c, from, 12, data ? data : scratch, data ? (size_t)n : 0);

    if (!data || rc != 0) {
        free(data);
        *failed = 1;
        return NULL;
    }
    *len = (size_t)n;
    return data;
}

static int pm_kept_has(const int32_t *kept, size_t n, int32_t rank)
{
    for (size_t i = 0; i < n; i++)
        if (kept[i] == rank)
            return 1;
    return 0;
}

static int pm_cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;

    return (x > y) - (x < y);
}

/* Regions by wall time over every thread, most first (ties in row order). */
static const struct pm_report *pm_heavy_rep;
static int pm_cmp_heavy(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    uint64_t wx = pm_heavy_rep->reg[x].wall_total, wy = pm_heavy_rep->reg[y].wall_total;

    if (wx != wy)
        return wx < wy ? 1 : -1;
    return (x > y) - (x < y);
}

/* The ranks kept in full: rank 0, then the slowest and the fastest rank of
 * each region in order of its time over the job, each while its rows fit in
 * the budget (bytes[k]: rank k's rows), PM_KEEP_MAX at most. */
static size_t pm_pick_kept(const struct pm_report *rep, const uint64_t *bytes, int size,
                           uint64_t budget, int32_t *kept)
{
    const struct pm_file *d = rep->d;
    size_t n = 0, *order = malloc((d->R ? d->R : 1) * sizeof *order);
    uint64_t used = 0;

    kept[n++] = 0;
    used += bytes[0];
    if (!order)
        return n;
    for (size_t r = 0; r < d->R; r++)
        order[r] = r;
    pm_heavy_rep = rep;
    qsort(order, d->R, sizeof *order, pm_cmp_heavy);
    for (size_t i = 0; i < d->R && n < PM_KEEP_MAX; i++) {
        const struct pm_xstat *w = &rep->xr.xreg[order[i]].q[PM_Q_WALL];
        int32_t cand[2] = {w->max_rank, w->min_rank};

        if (w->nspread == 0)
            continue;
        for (int k = 0; k < 2 && n < PM_KEEP_MAX; k++) {
            int32_t q = cand[k];

            if (q < 0 || q >= size || pm_kept_has(kept, n, q) || used + bytes[q] > budget)
                continue;
            kept[n++] = q;
            used += bytes[q];
        }
    }
    free(order);
    qsort(kept, n, sizeof *kept, pm_cmp_i32);
    return n;
}

/* Rank 0's list to every rank: count, then the items. */
static int pm_bcast_list(const struct pm_comm *c, void **items, size_t *n, size_t size)
{
    uint64_t cnt = c->rank == 0 ? (uint64_t)*n : 0;

    if (c->bcast(c, &cnt, sizeof cnt) != 0 || cnt > (uint64_t)INT32_MAX / size)
        return -1;
    if (c->rank != 0 && !(*items = calloc(cnt ? cnt : 1, size)))
        cnt = 0; /* the agreement below fails */
    if (!pm_comm_all_ok(c, *items != NULL) || c->bcast(c, *items, (size_t)cnt * size) != 0)
        return -1;
    *n = (size_t)cnt;
    return 0;
}

PM_EXPORT int pm_job_summary(const struct pm_comm *c, const char *path, uint64_t t_base,
                             uint64_t rows_bytes, uint64_t keep_bytes, struct pm_summary *out,
                             char *err, size_t errlen)
{
    struct pm_file d;
    struct pm_report rep;
    struct pm_rstate *s = NULL;
    uint64_t *bytes = NULL, *rows = NULL, *who = NULL, *low = NULL;
    int rank = c->rank, size = c->size, failed = 0, rc = -1, opened = 0;

    memset(out, 0, sizeof *out);
    memset(&d, 0, sizeof d);
    memset(&rep, 0, sizeof rep);
    opened = pm_file_open(path, &d, 0, err, errlen) == 0;
    if (opened)
        s = pm_rstate_local(&rep, &d, path, (size_t)t_base, err, errlen);
    failed = s == NULL;
    for (int step = 1; step < size; step <<= 1) {
        if (rank & step) {
            void *buf = NULL;
            size_t len = 0;

            if (!failed && pm_rstate_pack(s, &buf, &len) != 0)
                failed = 1;
            if (pm_send_state(c, rank - step, buf, len, failed) != 0)
                failed = 1;
            free(buf);
            break;
        }
        if (rank + step >= size)
            continue;
        size_t len = 0;
        void *data = pm_recv_state(c, rank + step, &len, &failed);

        if (data && !failed && pm_rstate_join(s, data, len) != 0) {
            failed = 1;
            snprintf(err, errlen, "joining rank %d's summary failed (out of memory?)",
                     rank + step);
        }
        free(data);
    }
    if (rank == 0 && !failed) {
        struct pm_stable tab[PM_STAB_N];

        failed = pm_rstate_pack(s, &out->state, &out->state_len) != 0 ||
                 pm_rstate_finish(s) != 0 || pm_summary_tables(&rep, tab) != 0;
        _Static_assert(PM_STAB_N == PM_SUMMARY_TABLES, "a summary table without a place");
        for (int i = 0; !failed && i < PM_STAB_N; i++)
            out->tab[i] = (struct pm_summary_table){tab[i].v, tab[i].u, tab[i].rows,
                                                    tab[i].cols, tab[i].columns};
        pm_rstate_layout_id(out->layout, sizeof out->layout);
    }
    if (!pm_comm_all_ok(c, rank != 0 || !failed)) {
        if (!err[0])
            snprintf(err, errlen, "a rank could not make its part of the summary");
        goto done;
    }
    /* the ranks kept in full, by their rows' size */
    if (rank == 0 && !(bytes = calloc((size_t)size, sizeof *bytes)))
        failed = 1;
    if (!pm_comm_all_ok(c, !failed) || c->gather_u64(c, rows_bytes, bytes) != 0)
        goto done;
    if (rank == 0) {
        if (!(out->kept = calloc(PM_KEEP_MAX, sizeof *out->kept)))
            failed = 1;
        else
            out->nkept = pm_pick_kept(&rep, bytes, size, keep_bytes, out->kept);
    }
    if (!pm_comm_all_ok(c, !failed) ||
        pm_bcast_list(c, (void **)&out->kept, &out->nkept, sizeof *out->kept) != 0)
        goto done;
    /* the thread rows the statistics name: each rank says rank and thread
     * of its own (the smallest answer wins: every other rank says none) */
    size_t nrows = 0;
    if (rank == 0) {
        if (!(rows = calloc(pm_report_refs_cap(&rep), sizeof *rows)))
            failed = 1;
        else
            nrows = pm_report_refs(&rep, rows);
    }
    if (!pm_comm_all_ok(c, !failed) ||
        pm_bcast_list(c, (void **)&rows, &nrows, sizeof *rows) != 0)
        goto done;
    if (!(who = calloc(nrows ? nrows : 1, sizeof *who)) ||
        !(low = calloc(nrows ? nrows : 1, sizeof *low)) ||
        !(rank != 0 || (out->refs = calloc(nrows ? nrows : 1, sizeof *out->refs))))
        failed = 1;
    for (size_t i = 0; !failed && i < nrows; i++) {
        uint64_t t = rows[i];

        who[i] = UINT64_MAX;
        if (opened && t >= t_base && t - t_base < d.T)
            who[i] = (uint64_t)(uint32_t)d.tids[t - t_base].rank << 32 |
                     (uint32_t)d.tids[t - t_base].thread;
    }
    if (!pm_comm_all_ok(c, !failed) ||
        (nrows && c->allreduce(c, who, low, (int)nrows, PM_COMM_MIN) != 0))
        goto done;
    for (size_t i = 0; rank == 0 && i < nrows; i++) {
        out->refs[i].row = rows[i];
        out->refs[i].rank = low[i] == UINT64_MAX ? -1 : (int32_t)(uint32_t)(low[i] >> 32);
        out->refs[i].thread = low[i] == UINT64_MAX ? -1 : (int32_t)(uint32_t)low[i];
    }
    out->nrefs = rank == 0 ? nrows : 0;
    rc = 0;
done:
    if (rc != 0)
        pm_summary_free(out);
    free(bytes);
    free(rows);
    free(who);
    free(low);
    pm_rstate_free(s);
    if (s || opened)
        pm_report_free(&rep);
    pm_file_free(&d);
    return rc;
}
