/*
 * node_svg.c — node mode on the HTML page: per node, a bar per watched CPU
 * split into the time in the job's processes, in others, and idle, with the
 * CPU's top other process beside it, and the node's other processes.
 */
#include "render/html/node_svg.h"
#include "render/common/render_common.h"

#include <inttypes.h>
#include <stdio.h>

#define PM_NS_LABEL 90
#define PM_NS_BAR 600
#define PM_NS_ROW 18
#define PM_NS_TOP 240 /* the CPU's top other process, right of its bar */

static void pm_ns_part(FILE *out, double *x, int y, double share, const char *color,
                       const char *what)
{
    double w = share * PM_NS_BAR;
    char pct[32];
    pm_html_pct(pct, sizeof pct, share);
    fprintf(out, "<rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"13\" fill=\"%s\"><title>%s: "
            "%s</title></rect>\n", *x, y, w, color, what, pct);
    *x += w;
}

/* With --interval: the others' share of the node's CPU time per reading. */
static void pm_ns_over_time(FILE *out, const struct pm_node_one *n)
{
    const int w = PM_NS_LABEL + PM_NS_BAR, h = 80;
    fprintf(out, "<svg class=\"chart\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
            "role=\"img\" aria-label=\"Other processes over time\">\n<title>Other processes "
            "over time</title>\n<text class=\"ttl\" x=\"8\" y=\"14\">others' share of the "
            "node's CPU time, per reading (0–100%%)</text>\n<polyline fill=\"none\" "
            "stroke=\"#e53935\" stroke-width=\"1.5\" points=\"", w, h + 24, w, h + 24);
    for (size_t i = 0; i < n->npoints; i++) {
        const struct pm_node_point *p = &n->point[i];
        double span = (double)p->own_ns + (double)p->foreign_ns + (double)p->idle_ns;
        double share = span > 0 ? (double)p->foreign_ns / span : 0;
        fprintf(out, "%.1f,%.1f ", PM_NS_LABEL + (double)i / (double)(n->npoints - 1) * PM_NS_BAR,
                20 + (1 - share) * h);
    }
    fputs("\"/>\n</svg>\n", out);
}

void pm_svg_node(FILE *out, const struct pm_report *rep)
{
    const struct pm_node_view *v = rep->node;
    if (!v)
        return;
    fputs("<section id=\"node\">\n<h2>Node CPUs</h2>\n<p class=\"note\">Each CPU of the job's "
          "cpuset, watched whoever ran there (perfmark run --node): <span style=\"color:#1e88e5"
          "\">■</span> the job's processes, <span style=\"color:#e53935\">■</span> other "
          "processes (OS noise, daemons, other jobs), <span style=\"color:#cfd8dc\">■</span> "
          "idle.</p>\n", out);
    for (size_t k = 0; k < v->n; k++) {
        const struct pm_node_one *n = &v->node[k];
        int h = 30 + (int)n->ncpus * PM_NS_ROW;
        fprintf(out, "<svg class=\"chart\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
                "role=\"img\" aria-label=\"CPU time by whom\">\n<title>CPU time by whom</title>\n"
                "<text class=\"ttl\" x=\"8\" y=\"16\">", PM_NS_LABEL + PM_NS_BAR + PM_NS_TOP, h,
                PM_NS_LABEL + PM_NS_BAR + PM_NS_TOP, h);
        pm_html_esc(out, n->host, 100, 1);
        fprintf(out, " (rank %d watched)</text>\n", (int)n->rank);
        for (size_t i = 0; i < n->ncpus; i++) {
            int y = 24 + (int)i * PM_NS_ROW;
            double x = PM_NS_LABEL;
            fprintf(out, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">cpu %d</text>\n",
                    PM_NS_LABEL - 6, y + 11, (int)n->cpu[i]->cpu);
            pm_ns_part(out, &x, y, n->share[i].own, "#1e88e5", "the job");
            pm_ns_part(out, &x, y, n->share[i].foreign, "#e53935", "others");
            pm_ns_part(out, &x, y, n->share[i].idle, "#cfd8dc", "idle");
            if (n->ncpu_procs[i]) {
                const struct pm_file_node_proc *top = n->cpu_proc[i][0];
                char t[32];
                pm_html_time(t, sizeof t, (double)top->ns);
                fprintf(out, "<text x=\"%d\" y=\"%d\">", PM_NS_LABEL + PM_NS_BAR + 8, y + 11);
                pm_html_esc(out, top->comm, 24, 1);
                fprintf(out, " %s</text>\n", t);
            }
        }
        fputs("</svg>\n", out);
        if (n->npoints > 1)
            pm_ns_over_time(out, n);
        if (n->mpi_all.span_ns) {
            char a[32], b[32], c[32];
            pm_html_pct(a, sizeof a, n->mpi_all.own);
            pm_html_pct(b, sizeof b, n->mpi_all.foreign);
            pm_html_pct(c, sizeof c, n->mpi_all.idle);
            fprintf(out, "<p class=\"note\">From MPI_Init to MPI_Finalize: the job %s, others %s, "
                    "idle %s.</p>\n", a, b, c);
        }
        if (n->nprocs) {
            fputs("<p class=\"note\">Other processes there: ", out);
            for (size_t i = 0; i < n->nprocs; i++) {
                char t[32];
                pm_html_time(t, sizeof t, (double)n->proc[i].ns);
                fputs(i ? ", " : "", out);
                pm_html_esc(out, n->proc[i].comm, 64, 1);
                fprintf(out, " (pid %" PRId64 ") %s", n->proc[i].pid, t);
            }
            fputs("</p>\n", out);
        }
    }
    fputs("</section>\n", out);
}
