/*
 * node.c — the node view (node.h): the file's watched CPUs grouped by the
 * rank that watched them (one per node), shares of the time watched, the
 * node's sums, its other processes most time first; each node's host from
 * the watching rank's first /threads row. The file keeps the top other
 * processes per CPU; the node's list sums a process over its CPUs.
 */
#include "model/node.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void pm_share(struct pm_node_share *s)
{
    double span = (double)s->span_ns;
    s->own = span > 0 ? (double)s->own_ns / span : 0;
    s->foreign = span > 0 ? (double)s->foreign_ns / span : 0;
    s->idle = span > 0 ? (double)s->idle_ns / span : 0;
}

static void pm_add_share(struct pm_node_share *sum, const struct pm_node_share *x)
{
    sum->span_ns += x->span_ns, sum->own_ns += x->own_ns, sum->foreign_ns += x->foreign_ns;
    sum->idle_ns += x->idle_ns, sum->lost += x->lost;
}

static int pm_cpu_cmp(const void *a, const void *b)
{
    const struct pm_file_node_cpu *x = *(const struct pm_file_node_cpu *const *)a,
                                  *y = *(const struct pm_file_node_cpu *const *)b;
    if (x->rank != y->rank)
        return (x->rank > y->rank) - (x->rank < y->rank);
    return (x->cpu > y->cpu) - (x->cpu < y->cpu);
}

/* (rank, cpu, most time first, pid) */
static int pm_row_cmp(const void *a, const void *b)
{
    const struct pm_file_node_proc *x = *(const struct pm_file_node_proc *const *)a,
                                   *y = *(const struct pm_file_node_proc *const *)b;
    if (x->rank != y->rank)
        return (x->rank > y->rank) - (x->rank < y->rank);
    if (x->cpu != y->cpu)
        return (x->cpu > y->cpu) - (x->cpu < y->cpu);
    return x->ns < y->ns ? 1 : x->ns > y->ns ? -1 : (x->pid > y->pid) - (x->pid < y->pid);
}

static int pm_pid_cmp(const void *a, const void *b)
{
    const struct pm_node_proc *x = a, *y = b;
    return (x->pid > y->pid) - (x->pid < y->pid);
}

static int pm_proc_cmp(const void *a, const void *b)
{
    const struct pm_node_proc *x = a, *y = b;
    return x->ns < y->ns ? 1 : x->ns > y->ns ? -1 : (x->pid > y->pid) - (x->pid < y->pid);
}

/* The node's other processes (its run rows[0..n) of the sorted procs):
 * each pid summed over the CPUs it ran on, most time first. */
static void pm_sum_procs(struct pm_node_one *n, const struct pm_file_node_proc *const *rows,
                         size_t nrows)
{
    for (size_t i = 0; i < nrows; i++)
        n->proc[i] = (struct pm_node_proc){rows[i]->pid, rows[i]->comm, rows[i]->ns};
    qsort(n->proc, nrows, sizeof *n->proc, pm_pid_cmp);
    for (size_t i = 0; i < nrows; i++) {
        if (n->nprocs && n->proc[n->nprocs - 1].pid == n->proc[i].pid)
            n->proc[n->nprocs - 1].ns += n->proc[i].ns;
        else
            n->proc[n->nprocs++] = n->proc[i];
    }
    qsort(n->proc, n->nprocs, sizeof *n->proc, pm_proc_cmp);
}

/* Each CPU's run of the node's process rows (rows[0..nrows), by CPU). */
static void pm_cpu_procs(struct pm_node_one *n, const struct pm_file_node_proc **rows,
                         size_t nrows)
{
    size_t q = 0;
    for (size_t i = 0; i < n->ncpus; i++) {
        while (q < nrows && rows[q]->cpu < n->cpu[i]->cpu)  /* a CPU not watched */
            q++;
        n->cpu_proc[i] = &rows[q];
        while (q < nrows && rows[q]->cpu == n->cpu[i]->cpu)
            q++, n->ncpu_procs[i]++;
    }
}

/* The host of the rank's first thread row ("?" when the rank has none). */
static char *pm_host_of(const struct pm_file *d, int32_t rank)
{
    size_t t = 0;
    while (t < d->T && d->tids[t].rank != rank)
        t++;
    if (t == d->T)
        return strdup("?");
    if (d->threads)
        return strdup(d->threads[t].host);
    struct pm_thread_rows b = {0};
    char err[256];
    char *host = NULL;
    if (pm_thread_rows_alloc(d, 1, &b) == 0 && pm_file_thread_rows(d, t, 1, &b, err, sizeof err) == 0)
        host = strdup(b.rows[0].host);
    pm_thread_rows_free(&b);
    return host ? host : strdup("?");
}

/* One interval row into its node's points (a node's rows come in time
 * order, its CPUs' rows of one reading together). */
static int pm_add_row(struct pm_node_one *n, const struct pm_file_node_row *r)
{
    if (!n->point && !(n->point = calloc(PM_NODE_POINTS, sizeof *n->point)))
        return -1;
    if (!n->npoints || r->time_ns != n->last_time) {  /* the next reading */
        n->last_time = r->time_ns;
        if (!n->npoints || n->in_group == n->group) {
            if (n->npoints == PM_NODE_POINTS) {  /* every two points into one */
                for (size_t i = 0; i < PM_NODE_POINTS / 2; i++) {
                    struct pm_node_point a = n->point[2 * i], b = n->point[2 * i + 1];
                    n->point[i] = (struct pm_node_point){b.time_ns, a.own_ns + b.own_ns,
                                                         a.foreign_ns + b.foreign_ns,
                                                         a.idle_ns + b.idle_ns};
                }
                n->npoints = PM_NODE_POINTS / 2;
                n->group *= 2;
            }
            n->point[n->npoints++] = (struct pm_node_point){0, 0, 0, 0};
            n->in_group = 0;
        }
        n->in_group++;
    }
    struct pm_node_point *p = &n->point[n->npoints - 1];
    p->time_ns = r->time_ns;
    p->own_ns += r->own_ns, p->foreign_ns += r->foreign_ns, p->idle_ns += r->idle_ns;
    return 0;
}

