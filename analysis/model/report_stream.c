/*
 * report_stream.c — the report's pass over the cells, a block of thread rows
 * at a time, so that memory is bounded by one block and the per-region and
 * per-rank sums, not by the file (issue 6).
 *
 * A block is a fixed number of thread rows (a multiple of the file's chunk
 * along threads: pm_block_rows). Each block is aggregated on its own into a
 * "part" (every accumulator the report needs, zeroed first), and the parts
 * are joined into the whole in block order (pm_part_join). Under mpirun the
 * blocks are shared among the ranks (a contiguous range each); every rank
 * sends its parts to rank 0, which joins them in block order as well. The
 * arithmetic is therefore the same whatever the number of ranks — the same
 * blocks, summed the same way, joined in the same order — and np 1 and np 4
 * print the same bytes. A file of one block (every small file) gets exactly
 * the numbers of adding its cells one by one.
 */
#include "model/report_model.h"
#include "model/report_mpi.h"
#include "model/report_state.h"
#include "model/report_stream.h"

#include <mpi.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PM_NONE SIZE_MAX
#define PM_BLOCK_BYTES ((size_t)4 << 20) /* cell bytes per block, about */

/* ---------------------------------------------------------------- parts */

/* One region's accumulators over a set of thread rows. */
struct pm_regacc {
    pm_fix own_cpu, own_wall; /* exact (exact_sum.h): joined in any order */
    uint64_t visits, wall_total, wall_min, wall_max, wall_sum_visited, nvisited, nwall;
    uint64_t time_est, time_na, excl_est, excl_bad; /* cells (report_measure.c) */
    uint64_t wall_raw, timed, timer, reads, thr_cells, thr_min, thr_max;
    uint64_t excl_total, omp_wait_ns;
    struct pm_tstat wall_thr, excl_thr;
    struct pm_tacc wa, xa;
    uint64_t bits[PM_MAX_FLAGS];                /* cells carrying bit b */
    uint64_t where[PM_MAX_FLAGS][PM_FLAG_WHERE]; /* the first threads carrying bit b */
    uint8_t nwhere[PM_MAX_FLAGS];
    struct pm_tdstat td;
    struct pm_td_sum tds;
};

struct pm_evacc {
    struct pm_evstat s;
    struct pm_acc a;
};

struct pm_part_hdr {
    int32_t status; /* 0, or -1: the block could not be read (msg says why) */
    uint32_t seen;  /* union of the cells' flags */
    uint64_t cells, flagged, nslots;
    uint64_t bitcells[PM_MAX_FLAGS];
    char msg[256];
};

/* The accumulators of a block (or, with a slot per rank, of the whole file)
 * in one flat buffer: MPI sends it as bytes between copies of the same
 * binary. */
struct pm_part {
    unsigned char *buf;
    size_t cap; /* bytes of buf */
    struct pm_part_hdr *h;
    struct pm_regacc *reg; /* [R] */
    struct pm_evacc *ev;   /* [R * E] */
    uint64_t *slot_rank;   /* [nslots] rank index of each slot */
    struct pm_rq *rq;      /* [nslots][R][nq + 1] */
    uint64_t *omp;         /* [nslots][R][2] */
    uint64_t *mpi_ns;      /* [nslots] */
    uint64_t *mpi_est;     /* [nslots] some of mpi_ns is an estimate */
};

static size_t pm_round(size_t n)
{
    return (n + 15) & ~(size_t)15;
}

/* Bytes of a part of `nslots` rank slots; binds p's arrays when buf != NULL. */
static size_t pm_part_layout(const struct pm_report *rep, size_t nslots, struct pm_part *p,
                             unsigned char *buf)
{
    const struct pm_file *d = rep->d;
    size_t nq = PM_Q_EVENTS + d->E, off = 0, o[8];

    o[0] = off, off += pm_round(sizeof(struct pm_part_hdr));
    o[1] = off, off += pm_round(d->R * sizeof(struct pm_regacc));
    o[2] = off, off += pm_round(d->R * d->E * sizeof(struct pm_evacc));
    o[3] = off, off += pm_round(nslots * sizeof(uint64_t));
    o[4] = off, off += pm_round(nslots * d->R * (nq + 1) * sizeof(struct pm_rq));
    o[5] = off, off += pm_round(nslots * d->R * 2 * sizeof(uint64_t));
    o[6] = off, off += pm_round(nslots * sizeof(uint64_t));
    o[7] = off, off += pm_round(nslots * sizeof(uint64_t));
    if (buf) {
        p->buf = buf;
        p->h = (struct pm_part_hdr *)(buf + o[0]);
        p->reg = (struct pm_regacc *)(buf + o[1]);
        p->ev = (struct pm_evacc *)(buf + o[2]);
        p->slot_rank = (uint64_t *)(buf + o[3]);
        p->rq = (struct pm_rq *)(buf + o[4]);
        p->omp = (uint64_t *)(buf + o[5]);
        p->mpi_ns = (uint64_t *)(buf + o[6]);
        p->mpi_est = (uint64_t *)(buf + o[7]);
    }
    return off;
}

static int pm_part_alloc(const struct pm_report *rep, size_t nslots, struct pm_part *p)
{
    size_t n = pm_part_layout(rep, nslots, p, NULL);

    memset(p, 0, sizeof *p);
    p->buf = calloc(1, n);
    if (!p->buf)
        return -1;
    p->cap = n;
    pm_part_layout(rep, nslots, p, p->buf);
    return 0;
}

/* Zero a part of `nslots` slots in p's buffer (which has room for it). */
static void pm_part_reset(const struct pm_report *rep, struct pm_part *p, size_t nslots)
{
    size_t n = pm_part_layout(rep, nslots, p, p->buf);

    memset(p->buf, 0, n);
    p->h->nslots = nslots;
}

/* ---------------------------------------------------------------- blocks */

