#include "pm_h5out_series.h"
#include "pm_h5out_internal.h"

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

int pm_h5out_series_rows(hid_t file, const struct pm_output *o, int32_t *const *map,
                         const struct pm_slab *slab)
{
    const struct pm_series *s = o->series;
    size_t n = 0, np = 0, E = (size_t)o->set->n, G = (size_t)o->set->ngroups;
    pm_series_counts(o, &n, &np);
    hid_t grp = pm_group_open(file, PM_S_SERIES);
    if (grp < 0)
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
        const hsize_t I = slab->sparse_total[PM_SPARSE_SERIES], J = slab->sparse_total[PM_SPARSE_PSERIES];
        const hsize_t i0 = slab->sparse_offset[PM_SPARSE_SERIES], j0 = slab->sparse_offset[PM_SPARSE_PSERIES];
        const hsize_t dT[1] = {slab->thread_total}, dI[1] = {I}, dIE[2] = {I, E}, dIG[2] = {I, G},
                      dJ[1] = {J}, dJE[2] = {J, E}, dJG[2] = {J, G};
        rc |= pm_slab_write(grp, PM_S_SERIES_THREAD_INTERVAL_NS, dT, slab->thread_offset,
                            (hsize_t)o->nthreads, interval, slab->dxpl);
        rc |= pm_slab_write(grp, PM_S_SERIES_TIME_NS, dI, i0, at, time, slab->dxpl);
        rc |= pm_slab_write(grp, PM_S_SERIES_THREAD, dI, i0, at, thread, slab->dxpl);
        rc |= pm_slab_write(grp, PM_S_SERIES_REGION, dI, i0, at, region, slab->dxpl);
        rc |= pm_slab_write(grp, PM_S_SERIES_FLAGS, dI, i0, at, flags, slab->dxpl);
        rc |= pm_slab_write(grp, PM_S_SERIES_COUNTS, dIE, i0, at, counts, slab->dxpl);
        rc |= pm_slab_write(grp, PM_S_SERIES_ENABLED_NS, dIG, i0, at, ena, slab->dxpl);
        rc |= pm_slab_write(grp, PM_S_SERIES_RUNNING_NS, dIG, i0, at, run, slab->dxpl);
        rc |= pm_slab_write(grp, PM_S_SERIES_PROCESS_TIME_NS, dJ, j0, np, ptime, slab->dxpl);
        rc |= pm_slab_write(grp, PM_S_SERIES_PROCESS_RANK, dJ, j0, np, prank, slab->dxpl);
        rc |= pm_slab_write(grp, PM_S_SERIES_PROCESS_COUNTS, dJE, j0, np, pcounts, slab->dxpl);
        rc |= pm_slab_write(grp, PM_S_SERIES_PROCESS_ENABLED_NS, dJG, j0, np, pena, slab->dxpl);
        rc |= pm_slab_write(grp, PM_S_SERIES_PROCESS_RUNNING_NS, dJG, j0, np, prun, slab->dxpl);
    }
    free(interval), free(time), free(ptime), free(thread), free(region), free(prank);
    free(flags), free(counts), free(ena), free(run), free(pcounts), free(pena), free(prun);
    H5Gclose(grp);
    return rc ? -1 : 0;
}

int pm_h5out_series_tables(hid_t file, const struct pm_output *o)
{
    uint64_t asked = o->series ? o->series->asked_ns : 0;
    hid_t grp = pm_group_open(file, PM_S_SERIES);
    if (grp < 0)
        return -1;
    hid_t type = pm_schema_native(pm_schema[PM_S_SERIES_ASKED_NS].type);
    hid_t space = H5Screate(H5S_SCALAR);
    hid_t attr = H5Acreate2(grp, pm_schema_name(PM_S_SERIES_ASKED_NS), type, space, H5P_DEFAULT,
                            H5P_DEFAULT);
    int rc = attr < 0 || H5Awrite(attr, type, &asked) < 0 ? -1 : 0;
    if (attr >= 0)
        H5Aclose(attr);
    H5Sclose(space);
    H5Gclose(grp);
    return rc;
}
