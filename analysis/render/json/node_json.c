/*
 * node_json.c — node mode in the JSON report: per node its watched CPUs'
 * times and shares, the node's sums and its other processes
 * (tests/report/README.md, "node").
 */
#include "render/json/node_json.h"
#include "render/common/render_common.h"

#include <inttypes.h>
#include <stdio.h>

static void pm_nj_share(FILE *out, const struct pm_node_share *s)
{
    fprintf(out, "\"watched_ns\":%" PRIu64 ",\"own_ns\":%" PRIu64 ",\"others_ns\":%" PRIu64
                 ",\"idle_ns\":%" PRIu64 ",\"lost\":%" PRIu64
                 ",\"own_share\":%.17g,\"others_share\":%.17g,\"idle_share\":%.17g",
            s->span_ns, s->own_ns, s->foreign_ns, s->idle_ns, s->lost, s->own, s->foreign,
            s->idle);
}

/* The MPI phase's part: null without MPI. */
static void pm_nj_mpi(FILE *out, const struct pm_node_share *s)
{
    if (!s->span_ns) {
        fputs(",\"mpi\":null", out);
        return;
    }
    fputs(",\"mpi\":{", out);
    pm_nj_share(out, s);
    putc('}', out);
}

/* The node's CPUs together per interval (--interval), null without. */
static void pm_nj_series(FILE *out, const struct pm_node_one *n)
{
    if (!n->npoints) {
        fputs("null", out);
        return;
    }
    fprintf(out, "{\"intervals_per_point\":%zu", n->group);
    static const char *const key[4] = {"end_ns", "own_ns", "others_ns", "idle_ns"};
    for (int k = 0; k < 4; k++) {
        fprintf(out, ",\"%s\":[", key[k]);
        for (size_t i = 0; i < n->npoints; i++) {
            const struct pm_node_point *p = &n->point[i];
            uint64_t x = k == 0 ? p->time_ns : k == 1 ? p->own_ns : k == 2 ? p->foreign_ns
                                                                          : p->idle_ns;
            fprintf(out, "%s%" PRIu64, i ? "," : "", x);
        }
        putc(']', out);
    }
    putc('}', out);
}

static void pm_nj_proc(FILE *out, size_t i, int64_t pid, const char *comm, uint64_t ns)
{
    fprintf(out, "%s{\"pid\":%" PRId64 ",\"comm\":", i ? "," : "", pid);
    pm_json_str(out, comm);
    fprintf(out, ",\"ns\":%" PRIu64 "}", ns);
}

void pm_render_json_node(FILE *out, const struct pm_report *rep)
{
    const struct pm_node_view *v = rep->node;
    if (!v)
        return;
    fputs(",\n  \"node\":{\"nodes\":[", out);
    for (size_t k = 0; k < v->n; k++) {
        const struct pm_node_one *n = &v->node[k];
        fprintf(out, "%s\n    {\"rank\":%d,\"host\":", k ? "," : "", (int)n->rank);
        pm_json_str(out, n->host);
        putc(',', out);
        pm_nj_share(out, &n->all);
        pm_nj_mpi(out, &n->mpi_all);
        fputs(",\"cpus\":[", out);
        for (size_t i = 0; i < n->ncpus; i++) {
            fprintf(out, "%s{\"cpu\":%d,", i ? "," : "", (int)n->cpu[i]->cpu);
            pm_nj_share(out, &n->share[i]);
            pm_nj_mpi(out, &n->mpi[i]);
            fputs(",\"others\":[", out);
            for (size_t q = 0; q < n->ncpu_procs[i]; q++)
                pm_nj_proc(out, q, n->cpu_proc[i][q]->pid, n->cpu_proc[i][q]->comm,
                           n->cpu_proc[i][q]->ns);
            fputs("]}", out);
        }
        fputs("],\"others\":[", out);
        for (size_t i = 0; i < n->nprocs; i++)
            pm_nj_proc(out, i, n->proc[i].pid, n->proc[i].comm, n->proc[i].ns);
        fputs("],\"series\":", out);
        pm_nj_series(out, n);
        putc('}', out);
    }
    fputs("]}", out);
}