struct pm_engine {
    struct pm_report *rep;
    const struct pm_file *d;
    size_t B, nblocks, nq;
    size_t t_base;    /* the file's thread row 0 in the job's numbering (a summary's rank) */
    size_t W;         /* rank slots of the whole: ranks whose sums are open at once */
    size_t *last;     /* [nranks] last thread row of each rank */
    size_t next_done; /* ranks below it are folded into the statistics across ranks */
    size_t *slot_of;  /* [nranks] scratch: slot of a rank in the current block */
    struct pm_ctime *tm; /* [R] one thread's times (report_measure.c) */
    struct pm_cells cells;
    struct pm_totals tot; /* the block's /thread rows, for read_cost_ns */
};

/* A state over whole ranks (report_state.h): its report, the engine that
 * made it, and every accumulator with no rank slot open. */
struct pm_rstate {
    struct pm_report *rep;
    struct pm_engine g;
    struct pm_part all;
};

/* Thread rows per block. The same for every run on the same file (it
 * depends on the file alone), so that every run joins the same blocks.
 * PERFMARK_REPORT_BLOCK=N overrides it (tests: many blocks on a small file). */
size_t pm_block_rows(const struct pm_file *d)
{
    const char *s = getenv("PERFMARK_REPORT_BLOCK");
    /* the [T,R] arrays: visits, wall_ns, flags, bytes, bytes_unknown, and
     * reads, timer_visits, timed_visits, throttled_from where the file has them */
    size_t words = d->E + 2 * d->G + 5 + (d->has_visit_data ? 4 : 0);
    size_t row = d->R * words * 8, want, c = d->chunk_threads;

    want = row ? PM_BLOCK_BYTES / row : d->T;
    if (want == 0)
        want = 1;
    /* whole chunks: each one is inflated once, by the one reader that needs it */
    if (c > 0)
        want = want < c ? c : want / c * c;
    if (s && *s) {
        char *end;
        unsigned long long v = strtoull(s, &end, 10);

        if (!*end && v > 0)
            want = v < SIZE_MAX ? (size_t)v : SIZE_MAX;
    }
    /* one block holds the whole of a smaller file: no larger buffer than it */
    return d->T > 0 && want > d->T ? d->T : want;
}

/* Rank slots of block b, in order of first appearance. */
static size_t pm_block_slots(struct pm_engine *g, size_t b, uint64_t *slot_rank)
{
    const struct pm_report *rep = g->rep;
    size_t t0 = b * g->B, t1 = t0 + g->B < g->d->T ? t0 + g->B : g->d->T, n = 0;

    for (size_t t = t0; t < t1; t++) {
        size_t k = rep->xr.thread_rank[t];

        if (g->slot_of[k] == PM_NONE) {
            if (slot_rank)
                slot_rank[n] = k;
            g->slot_of[k] = n++;
        }
    }
    if (!slot_rank) /* counting only: leave the scratch clean */
        for (size_t t = t0; t < t1; t++)
            g->slot_of[rep->xr.thread_rank[t]] = PM_NONE;
    return n;
}

/* Is a worse than b among a region's slowest threads (less time; on a tie
 * the later thread row, which the chart drops first)? */
static int pm_top_worse(const struct pm_topthr *a, const struct pm_topthr *b)
{
    return a->wall < b->wall || (a->wall == b->wall && a->t > b->t);
}

/* Thread t (rows come in ascending order) into a region's PM_TOP_THREADS
 * slowest: a min-heap on pm_top_worse, so the one to drop is at the root
 * and memory stays bounded whatever the number of threads. */
static void pm_top_add(struct pm_topthr *h, size_t *n, double wall, size_t t, uint32_t flags)
{
    struct pm_topthr c = {wall, t, flags};
    size_t i;

    if (*n < PM_TOP_THREADS) {
        for (i = (*n)++; i > 0 && pm_top_worse(&c, &h[(i - 1) / 2]); i = (i - 1) / 2)
            h[i] = h[(i - 1) / 2];
        h[i] = c;
        return;
    }
    if (!pm_top_worse(&h[0], &c)) /* a later row with no more time never enters */
        return;
    for (i = 0;;) {
        size_t l = 2 * i + 1, m = i;
        const struct pm_topthr *least = &c;

        if (l < *n && pm_top_worse(&h[l], least))
            m = l, least = &h[l];
        if (l + 1 < *n && pm_top_worse(&h[l + 1], least))
            m = l + 1;
        if (m == i)
            break;
        h[i] = h[m];
        i = m;
    }
    h[i] = c;
}

static int pm_cmp_top_row(const void *a, const void *b)
{
    size_t x = ((const struct pm_topthr *)a)->t, y = ((const struct pm_topthr *)b)->t;

    return (x > y) - (x < y);
}

/* One cell into the part: time and exclusive time as report_measure.c
 * makes them (a sampled cell's time is its estimate), `cost` the thread's
 * read cost (0 when the file has none). */
