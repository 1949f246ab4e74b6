#include "pm_h5out_series.h"

#include <stdlib.h>
#include <string.h>

void pm_series_counts(const struct pm_output *o, size_t *rows, size_t *process_rows)
{
    const struct pm_series *s = o->series;
    *rows = *process_rows = 0;
    if (!s)
        return;
    for (int32_t i = 0; i < s->ntracks; i++)
        *rows += s->track[i]->nrows;
    *process_rows = s->process.nrows;
}

/* One row's header and counts. */
static const struct pm_series_row *pm_srow(const struct pm_series *s,
                                           const struct pm_series_track *k, size_t i)
{
    return (const struct pm_series_row *)(k->rows + i * (PM_SERIES_HEADER_WORDS + s->stride));
}

/* The readings' words split as the file lays them out: counts [n,E],
 * enabled [n,G], running [n,G]. */
static void pm_split(const struct pm_output *o, const uint64_t *w, size_t row, uint64_t *counts,
                     uint64_t *ena, uint64_t *run)
{
    size_t E = (size_t)o->set->n, G = (size_t)o->set->ngroups;
    memcpy(counts + row * E, w, E * 8);
    memcpy(ena + row * G, w + E, G * 8);
    memcpy(run + row * G, w + E + G, G * 8);
}

int pm_h5out_series_rows(struct pm_h5model *m, const struct pm_output *o, int32_t *const *map,
                         const struct pm_slab *slab)
{
    const struct pm_series *s = o->series;
    size_t n = 0, np = 0, E = (size_t)o->set->n, G = (size_t)o->set->ngroups;
    pm_series_counts(o, &n, &np);
    if (pm_h5model_group(m, PM_S_SERIES) != 0)
        return -1;
    uint64_t *interval = calloc((size_t)o->nthreads + 1, 8);
    uint64_t *time = calloc(n + 1, 8), *ptime = calloc(np + 1, 8);
    int32_t *thread = calloc(n + 1, 4), *region = calloc(n + 1, 4), *prank = calloc(np + 1, 4);
    uint32_t *flags = calloc(n + 1, 4);
    uint64_t *counts = calloc(n * E + 1, 8), *ena = calloc(n * G + 1, 8), *run = calloc(n * G + 1, 8);
    uint64_t *pcounts = calloc(np * E + 1, 8), *pena = calloc(np * G + 1, 8),
             *prun = calloc(np * G + 1, 8);
    int rc = interval && time && ptime && thread && region && prank && flags && counts && ena &&
                     run && pcounts && pena && prun
                 ? 0
                 : -1;
    size_t at = 0;
    for (int32_t i = 0; rc == 0 && s && i < s->ntracks; i++) {
        const struct pm_series_track *k = s->track[i];
        int32_t t = k->thread->index;
        if (t < 0 || t >= o->nthreads || o->threads[t] != k->thread)
            continue;
        for (size_t r = 0; r < k->nrows; r++, at++) {
            const struct pm_series_row *row = pm_srow(s, k, r);
            time[at] = row->time_ns;
            thread[at] = (int32_t)slab->thread_base + t;
            region[at] = row->node >= 0 && row->node < k->thread->nnodes ? map[t][row->node] : -1;
            flags[at] = row->flags;
            pm_split(o, (const uint64_t *)(row + 1), at, counts, ena, run);
        }
    }
    for (int32_t t = 0; s && t < o->nthreads; t++)
        interval[t] = s->interval_ns;
    for (size_t r = 0; rc == 0 && s && r < np; r++) {
        const struct pm_series_row *row = pm_srow(s, &s->process, r);
        ptime[r] = row->time_ns;
        prank[r] = o->rank;
        pm_split(o, (const uint64_t *)(row + 1), r, pcounts, pena, prun);
    }
    if (rc == 0) {
        const uint64_t I = slab->sparse_total[PM_SPARSE_SERIES], J = slab->sparse_total[PM_SPARSE_PSERIES];
        const uint64_t i0 = slab->sparse_offset[PM_SPARSE_SERIES], j0 = slab->sparse_offset[PM_SPARSE_PSERIES];
        const uint64_t dT[1] = {slab->thread_total}, dI[1] = {I}, dIE[2] = {I, E}, dIG[2] = {I, G},
                      dJ[1] = {J}, dJE[2] = {J, E}, dJG[2] = {J, G};
        rc |= pm_h5model_rows(m, PM_S_SERIES_THREAD_INTERVAL_NS, NULL, 0, 0, dT,
                              slab->thread_offset, (uint64_t)o->nthreads, interval);
        rc |= pm_h5model_rows(m, PM_S_SERIES_TIME_NS, NULL, 0, 0, dI, i0, at, time);
        rc |= pm_h5model_rows(m, PM_S_SERIES_THREAD, NULL, 0, 0, dI, i0, at, thread);
        rc |= pm_h5model_rows(m, PM_S_SERIES_REGION, NULL, 0, 0, dI, i0, at, region);
        rc |= pm_h5model_rows(m, PM_S_SERIES_FLAGS, NULL, 0, 0, dI, i0, at, flags);
        rc |= pm_h5model_rows(m, PM_S_SERIES_COUNTS, NULL, 0, 0, dIE, i0, at, counts);
        rc |= pm_h5model_rows(m, PM_S_SERIES_ENABLED_NS, NULL, 0, 0, dIG, i0, at, ena);
        rc |= pm_h5model_rows(m, PM_S_SERIES_RUNNING_NS, NULL, 0, 0, dIG, i0, at, run);
        rc |= pm_h5model_rows(m, PM_S_SERIES_PROCESS_TIME_NS, NULL, 0, 0, dJ, j0, np, ptime);
        rc |= pm_h5model_rows(m, PM_S_SERIES_PROCESS_RANK, NULL, 0, 0, dJ, j0, np, prank);
        rc |= pm_h5model_rows(m, PM_S_SERIES_PROCESS_COUNTS, NULL, 0, 0, dJE, j0, np, pcounts);
        rc |= pm_h5model_rows(m, PM_S_SERIES_PROCESS_ENABLED_NS, NULL, 0, 0, dJG, j0, np, pena);
        rc |= pm_h5model_rows(m, PM_S_SERIES_PROCESS_RUNNING_NS, NULL, 0, 0, dJG, j0, np, prun);
    }
    free(interval), free(time), free(ptime), free(thread), free(region), free(prank);
    free(flags), free(counts), free(ena), free(run), free(pcounts), free(pena), free(prun);
    return rc ? -1 : 0;
}

int pm_h5out_series_tables(struct pm_h5model *m, const struct pm_output *o)
{
    uint64_t asked = o->series ? o->series->asked_ns : 0;
    if (pm_h5model_group(m, PM_S_SERIES) != 0)
        return -1;
    return pm_h5model_attr_num(m, PM_S_SERIES, PM_S_SERIES_ASKED_NS, NULL, &asked);
}
