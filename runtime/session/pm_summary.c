#define _GNU_SOURCE
#include "pm_summary.h"
#include "pm_names.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define PM_SUMMARY_EVENTS 4

struct pm_sum_row {
    char *path;
    uint64_t visits, ticks;
    uint64_t counts[PM_SUMMARY_EVENTS];
};

/* "a/b/c" for node n of thread t (cut at a bounded length). */
static char *pm_node_path(const struct pm_thread *t, int32_t n)
{
    char buf[512] = "";
    for (int32_t at = n; at >= 0; at = t->nodes[at].parent) {
        char tmp[sizeof buf];
        snprintf(tmp, sizeof tmp, "%s%s%s", t->nodes[at].str, buf[0] ? "/" : "", buf);
        snprintf(buf, sizeof buf, "%s", tmp);
    }
    for (char *c = buf; *c; c++)  /* names are the program's bytes: no escapes to a terminal */
        if ((unsigned char)*c < 0x20 || *c == 0x7f)
            *c = '?';
    return strdup(buf);
}

static int pm_by_time(const void *a, const void *b)
{
    const struct pm_sum_row *x = a, *y = b;
    return x->ticks < y->ticks ? 1 : x->ticks > y->ticks ? -1 : 0;
}

void pm_summary_print(const struct pm_output *o, FILE *out)
{
    size_t cap = 0, n = 0;
    struct pm_sum_row *rows = NULL;
    int nev = o->set->n < PM_SUMMARY_EVENTS ? o->set->n : PM_SUMMARY_EVENTS;
    unsigned stride = pm_stride(o->set);
    for (int32_t ti = 0; ti < o->nthreads; ti++) {
        const struct pm_thread *t = o->threads[ti];
        for (int32_t nd = 0; nd < t->nnodes; nd++) {
            char *path = pm_node_path(t, nd);
            if (!path)
                continue;
            size_t i = 0;
            while (i < n && strcmp(rows[i].path, path) != 0)
                i++;
            if (i == n) {
                if (n == cap) {
                    size_t grown_cap = cap ? 2 * cap : 64;
                    struct pm_sum_row *grown = realloc(rows, grown_cap * sizeof *grown);
                    if (!grown) {
                        free(path);
                        continue;
                    }
                    rows = grown;
                    cap = grown_cap;
                }
                rows[n++] = (struct pm_sum_row){.path = path};
            } else {
                free(path);
            }
            rows[i].visits += t->nodes[nd].visits;
            rows[i].ticks += t->nodes[nd].ticks;
            for (int e = 0; e < nev; e++)
                rows[i].counts[e] += t->acc[(size_t)nd * stride + (size_t)e];
        }
    }
    if (n)
        qsort(rows, n, sizeof *rows, pm_by_time);
    fprintf(out, "perfmark: summary of rank %d (%d thread(s)); counts are raw, not scaled:\n",
            o->rank, (int)o->nthreads);
    for (size_t i = 0; i < n && i < PM_SUMMARY_REGIONS; i++) {
        fprintf(out, "perfmark:   %-40.200s visits %llu  time %.3f ms", rows[i].path,
                (unsigned long long)rows[i].visits,
                (double)rows[i].ticks * o->ns_per_tick / 1e6);
        for (int e = 0; e < nev; e++)
            fprintf(out, "  %s %llu", o->set->ev[e].name, (unsigned long long)rows[i].counts[e]);
        fputc('\n', out);
    }
    if (n > PM_SUMMARY_REGIONS)
        fprintf(out, "perfmark:   (%zu more regions)\n", n - PM_SUMMARY_REGIONS);
    for (size_t i = 0; i < n; i++)
        free(rows[i].path);
    free(rows);
    fflush(out);
}