static void pm_cell(struct pm_engine *g, struct pm_part *p, size_t slot, size_t t, size_t r,
                    size_t c, double cost)
{
    const struct pm_report *rep = g->rep;
    const struct pm_file *d = g->d;
    const struct pm_cells *cl = &g->cells;
    const struct pm_ctime *tm = &g->tm[r];
    struct pm_regacc *ra = &p->reg[r];
    uint64_t v = cl->visits[c], w = tm->ns, x = tm->excl;
    uint32_t f = cl->flags[c];
    int visited = v > 0, lost = (f & PM_FILE_FLAG_LOST_GENERATION) != 0;
    int has_w = tm->kind != PM_V_NONE, has_x = tm->excl_kind != PM_V_NONE;
    const uint64_t *cnt = &cl->counts[c * d->E];
    const uint64_t *en = &cl->enabled_ns[c * d->G], *run = &cl->running_ns[c * d->G];
    struct pm_rq *rq = &p->rq[(slot * d->R + r) * (g->nq + 1)];
    double own_cpu, own_wall;

    ra->visits = pm_add_sat(ra->visits, v);
    ra->wall_total = pm_add_sat(ra->wall_total, w);
    ra->excl_total = pm_add_sat(ra->excl_total, x);
    ra->wall_raw = pm_add_sat(ra->wall_raw, cl->wall_ns[c]);
    ra->timed = pm_add_sat(ra->timed, cl->timed_visits[c]);
    ra->timer = pm_add_sat(ra->timer, cl->timer_visits[c]);
    ra->reads = pm_add_sat(ra->reads, cl->reads[c]);
    ra->time_est += tm->kind == PM_V_ESTIMATE;
    ra->time_na += !has_w;
    ra->excl_est += tm->excl_kind == PM_V_ESTIMATE;
    ra->excl_bad += tm->excl_bad;
    pm_cell_own(cl->reads[c], v, cl->timer_visits[c], cost, &own_cpu, &own_wall);
    ra->own_cpu = pm_fix_add(ra->own_cpu, pm_fix_of(own_cpu));
    ra->own_wall = pm_fix_add(ra->own_wall, pm_fix_of(own_wall));
    if (cl->throttled_from[c]) {
        if (ra->thr_cells == 0 || cl->throttled_from[c] < ra->thr_min)
            ra->thr_min = cl->throttled_from[c];
        if (ra->thr_cells == 0 || cl->throttled_from[c] > ra->thr_max)
            ra->thr_max = cl->throttled_from[c];
        ra->thr_cells++;
    }
    if (visited)
        ra->nvisited++;
    if (visited && has_w) {
        if (ra->nwall == 0 || w < ra->wall_min)
            ra->wall_min = w;
        if (ra->nwall == 0 || w > ra->wall_max)
            ra->wall_max = w;
        ra->wall_sum_visited = pm_add_sat(ra->wall_sum_visited, w);
        ra->nwall++;
        pm_tacc_add(&ra->wall_thr, &ra->wa, w, t);
        if (rep->top)
            pm_top_add(&rep->top[r * PM_TOP_THREADS], &rep->ntop[r], (double)w, t, f);
    }
    if (visited && has_x)
        pm_tacc_add(&ra->excl_thr, &ra->xa, x, t);
    if (rep->heat && !rep->heat_by_rank && t < rep->heat_cols) {
        rep->heat[r * rep->heat_cols + t] += (double)w;
        rep->heat_in[r * rep->heat_cols + t] |= (unsigned char)visited;
    }
    if (visited || f)
        p->h->cells++;
    if (f) {
        p->h->flagged++;
        p->h->seen |= f;
        for (unsigned b = 0; b < PM_MAX_FLAGS; b++) {
            if (!(f & ((uint32_t)1 << b)))
                continue;
            ra->bits[b]++;
            p->h->bitcells[b]++;
            if (ra->nwhere[b] < PM_FLAG_WHERE)
                ra->where[b][ra->nwhere[b]++] = t;
        }
    }
    for (size_t e = 0; e < d->E; e++) {
        size_t gr = (size_t)d->events[e].group;
        struct pm_evacc *ea = &p->ev[r * d->E + e];

        if (lost)
            ea->s.untrusted = 1;
        pm_acc_add_at(&ea->s, &ea->a, cnt[e], en[gr], run[gr], visited, t);
    }
    if (rep->td.reg)
        pm_td_add_cell(&rep->td, d, visited, f, cnt, en, run, &ra->td, &ra->tds);
    /* across ranks: the rank's sums (report_ranks.c) */
    pm_rq_add(&rq[PM_Q_VISITS], v, 0, 0, visited);
    pm_rq_add_time(&rq[PM_Q_WALL], (enum pm_vkind)tm->kind, w, visited);
    pm_rq_add(&rq[PM_Q_BYTES], cl->bytes[c], 0, 0, visited);
    pm_rq_add(&rq[PM_Q_BYTES_UNKNOWN], cl->bytes_unknown[c], 0, 0, visited);
    for (size_t e = 0; e < d->E; e++) {
        size_t gr = (size_t)d->events[e].group;

        if (lost)
            rq[PM_Q_EVENTS + e].untrusted = 1;
        pm_rq_add(&rq[PM_Q_EVENTS + e], cnt[e], en[gr], run[gr], visited);
    }
    pm_rq_add_time(&rq[g->nq], (enum pm_vkind)tm->excl_kind, x, visited);
    if (tm->excl_bad)
        rq[g->nq].untrusted = 1;
    p->omp[(slot * d->R + r) * 2] = pm_add_sat(p->omp[(slot * d->R + r) * 2], w);
    if (rep->xr.mpi_fn[r] != PM_NONE && rep->xr.mpi_outer[r]) {
        p->mpi_ns[slot] = pm_add_sat(p->mpi_ns[slot], w);
        p->mpi_est[slot] |= tm->kind == PM_V_ESTIMATE;
    }
}

/* Block b into p (reset first). Returns 0, or -1 with p->h->msg. */
static int pm_block(struct pm_engine *g, size_t b, struct pm_part *p)
{
    struct pm_report *rep = g->rep;
    const struct pm_file *d = g->d;
    size_t t0 = b * g->B, nt = t0 + g->B < d->T ? g->B : d->T - t0, ns;
    char err[256] = "";

    /* slots first (into scratch), then the part sized for them */
    ns = pm_block_slots(g, b, NULL);
    pm_part_reset(rep, p, ns);
    pm_block_slots(g, b, p->slot_rank);
    if (pm_file_rows(d, t0, nt, &g->cells, err, sizeof err) < 0 ||
        (d->has_read_cost && pm_file_totals(d, t0, nt, &g->tot, err, sizeof err) < 0)) {
        p->h->status = -1;
        snprintf(p->h->msg, sizeof p->h->msg, "%s", err);
        for (size_t s = 0; s < ns; s++)
            g->slot_of[p->slot_rank[s]] = PM_NONE;
        return -1;
    }
    for (size_t t = t0; t < t0 + nt; t++) {
        size_t slot = g->slot_of[rep->xr.thread_rank[t]];
        double cost = d->has_read_cost ? g->tot.read_cost_ns[t - t0] : 0;

        if (!(cost > 0) || cost != cost)
            cost = 0;
        pm_thread_times(d, &g->cells, t, g->tm);
        for (size_t r = 0; r < d->R; r++)
            pm_cell(g, p, slot, g->t_base + t, r, pm_cell_tr(d, &g->cells, t, r), cost);
        for (size_t k = 0; k < rep->xr.nwait; k++) {
            size_t a = rep->xr.wait_above[k];
            uint64_t w = g->tm[rep->xr.wait_row[k]].ns;

            p->reg[a].omp_wait_ns = pm_add_sat(p->reg[a].omp_wait_ns, w);
            p->omp[(slot * d->R + a) * 2 + 1] = pm_add_sat(p->omp[(slot * d->R + a) * 2 + 1], w);
        }
    }
    for (size_t s = 0; s < ns; s++)
        g->slot_of[p->slot_rank[s]] = PM_NONE;
    return 0;
}

