/*
 * node_text.c — node mode as text (the model's pm_node_view): per node and
 * watched CPU, the share of the time in the job's processes, in others and
 * idle; the node's sums; the other processes that took most time there.
 */
#include "render/text/node_text.h"
#include "render/common/render_common.h"

#include <inttypes.h>
#include <stdio.h>

#define PM_NT_PROCS 5

static void pm_nt_row(FILE *out, const char *host, const char *cpu,
                      const struct pm_node_share *s, const struct pm_file_node_proc *top)
{
    char span[32];
    pm_unit_time(span, sizeof span, (double)s->span_ns);
    pm_text_cell(out, host, 20, PM_LEFT);
    fprintf(out, " %5s %9s %7.1f%% %7.1f%% %7.1f%%", cpu, span, 100 * s->own, 100 * s->foreign,
            100 * s->idle);
    if (top) {
        char t[32];
        pm_unit_time(t, sizeof t, (double)top->ns);
        fputs("  ", out);
        pm_text_name(out, top->comm, 24);
        fprintf(out, " (pid %" PRId64 ") %s", top->pid, t);
    }
    if (s->lost)
        fprintf(out, "  %" PRIu64 " switches lost", s->lost);
    putc('\n', out);
}

/* With --interval: when the others took most of the node (JSON: every
 * interval). */
static void pm_nt_over_time(FILE *out, const struct pm_node_one *n)
{
    if (!n->npoints)
        return;
    double peak = -1, sum = 0, all = 0;
    size_t at = 0;
    for (size_t i = 0; i < n->npoints; i++) {
        const struct pm_node_point *p = &n->point[i];
        double span = (double)p->own_ns + (double)p->foreign_ns + (double)p->idle_ns;
        double share = span > 0 ? (double)p->foreign_ns / span : 0;
        sum += (double)p->foreign_ns, all += span;
        if (share > peak)
            peak = share, at = i;
    }
    fputs("others over time on ", out);
    pm_text_name(out, n->host, 40);
    fprintf(out, " (%zu readings", n->npoints);
    if (n->group > 1)
        fprintf(out, " of %zu intervals each", n->group);
    fprintf(out, "): at most %.1f%% of its CPUs' time, in the reading %.3f s after the first; "
            "%.1f%% over all\n", 100 * peak,
            (double)(n->point[at].time_ns - n->point[0].time_ns) / 1e9,
            all > 0 ? 100 * sum / all : 0.0);
}

void pm_render_text_node(FILE *out, const struct pm_report *rep)
{
    const struct pm_node_view *v = rep->node;
    if (!v)
        return;
    fputs("\nNode mode (--node): each watched CPU's time in the job's processes, in other "
          "processes (OS noise,\ndaemons, other jobs) and idle\n", out);
    pm_text_cell(out, "host", 20, PM_LEFT);
    fprintf(out, " %5s %9s %8s %8s %8s  %s\n", "cpu", "watched", "job", "others", "idle",
            "top other process");
    for (size_t k = 0; k < v->n; k++) {
        const struct pm_node_one *n = &v->node[k];
        for (size_t i = 0; i < n->ncpus; i++) {
            char cpu[16];
            snprintf(cpu, sizeof cpu, "%d", (int)n->cpu[i]->cpu);
            pm_nt_row(out, n->host, cpu, &n->share[i],
                      n->ncpu_procs[i] ? n->cpu_proc[i][0] : NULL);
        }
        pm_nt_row(out, n->host, "all", &n->all, NULL);
    }
    for (size_t k = 0; k < v->n; k++) {
        const struct pm_node_one *n = &v->node[k];
        const struct pm_node_share *m = &n->mpi_all;
        if (!m->span_ns)
            continue;
        char span[32];
        pm_unit_time(span, sizeof span, (double)m->span_ns / (double)n->ncpus);
        fputs("MPI_Init to MPI_Finalize on ", out);
        pm_text_name(out, n->host, 40);
        fprintf(out, " (%s): job %.1f%%, others %.1f%%, idle %.1f%% of its %zu CPUs\n", span,
                100 * m->own, 100 * m->foreign, 100 * m->idle, n->ncpus);
    }
    for (size_t k = 0; k < v->n; k++)
        pm_nt_over_time(out, &v->node[k]);
    for (size_t k = 0; k < v->n; k++) {
        const struct pm_node_one *n = &v->node[k];
        if (!n->nprocs)
            continue;
        fputs("other processes on ", out);
        pm_text_name(out, n->host, 40);
        fputs(":", out);
        for (size_t i = 0; i < n->nprocs && i < PM_NT_PROCS; i++) {
            char t[32];
            pm_unit_time(t, sizeof t, (double)n->proc[i].ns);
            fputs(i ? ", " : " ", out);
            pm_text_name(out, n->proc[i].comm, 32);
            fprintf(out, " (pid %" PRId64 ") %s", n->proc[i].pid, t);
        }
        putc('\n', out);
    }
}