/* The node a rank watched (nodes are in rank order), v->n if none. */
static size_t pm_node_of(const struct pm_node_view *v, int32_t rank)
{
    size_t lo = 0, hi = v->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (v->node[mid].rank < rank)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < v->n && v->node[lo].rank == rank ? lo : v->n;
}

/* The interval rows, a block at a time. */
static int pm_node_points(const struct pm_file *d, struct pm_node_view *v, char *err,
                          size_t errlen)
{
    enum { BLOCK = 65536 };
    struct pm_file_node_row *rows = calloc(BLOCK, sizeof *rows);
    if (!rows) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (size_t k = 0; k < v->n; k++)
        v->node[k].group = 1;
    size_t k = 0;
    for (size_t v0 = 0; v0 < d->NV; v0 += BLOCK) {
        size_t nv = d->NV - v0 < BLOCK ? d->NV - v0 : BLOCK;
        if (pm_file_node_rows(d, v0, nv, rows, err, errlen) < 0) {
            free(rows);
            return -1;
        }
        for (size_t i = 0; i < nv; i++) {
            if (v->node[k].rank != rows[i].rank)
                k = pm_node_of(v, rows[i].rank);
            if (k == v->n) {  /* a rank that watched no CPU: left out */
                k = 0;
                continue;
            }
            if (pm_add_row(&v->node[k], &rows[i]) < 0) {
                free(rows);
                snprintf(err, errlen, "out of memory");
                return -1;
            }
        }
    }
    free(rows);
    return 0;
}

struct pm_node_view *pm_node_build(const struct pm_file *d, char *err, size_t errlen)
{
    err[0] = '\0';
    if (!d->NP)
        return NULL;
    struct pm_node_view *v = calloc(1, sizeof *v);
    if (!v || !(v->node = calloc(d->NP, sizeof *v->node)) ||
        !(v->cpus = calloc(d->NP, sizeof *v->cpus)) ||
        !(v->procs = calloc(d->NQ + 1, sizeof *v->procs))) {
        pm_node_free(v);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    for (size_t i = 0; i < d->NP; i++)
        v->cpus[i] = &d->node_cpus[i];
    qsort(v->cpus, d->NP, sizeof *v->cpus, pm_cpu_cmp);
    for (size_t i = 0; i < d->NQ; i++)
        v->procs[i] = &d->node_procs[i];
    qsort(v->procs, d->NQ, sizeof *v->procs, pm_row_cmp);
    for (size_t i = 0; i < d->NP; i++) {  /* the nodes: runs of one watching rank */
        if (!v->n || v->node[v->n - 1].rank != v->cpus[i]->rank)
            v->node[v->n++] = (struct pm_node_one){.rank = v->cpus[i]->rank, .cpu = &v->cpus[i]};
        v->node[v->n - 1].ncpus++;
    }
    size_t q = 0;
    for (size_t k = 0; k < v->n; k++) {
        struct pm_node_one *n = &v->node[k];
        while (q < d->NQ && v->procs[q]->rank < n->rank)  /* a rank that watched no CPU */
            q++;
        size_t q0 = q;
        while (q < d->NQ && v->procs[q]->rank == n->rank)
            q++;
        n->host = pm_host_of(d, n->rank);
        n->share = calloc(n->ncpus, sizeof *n->share);
        n->mpi = calloc(n->ncpus, sizeof *n->mpi);
        n->proc = calloc(q - q0 + 1, sizeof *n->proc);
        n->cpu_proc = calloc(n->ncpus, sizeof *n->cpu_proc);
        n->ncpu_procs = calloc(n->ncpus, sizeof *n->ncpu_procs);
        if (!n->host || !n->share || !n->mpi || !n->proc || !n->cpu_proc || !n->ncpu_procs) {
            pm_node_free(v);
            snprintf(err, errlen, "out of memory");
            return NULL;
        }
        for (size_t i = 0; i < n->ncpus; i++) {
            const struct pm_file_node_cpu *x = n->cpu[i];
            n->share[i] = (struct pm_node_share){x->span_ns, x->own_ns, x->foreign_ns,
                                                 x->idle_ns, x->lost, 0, 0, 0};
            n->mpi[i] = (struct pm_node_share){x->mpi_span_ns, x->mpi_own_ns, x->mpi_foreign_ns,
                                               x->mpi_idle_ns, 0, 0, 0, 0};
            pm_share(&n->share[i]);
            pm_share(&n->mpi[i]);
            pm_add_share(&n->all, &n->share[i]);
            pm_add_share(&n->mpi_all, &n->mpi[i]);
        }
        pm_share(&n->all);
        pm_share(&n->mpi_all);
        pm_cpu_procs(n, &v->procs[q0], q - q0);
        pm_sum_procs(n, &v->procs[q0], q - q0);
    }
    if (d->NV && d->stream && pm_node_points(d, v, err, errlen) < 0) {
        pm_node_free(v);
        return NULL;
    }
    return v;
}

void pm_node_free(struct pm_node_view *v)
{
    if (!v)
        return;
    for (size_t k = 0; v->node && k < v->n; k++) {
        struct pm_node_one *n = &v->node[k];
        free(n->host), free(n->share), free(n->mpi), free(n->proc), free(n->cpu_proc);
        free(n->ncpu_procs), free(n->point);
    }
    free(v->node), free(v->cpus), free(v->procs), free(v);
}