/* Join block part b into the whole (slots = ranks), in block order. */
static void pm_part_join(struct pm_engine *g, struct pm_part *all, const struct pm_part *b)
{
    const struct pm_file *d = g->d;
    size_t nq1 = g->nq + 1;

    all->h->seen |= b->h->seen;
    all->h->cells += b->h->cells;
    all->h->flagged += b->h->flagged;
    for (unsigned k = 0; k < PM_MAX_FLAGS; k++)
        all->h->bitcells[k] += b->h->bitcells[k];
    for (size_t r = 0; r < d->R; r++) {
        struct pm_regacc *x = &all->reg[r];
        const struct pm_regacc *y = &b->reg[r];

        x->visits = pm_add_sat(x->visits, y->visits);
        x->wall_total = pm_add_sat(x->wall_total, y->wall_total);
        x->excl_total = pm_add_sat(x->excl_total, y->excl_total);
        x->omp_wait_ns = pm_add_sat(x->omp_wait_ns, y->omp_wait_ns);
        x->nvisited += y->nvisited;
        if (y->nwall) {
            if (x->nwall == 0 || y->wall_min < x->wall_min)
                x->wall_min = y->wall_min;
            if (x->nwall == 0 || y->wall_max > x->wall_max)
                x->wall_max = y->wall_max;
            x->wall_sum_visited = pm_add_sat(x->wall_sum_visited, y->wall_sum_visited);
            x->nwall += y->nwall;
        }
        x->time_est += y->time_est;
        x->time_na += y->time_na;
        x->excl_est += y->excl_est;
        x->excl_bad += y->excl_bad;
        x->wall_raw = pm_add_sat(x->wall_raw, y->wall_raw);
        x->timed = pm_add_sat(x->timed, y->timed);
        x->timer = pm_add_sat(x->timer, y->timer);
        x->reads = pm_add_sat(x->reads, y->reads);
        x->own_cpu = pm_fix_add(x->own_cpu, y->own_cpu);
        x->own_wall = pm_fix_add(x->own_wall, y->own_wall);
        if (y->thr_cells) {
            if (x->thr_cells == 0 || y->thr_min < x->thr_min)
                x->thr_min = y->thr_min;
            if (x->thr_cells == 0 || y->thr_max > x->thr_max)
                x->thr_max = y->thr_max;
            x->thr_cells += y->thr_cells;
        }
        pm_tacc_merge(&x->wall_thr, &x->wa, &y->wall_thr, &y->wa);
        pm_tacc_merge(&x->excl_thr, &x->xa, &y->excl_thr, &y->xa);
        for (unsigned k = 0; k < PM_MAX_FLAGS; k++) {
            x->bits[k] += y->bits[k];
            for (unsigned i = 0; i < y->nwhere[k] && x->nwhere[k] < PM_FLAG_WHERE; i++)
                x->where[k][x->nwhere[k]++] = y->where[k][i];
        }
        x->td.used += y->td.used;
        for (int k = 0; k < PM_TD_NOUT; k++)
            x->td.left_out[k] += y->td.left_out[k];
        x->td.estimate |= y->td.estimate;
        for (size_t k = 0; k < PM_MODEL_MAX_EVENTS; k++) {
            x->tds.exact[k] = pm_add_sat(x->tds.exact[k], y->tds.exact[k]);
            x->tds.scaled[k] = pm_fix_add(x->tds.scaled[k], y->tds.scaled[k]);
        }
        x->tds.enabled = pm_add_sat(x->tds.enabled, y->tds.enabled);
        x->tds.running = pm_add_sat(x->tds.running, y->tds.running);
    }
    for (size_t i = 0; i < d->R * d->E; i++)
        pm_acc_merge(&all->ev[i].s, &all->ev[i].a, &b->ev[i].s, &b->ev[i].a);
    for (size_t s = 0; s < b->h->nslots; s++) {
        size_t k = b->slot_rank[s] % g->W;

        for (size_t i = 0; i < d->R * nq1; i++) {
            struct pm_rq *x = &all->rq[k * d->R * nq1 + i];
            const struct pm_rq *y = &b->rq[s * d->R * nq1 + i];

            x->sum = pm_fix_add(x->sum, y->sum);
            x->nvals += y->nvals;
            x->n_na += y->n_na;
            x->estimate |= y->estimate;
            x->untrusted |= y->untrusted;
        }
        for (size_t i = 0; i < d->R * 2; i++)
            all->omp[k * d->R * 2 + i] = pm_add_sat(all->omp[k * d->R * 2 + i],
                                                    b->omp[s * d->R * 2 + i]);
        all->mpi_ns[k] = pm_add_sat(all->mpi_ns[k], b->mpi_ns[s]);
        all->mpi_est[k] |= b->mpi_est[s];
    }
}

/* The HTML heat map by rank: rank k's time in each region (rq as for
 * pm_report_rank_done). */
static void pm_heat_rank(struct pm_report *rep, size_t nq, size_t k, const struct pm_rq *rq)
{
    if (!rep->heat || !rep->heat_by_rank || k >= rep->heat_cols)
        return;
    for (size_t r = 0; r < rep->d->R; r++) {
        const struct pm_rq *q0 = rq + r * (nq + 1);

        rep->heat[r * rep->heat_cols + k] = pm_fix_value(q0[PM_Q_WALL].sum);
        rep->heat_in[r * rep->heat_cols + k] = q0[PM_Q_VISITS].sum > 0;
    }
}

