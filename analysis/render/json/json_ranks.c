/*
 * json_ranks.c — the report's JSON keys across ranks, only for files of
 * several ranks (json_ranks.h).
 */
#include "render/json/json_ranks.h"
#include "render/json/json_fmt.h"
#include "render/common/render_common.h"

#include <inttypes.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* "min":..,"mean":..,"max":.. over the ranks (null without any). */
static void pm_json_spread(FILE *out, const struct pm_xstat *x)
{
    fputs("\"min\":", out);
    pm_json_num(out, x->nspread > 0, x->min);
    fputs(",\"mean\":", out);
    pm_json_num(out, x->nspread > 0, x->mean);
    fputs(",\"max\":", out);
    pm_json_num(out, x->nspread > 0, x->max);
}

/* One quantity across ranks; `events` adds the counter markers. */
static void pm_json_xstat(FILE *out, const struct pm_xstat *x, int events)
{
    fputs("{\"total\":", out);
    pm_json_num(out, x->has_total, x->total);
    putc(',', out);
    pm_json_spread(out, x);
    fputs(",\"imbalance\":", out);
    pm_json_num(out, x->has_imbalance, x->imbalance);
    if (x->nspread > 0)
        fprintf(out, ",\"max_rank\":%d,\"min_rank\":%d", (int)x->max_rank, (int)x->min_rank);
    else
        fputs(",\"max_rank\":null,\"min_rank\":null", out);
    /* the ranks by octave of their value: [from, below, ranks] per bin used */
    fputs(",\"histogram\":[", out);
    for (size_t k = 0, first = 1; k < PM_XHIST; k++) {
        if (!x->hist[k])
            continue;
        fprintf(out, "%s[%.17g,%.17g,%u]", first ? "" : ",", k ? ldexp(1.0, (int)k - 1) : 0.0,
                ldexp(1.0, (int)k), (unsigned)x->hist[k]);
        first = 0;
    }
    putc(']', out);
    if (events)
        fprintf(out, ",\"estimate\":%s,\"untrusted\":%s,\"ranks_na\":%zu",
                x->estimate ? "true" : "false", x->untrusted ? "true" : "false", x->n_na);
    fputs(",\"sd\":", out);
    pm_json_num(out, x->nspread > 0, x->sd);
    putc('}', out);
}

/* visits, wall_ns, bytes, bytes_unknown under the given keys. */
static void pm_json_xfixed(FILE *out, const struct pm_xregion *x, const char *visits_key)
{
    static const char *const key[PM_Q_EVENTS] = {NULL, "wall_ns", "bytes", "bytes_unknown"};

    for (size_t q = 0; q < PM_Q_EVENTS; q++) {
        fputs(",", out);
        pm_json_key(out, q == PM_Q_VISITS ? visits_key : key[q]);
        pm_json_xstat(out, &x->q[q], 0);
    }
}

static void pm_json_xregion(FILE *out, const struct pm_report *rep, size_t i)
{
    const struct pm_file *d = rep->d;
    size_t r = rep->order[i];
    const struct pm_xregion *x = &rep->xr.xreg[r];

    fprintf(out, "    {\"index\":%zu,\"row\":%zu,\"path\":", i, r);
    pm_json_str(out, d->regions[r].path);
    fputs(",\"kind\":", out);
    pm_json_str(out, d->regions[r].kind);
    fprintf(out, ",\"ranks_entered\":%zu", x->entered);
    pm_json_xfixed(out, x, "visits");
    fputs(",\"events\":{", out);
    for (size_t e = 0; e < d->E; e++) {
        if (e)
            putc(',', out);
        pm_json_key(out, rep->evkey[e]);
        pm_json_xstat(out, &x->q[PM_Q_EVENTS + e], 1);
    }
    fputs("},\"exclusive_ns\":", out);
    pm_json_xstat(out, &rep->xr.xexcl[r], 0);
    fputs(",\"omp_wait_share\":", out);
    if (rep->xr.has_omp_wait) {
        const struct pm_xstat *o = &rep->xr.xomp[r];

        putc('{', out);
        pm_json_spread(out, o);
        fputs(",\"sd\":", out);
        pm_json_num(out, o->nspread > 0, o->sd);
        fputs(",\"max_rank\":", out);
        if (o->nspread > 0)
            fprintf(out, "%d}", (int)o->max_rank);
        else
            fputs("null}", out);
    } else {
        fputs("null", out);
    }
    if (rep->ms.measuring)
        fprintf(out, ",\"time_estimate\":%s", x->q[PM_Q_WALL].estimate ? "true" : "false");
    putc('}', out);
}

static void pm_json_mpif(FILE *out, const struct pm_report *rep, size_t f)
{
    const struct pm_file *d = rep->d;
    const struct pm_xregion *x = &rep->xr.mpif[f];
    int first = 1;

    fputs("    {\"name\":", out);
    pm_json_str(out, x->name);
    fprintf(out, ",\"ranks_entered\":%zu,\"regions\":[", x->entered);
    for (size_t i = 0; i < d->R; i++) {
        const struct pm_file_region *g = &d->regions[rep->order[i]];

        if (strcmp(g->kind, "mpi") != 0 || strcmp(g->name, x->name) != 0)
            continue;
        fprintf(out, "%s%zu", first ? "" : ",", i);
        first = 0;
    }
    putc(']', out);
    pm_json_xfixed(out, x, "calls");
    if (rep->ms.measuring)
        fprintf(out, ",\"time_estimate\":%s", x->q[PM_Q_WALL].estimate ? "true" : "false");
    putc('}', out);
}

static void pm_json_share(FILE *out, const struct pm_report *rep)
{
    const struct pm_xstat *x = &rep->xr.share_stat;

    fputs("{\"ranks\":[", out);
    for (size_t k = 0; k < rep->xr.nranks; k++) {
        const struct pm_mpishare *s = &rep->xr.share[k];

        fprintf(out, "%s\n    {\"rank\":%d,\"mpi_ns\":%" PRIu64 ",\"total_ns\":%" PRIu64
                     ",\"share\":",
                k ? "," : "", (int)s->rank, s->mpi_ns, s->total_ns);
        pm_json_num(out, s->has_share, s->share);
        if (rep->ms.measuring)
            fprintf(out, ",\"estimate\":%s", s->estimate ? "true" : "false");
        putc('}', out);
    }
    fputs("],\n    ", out);
    pm_json_spread(out, x);
    if (x->nspread > 0)
        fprintf(out, ",\"min_rank\":%d,\"max_rank\":%d}", (int)x->min_rank, (int)x->max_rank);
    else
        fputs(",\"min_rank\":null,\"max_rank\":null}", out);
}

/* Appended keys, only for files of several ranks: single-rank output keeps
 * its exact layout. */
void pm_json_ranks(FILE *out, const struct pm_report *rep)
{
    const struct pm_file *d = rep->d;

    if (!rep->xr.multi_rank)
        return;
    fprintf(out, ",\n  \"ranks\":%zu,\n  \"job_ranks\":", rep->xr.nranks);
    if (d->ranks > 0)
        fprintf(out, "%d", (int)d->ranks);
    else
        fputs("null", out);
    fputs(",\n", out);
    pm_json_list(out, "regions_by_rank", rep, d->R, pm_json_xregion);
    fputs(",\n", out);
    pm_json_list(out, "mpi_functions", rep, rep->xr.nmpif, pm_json_mpif);
    fputs(",\n  \"mpi_share\":", out);
    pm_json_share(out, rep);
}