/* Fold every rank whose threads are all in (rows below `end`) into the
 * statistics across ranks, in ascending rank order, and free its slot. With
 * threads in rank order (as perfmark writes them) a rank is done as soon as
 * the block holding its last thread is joined; otherwise W = every rank and
 * all are done after the last block. Either way the ranks are folded in the
 * same order, so the numbers do not depend on it. */
static void pm_ranks_done(struct pm_engine *g, struct pm_part *all, size_t end)
{
    const struct pm_file *d = g->d;
    size_t n = d->R * (g->nq + 1);

    while (g->next_done < g->rep->xr.nranks && g->last[g->next_done] < end) {
        size_t k = g->next_done++, slot = k % g->W;

        pm_report_rank_done(&g->rep->xr, d, k, &all->rq[slot * n], &all->omp[slot * d->R * 2],
                            all->mpi_ns[slot], all->mpi_est[slot] != 0);
        pm_heat_rank(g->rep, g->nq, k, &all->rq[slot * n]);
        memset(&all->rq[slot * n], 0, n * sizeof *all->rq);
        memset(&all->omp[slot * d->R * 2], 0, d->R * 2 * sizeof *all->omp);
        all->mpi_ns[slot] = 0;
        all->mpi_est[slot] = 0;
    }
}

/* The whole into the report. */
static int pm_finish(struct pm_engine *g, struct pm_part *all)
{
    struct pm_report *rep = g->rep;
    const struct pm_file *d = g->d;
    pm_flag_defs(rep, all->h->seen);
    rep->cells = all->h->cells;
    rep->flagged_cells = all->h->flagged;
    for (size_t i = 0; i < rep->nflags; i++) {
        unsigned b = 0;

        while (b < 31 && ((uint32_t)1 << b) != rep->flags[i].bit)
            b++;
        rep->flags[i].cells = all->h->bitcells[b];
        /* where: the first cells in tree order, then thread order, so that
         * the summary names the outermost regions first */
        for (size_t o = 0; o < d->R && rep->nwhere[i] < PM_FLAG_WHERE; o++) {
            size_t r = rep->order[o];

            for (unsigned j = 0; j < all->reg[r].nwhere[b] && rep->nwhere[i] < PM_FLAG_WHERE; j++) {
                struct pm_flagwhere *w = &rep->where[i * PM_FLAG_WHERE + rep->nwhere[i]++];
                w->r = r;
                w->t = all->reg[r].where[b][j];
            }
        }
        for (size_t r = 0; r < d->R; r++)
            rep->reg[r].flag_cells[i] = all->reg[r].bits[b];
    }
    for (size_t r = 0; r < d->R; r++) {
        struct pm_regstat *s = &rep->reg[r];
        struct pm_regacc *ra = &all->reg[r];

        s->visits = ra->visits;
        s->wall_total = ra->wall_total;
        s->nvisited = ra->nvisited;
        s->nwall = ra->nwall;
        if (s->nwall) {
            s->wall_min = ra->wall_min;
            s->wall_max = ra->wall_max;
            s->wall_mean = (double)ra->wall_sum_visited / (double)s->nwall;
        }
        s->time_est = ra->time_est;
        s->time_na = ra->time_na;
        s->has_wall = !(s->time_na > 0 && s->nwall == 0);
        s->excl_est = ra->excl_est > 0;
        s->excl_bad = ra->excl_bad > 0;
        s->wall_raw = ra->wall_raw;
        s->timed_visits = ra->timed;
        s->timer_visits = ra->timer;
        s->reads = ra->reads;
        s->own_cpu_ns = pm_fix_value(ra->own_cpu);
        s->own_wall_ns = pm_fix_value(ra->own_wall);
        s->throttled = ra->thr_cells;
        s->throttled_min = ra->thr_min;
        s->throttled_max = ra->thr_max;
        s->wall_thr = ra->wall_thr;
        s->excl_thr = ra->excl_thr;
        pm_tacc_finish(&s->wall_thr, &ra->wa);
        pm_tacc_finish(&s->excl_thr, &ra->xa);
        s->excl_total = ra->excl_total;
        s->omp_wait_ns = ra->omp_wait_ns;
        for (size_t e = 0; e < d->E; e++) {
            struct pm_evacc *ea = &all->ev[r * d->E + e];

            s->ev[e] = ea->s;
            pm_acc_finish(&s->ev[e], &ea->a);
        }
        if (rep->td.reg) {
            rep->td.reg[r] = ra->td;
            pm_td_finish_stat(&rep->td, &ra->tds, &rep->td.reg[r]);
        }
        if (rep->top) /* the chart lists them in row order */
            qsort(&rep->top[r * PM_TOP_THREADS], rep->ntop[r], sizeof *rep->top, pm_cmp_top_row);
    }
    /* timer-only regions have no counts of their own: before IPC and the
     * derived metrics are made of them */
    pm_measure_regions(&rep->ms, rep->d, rep->reg, pm_flag_of_kind(rep, PM_FK_TIMER_ONLY));
    pm_report_derived(rep);
    pm_report_ranks_finish(&rep->xr, rep->d);
    pm_measure_ranks(rep->d, rep->reg, rep->xr.xreg);
    return 0;
}

/* The MPI rank that aggregates block b: contiguous ranges, so that each
 * rank reads neighbouring chunks. */
static int pm_owner(size_t b, size_t nblocks, int np)
{
    return (int)((b * (size_t)np) / (nblocks ? nblocks : 1));
}

/* The HTML charts' state (rep->heat, rep->top): bounded by the regions
 * times PM_HEAT_COLS columns and PM_TOP_THREADS threads. */
static int pm_html_alloc(struct pm_report *rep)
{
    const struct pm_file *d = rep->d;
    size_t R = d->R ? d->R : 1;

    rep->heat_by_rank = rep->xr.nranks > 1;
    rep->heat_cols = rep->heat_by_rank ? rep->xr.nranks : d->T;
    if (rep->heat_cols > PM_HEAT_COLS)
        rep->heat_cols = PM_HEAT_COLS;
    rep->heat = calloc(R * (rep->heat_cols ? rep->heat_cols : 1), sizeof *rep->heat);
    rep->heat_in = calloc(R * (rep->heat_cols ? rep->heat_cols : 1), 1);
    rep->top = calloc(R * PM_TOP_THREADS, sizeof *rep->top);
    rep->ntop = calloc(R, sizeof *rep->ntop);
    return rep->heat && rep->heat_in && rep->top && rep->ntop ? 0 : -1;
}

/* The pass over the cells (pm_report_build_stream); with `keep`, one
 * process's pass over a file of whole ranks whose thread rows start at
 * t_base in the job (pm_rstate_local): no finish, the state kept there. */
static int pm_build(struct pm_report *rep, const struct pm_file *d, const char *path, int html,
                    struct pm_rstate *keep, size_t t_base, char *err, size_t errlen)
{
    struct pm_engine g;
    struct pm_part all = {0}, part = {0};
    size_t maxslots = 0;
    /* HTML is made by rank 0 alone: its charts follow single threads in
     * row order */
    int shared = d->stream && !html && !keep;
    int rc = -1, np = shared ? pm_report_mpi_size() : 1, me = shared ? pm_report_mpi_rank() : 0;
    int sorted = 1;
    int failed = 0, ready = 0;

    memset(&g, 0, sizeof g);
    if (err && errlen)
        err[0] = '\0';
    if (pm_report_setup(rep, d, path) < 0 || (html && pm_html_alloc(rep) < 0))
        goto agree;
    g.rep = rep;
    g.d = d;
    g.t_base = t_base;
    g.nq = PM_Q_EVENTS + d->E;
    g.B = rep->block_rows = pm_block_rows(d);
    g.nblocks = d->T ? (d->T - 1) / g.B + 1 : 0;
    g.slot_of = malloc((rep->xr.nranks ? rep->xr.nranks : 1) * sizeof *g.slot_of);
    g.last = malloc((rep->xr.nranks ? rep->xr.nranks : 1) * sizeof *g.last);
    g.tm = malloc((d->R ? d->R : 1) * sizeof *g.tm);
    if (!g.slot_of || !g.tm || !g.last)
        goto agree;
    for (size_t t = 0; t < d->T; t++) {
        g.last[rep->xr.thread_rank[t]] = t;
        sorted &= t == 0 || rep->xr.thread_rank[t] >= rep->xr.thread_rank[t - 1];
    }
    for (size_t k = 0; k < rep->xr.nranks; k++)
        g.slot_of[k] = PM_NONE;
    for (size_t b = 0; b < g.nblocks; b++) {
        size_t n = pm_block_slots(&g, b, NULL);

        maxslots = n > maxslots ? n : maxslots;
    }
    if (pm_part_alloc(rep, maxslots, &part) < 0 || pm_cells_alloc(d, g.B, &g.cells) < 0 ||
        (d->has_read_cost && pm_totals_alloc(d, g.B, &g.tot) < 0))
        goto agree;
    /* sorted: the ranks open at once are those of one block, consecutive
     * indices, so k % W never collides */
    g.W = sorted ? (maxslots ? maxslots : 1) : (rep->xr.nranks ? rep->xr.nranks : 1);
    if (me == 0) {
        if (pm_part_alloc(rep, g.W, &all) < 0)
            goto agree;
        all.h->nslots = g.W;
    }
    ready = 1;
agree:
    /* every rank goes on, or none: a rank short of memory must not leave
     * rank 0 waiting for its blocks */
    if (np > 1)
        MPI_Allreduce(MPI_IN_PLACE, &ready, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!ready)
        goto oom;
    for (size_t b = 0; b < g.nblocks; b++) {
        int owner = pm_owner(b, g.nblocks, np);

        if (owner == me) {
            /* after a failure, the rest is only headers: rank 0 must not wait */
            if (failed)
                part.h->status = -1;
            else if (pm_block(&g, b, &part) < 0)
                failed = 1;
            if (me != 0) {
                size_t n = failed ? sizeof *part.h : pm_part_layout(rep, part.h->nslots, &part,
                                                                   part.buf);
                MPI_Send(part.buf, (int)n, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
                continue;
            }
        } else if (me == 0) {
            MPI_Recv(part.buf, (int)part.cap, MPI_BYTE, owner, 0, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
            pm_part_layout(rep, part.h->nslots, &part, part.buf);
        } else {
            continue;
        }
        /* rank 0 (or no MPI): join block b */
        if (part.h->status < 0) {
            if (err && errlen && !err[0])
                snprintf(err, errlen, "%s", part.h->msg[0] ? part.h->msg : "cannot read the cells");
            failed = 1;
            continue;
        }
        if (!failed) {
            pm_part_join(&g, &all, &part);
            pm_ranks_done(&g, &all, (b + 1) * g.B);
        }
    }
    if (me != 0) {
        rc = 1;
        goto done;
    }
    if (failed)
        goto done;
    if (keep) {
        keep->rep = rep;
        keep->g = g;
        keep->all = all;
        all.buf = NULL; /* kept */
        rc = 0;
        goto done;
    }
    if (pm_finish(&g, &all) < 0)
        goto oom;
    rc = 0;
    goto done;
oom:
    if (err && errlen)
        snprintf(err, errlen, "%s: out of memory", path ? path : "");
    rc = -1;
done:
    pm_cells_free(&g.cells);
    pm_totals_free(&g.tot);
    free(part.buf);
    free(all.buf);
    free(g.slot_of);
    free(g.last);
    free(g.tm);
    if (keep) {
        keep->g.slot_of = keep->g.last = NULL;
        keep->g.tm = NULL;
        memset(&keep->g.cells, 0, sizeof keep->g.cells);
        memset(&keep->g.tot, 0, sizeof keep->g.tot);
    }
    return rc;
}

static int pm_build_summary(struct pm_report *rep, const struct pm_file *d, const char *path,
                            char *err, size_t errlen);

int pm_report_build_stream(struct pm_report *rep, const struct pm_file *d, const char *path,
                           int html, char *err, size_t errlen)
{
    if (d->summary)
        return pm_build_summary(rep, d, path, err, errlen);
    return pm_build(rep, d, path, html, NULL, 0, err, errlen);
}

/* ------------------------------------------------------ whole ranks */

#define PM_RSTATE_MAGIC 0x3165746174737270ull /* "prstate1" */

struct pm_rstate_hdr {
    uint64_t magic, R, E, nmpif, nranks, nxq, nxacc, bytes;
};

/* A packed state's sections; returns its bytes, offsets in o[]. */
enum { PS_HDR, PS_PART, PS_REG, PS_EV, PS_XQ, PS_XEXCL, PS_XOMP, PS_XACC, PS_ENTERED,
       PS_SHARE, PS_RANKS, PS_MS, PS_TFLAGS, PS_TD, PS_TDSUM, PS_N };

static size_t pm_rstate_layout(const struct pm_rstate_hdr *h, size_t o[PS_N])
{
    size_t sz[PS_N] = {
        sizeof(struct pm_rstate_hdr), sizeof(struct pm_part_hdr),
        h->R * sizeof(struct pm_regacc), h->R * h->E * sizeof(struct pm_evacc),
        h->nxq * sizeof(struct pm_xstat), h->R * sizeof(struct pm_xstat),
        h->R * sizeof(struct pm_xstat), h->nxacc * sizeof(struct pm_xacc),
        (h->R + h->nmpif) * sizeof(uint64_t), h->nranks * sizeof(struct pm_mpishare),
        h->nranks * sizeof(int32_t), sizeof(struct pm_measure), 2 * sizeof(uint64_t),
        sizeof(struct pm_tdstat), sizeof(struct pm_td_sum)};
    size_t off = 0;

    for (int k = 0; k < PS_N; k++) {
        o[k] = off;
        off += pm_round(sz[k]);
    }
    return off;
}

static void pm_rstate_hdr_of(const struct pm_rstate *s, struct pm_rstate_hdr *h)
{
    const struct pm_file *d = s->g.d;
    const struct pm_xranks *x = &s->rep->xr;

    memset(h, 0, sizeof *h);
    h->magic = PM_RSTATE_MAGIC;
    h->R = d->R;
    h->E = d->E;
    h->nmpif = x->nmpif;
    h->nranks = x->nranks;
    h->nxq = pm_xranks_nxq(x, d);
    h->nxacc = pm_xranks_nxacc(x, d);
}

void pm_rstate_layout_id(char *buf, size_t len)
{
    snprintf(buf, len, "prstate1 %zu %zu %zu %zu %zu %zu %zu", sizeof(struct pm_part_hdr),
             sizeof(struct pm_regacc), sizeof(struct pm_evacc), sizeof(struct pm_xstat),
             sizeof(struct pm_xacc), sizeof(struct pm_measure), sizeof(struct pm_td_sum));
}

struct pm_rstate *pm_rstate_local(struct pm_report *rep, const struct pm_file *d,
                                  const char *path, size_t t_base, char *err, size_t errlen)
{
    struct pm_rstate *s = calloc(1, sizeof *s);

    if (!s) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    if (pm_build(rep, d, path, 0, s, t_base, err, errlen) != 0) {
        free(s->all.buf);
        free(s);
        return NULL;
    }
    return s;
}

int pm_rstate_pack(const struct pm_rstate *s, void **buf, size_t *len)
{
    const struct pm_report *rep = s->rep;
    const struct pm_file *d = s->g.d;
    struct pm_rstate_hdr h;
    size_t o[PS_N], n;
    unsigned char *b;

    pm_rstate_hdr_of(s, &h);
    h.bytes = n = pm_rstate_layout(&h, o);
    if (!(b = calloc(1, n)))
        return -1;
    struct pm_xrun xr;
    pm_xranks_run(&rep->xr, d, (uint64_t *)(b + o[PS_ENTERED]), &xr);
    memcpy(b + o[PS_HDR], &h, sizeof h);
    memcpy(b + o[PS_PART], s->all.h, sizeof *s->all.h);
    ((struct pm_part_hdr *)(b + o[PS_PART]))->nslots = 0;
    memcpy(b + o[PS_REG], s->all.reg, d->R * sizeof *s->all.reg);
    memcpy(b + o[PS_EV], s->all.ev, d->R * d->E * sizeof *s->all.ev);
    memcpy(b + o[PS_XQ], xr.xq, h.nxq * sizeof *xr.xq);
    memcpy(b + o[PS_XEXCL], xr.xexcl, d->R * sizeof *xr.xexcl);
    memcpy(b + o[PS_XOMP], xr.xomp, d->R * sizeof *xr.xomp);
    memcpy(b + o[PS_XACC], xr.xacc, h.nxacc * sizeof *xr.xacc);
    memcpy(b + o[PS_SHARE], xr.share, xr.nranks * sizeof *xr.share);
    memcpy(b + o[PS_RANKS], xr.ranks, xr.nranks * sizeof *xr.ranks);
    memcpy(b + o[PS_MS], &rep->ms, sizeof rep->ms);
    uint64_t tf[2] = {(uint64_t)rep->thread_estimate, (uint64_t)rep->thread_na};
    memcpy(b + o[PS_TFLAGS], tf, sizeof tf);
    memcpy(b + o[PS_TD], &rep->td.run, sizeof rep->td.run);
    memcpy(b + o[PS_TDSUM], &rep->td.run_sum, sizeof rep->td.run_sum);
    *buf = b;
    *len = n;
    return 0;
}

int pm_rstate_join(struct pm_rstate *s, const void *buf, size_t len)
{
    struct pm_report *rep = s->rep;
    const struct pm_file *d = s->g.d;
    const unsigned char *b = buf;
    struct pm_rstate_hdr mine, h;
    size_t o[PS_N];

    if (len < sizeof h)
        return -1;
    memcpy(&h, b, sizeof h);
    pm_rstate_hdr_of(s, &mine);
    if (h.magic != mine.magic || h.R != mine.R || h.E != mine.E || h.nmpif != mine.nmpif ||
        h.nxq != mine.nxq || h.nxacc != mine.nxacc || h.nranks > len ||
        pm_rstate_layout(&h, o) != len || h.bytes != len)
        return -1;
    /* the other ranks' part: no slot open (nslots 0) */
    struct pm_part p = {0};
    p.h = (struct pm_part_hdr *)(b + o[PS_PART]);
    p.reg = (struct pm_regacc *)(b + o[PS_REG]);
    p.ev = (struct pm_evacc *)(b + o[PS_EV]);
    if (p.h->nslots != 0)
        return -1;
    pm_part_join(&s->g, &s->all, &p);
    struct pm_xrun xr = {(const struct pm_xstat *)(b + o[PS_XQ]),
                         (const struct pm_xstat *)(b + o[PS_XEXCL]),
                         (const struct pm_xstat *)(b + o[PS_XOMP]),
                         (const struct pm_xacc *)(b + o[PS_XACC]),
                         (const uint64_t *)(b + o[PS_ENTERED]),
                         (const struct pm_mpishare *)(b + o[PS_SHARE]),
                         (const int32_t *)(b + o[PS_RANKS]), (size_t)h.nranks};
    if (pm_report_ranks_join(&rep->xr, d, &xr) < 0)
        return -1;
    pm_measure_join(&rep->ms, (const struct pm_measure *)(b + o[PS_MS]));
    const uint64_t *tf = (const uint64_t *)(b + o[PS_TFLAGS]);
    rep->thread_estimate |= tf[0] != 0;
    rep->thread_na |= tf[1] != 0;
    const struct pm_tdstat *td = (const struct pm_tdstat *)(b + o[PS_TD]);
    const struct pm_td_sum *ts = (const struct pm_td_sum *)(b + o[PS_TDSUM]);
    rep->td.run.used += td->used;
    for (int k = 0; k < PM_TD_NOUT; k++)
        rep->td.run.left_out[k] += td->left_out[k];
    rep->td.run.estimate |= td->estimate;
    for (size_t k = 0; k < PM_MODEL_MAX_EVENTS; k++) {
        rep->td.run_sum.exact[k] = pm_add_sat(rep->td.run_sum.exact[k], ts->exact[k]);
        rep->td.run_sum.scaled[k] = pm_fix_add(rep->td.run_sum.scaled[k], ts->scaled[k]);
    }
    rep->td.run_sum.enabled = pm_add_sat(rep->td.run_sum.enabled, ts->enabled);
    rep->td.run_sum.running = pm_add_sat(rep->td.run_sum.running, ts->running);
    return 0;
}

int pm_rstate_finish(struct pm_rstate *s)
{
    struct pm_report *rep = s->rep;

    pm_measure_run_done(&rep->ms);
    if (rep->td.on && rep->td.reg)
        pm_td_finish_stat(&rep->td, &rep->td.run_sum, &rep->td.run);
    rep->xr.multi_rank = rep->xr.nranks > 1 || s->g.d->ranks > 1;
    return pm_finish(&s->g, &s->all);
}

void pm_rstate_free(struct pm_rstate *s)
{
    if (!s)
        return;
    free(s->all.buf);
    free(s);
}

static int pm_cmp_rank(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;

    return (x > y) - (x < y);
}

/* A summary file: its state over every rank, finished as the job's report
 * would be. The setup's pass over the /thread totals summed the kept ranks'
 * threads only: those sums are dropped, the state has every rank's. */
static int pm_build_summary(struct pm_report *rep, const struct pm_file *d, const char *path,
                            char *err, size_t errlen)
{
    struct pm_rstate s;
    char want[96];

    memset(&s, 0, sizeof s);
    memset(rep, 0, sizeof *rep);
    /* small: rank 0 makes all of it under mpirun, the others have nothing to do */
    if (d->stream && pm_report_mpi_rank() != 0)
        return 1;
    pm_rstate_layout_id(want, sizeof want);
    if (strcmp(d->summary_layout ? d->summary_layout : "", want) != 0) {
        snprintf(err, errlen, "%s: a summary file whose statistics another build of perfmark "
                 "wrote (state layout \"%.40s\", this perfmark reads \"%.40s\"): report it with "
                 "the perfmark that wrote it", path, d->summary_layout, want);
        return -1;
    }
    if (pm_report_setup(rep, d, path) < 0 || pm_part_alloc(rep, 0, &s.all) < 0) {
        snprintf(err, errlen, "%s: out of memory", path);
        return -1;
    }
    s.rep = rep;
    s.g.rep = rep;
    s.g.d = d;
    s.g.nq = PM_Q_EVENTS + d->E;
    s.g.W = 1;
    rep->ms.run_reads = rep->ms.run_thread_ns = 0;
    rep->ms.run_reads_sum = 0;
    rep->ms.has_read_cost = 0;
    rep->ms.cost_min = rep->ms.cost_max = 0;
    rep->thread_estimate = rep->thread_na = 0;
    memset(&rep->td.run, 0, sizeof rep->td.run);
    memset(&rep->td.run_sum, 0, sizeof rep->td.run_sum);
    rep->xr.nranks = 0;
    int rc = pm_rstate_join(&s, d->summary_state, d->summary_state_len);
    if (rc == 0) {
        /* the kept threads among every rank (each is one of them) */
        for (size_t t = 0; t < d->T; t++) {
            const int32_t *k = bsearch(&d->tids[t].rank, rep->xr.ranks, rep->xr.nranks,
                                       sizeof *k, pm_cmp_rank);
            rep->xr.thread_rank[t] = k ? (uint32_t)(k - rep->xr.ranks) : 0;
        }
        rc = pm_rstate_finish(&s);
    } else {
        snprintf(err, errlen, "%s: the summary's statistics (/summary/state) are damaged", path);
    }
    free(s.all.buf);
    return rc;
}
