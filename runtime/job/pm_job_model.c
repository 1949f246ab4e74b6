/* The job's file as models (pm_job_model.h): pm_job_write.c decides
 * which way and when. */
#define _GNU_SOURCE
#include "pm_job_model.h"
#include "pm_h5out_node.h"
#include "pm_h5out_samples.h"
#include "pm_h5out_series.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The string tables and attributes of the job's file: regions, objects,
 * messages. */
int pm_tables_model(const struct pm_output *o, struct pm_tables *t, struct pm_h5model *tables)
{
    struct pm_union *u = &t->regions;
    struct pm_region_desc *desc = calloc((size_t)u->n + 1, sizeof *desc);
    char *strs = NULL;
    struct pm_module_desc *mods = pm_module_descs(&t->modules, &strs);
    size_t nlines = 0;
    char **lines = pm_joblog_lines(&t->log, o->ranks, &nlines);
    int rc = -1;
    if (desc && mods && lines) {
        for (int32_t i = 0; i < u->n; i++)
            desc[i] = (struct pm_region_desc){u->name[i], u->parent[i], u->depth[i],
                                              u->kind[i]};
        struct pm_output job = *o;
        job.rank = -1;  /* the file holds every rank */
        rc = pm_h5out_tables(tables, &job, desc, u->n, (const char *const *)lines, nlines, mods,
                             t->modules.n);
    }
    for (size_t i = 0; lines && i < nlines; i++)
        free(lines[i]);
    free(lines), free(desc), free(mods), free(strs);
    return rc;
}

int pm_rows_model(const struct pm_output *o, int32_t *const *map, const struct pm_slab *job,
                  struct pm_h5model *rows)
{
    pm_h5model_init(rows);
    return pm_h5out_rows(rows, o, map, job);
}

int pm_rows_packed(const struct pm_output *o, int32_t *const *map, const struct pm_slab *job,
                   void **buf, size_t *len, char *err, size_t errlen)
{
    /* Placed from row 0 here, numbered as in the job's file. */
    struct pm_slab slab = *job;
    pm_slab_local_sparse(&slab, o, job->samples);
    slab.thread_offset = 0;
    slab.thread_total = (uint64_t)o->nthreads;
    slab.rank_offset = 0;
    slab.rank_total = o->totals ? 1 : 0;
    slab.thread_base = job->thread_base;
    memcpy(slab.sparse_base, job->sparse_base, sizeof slab.sparse_base);
    struct pm_h5model rows;
    int rc = pm_rows_model(o, map, &slab, &rows) == 0 && pm_h5model_pack(&rows, buf, len) == 0
                 ? 0
                 : -1;
    pm_h5model_free(&rows);
    if (rc != 0)
        snprintf(err, errlen, "out of memory building this rank's rows");
    return rc;
}

int pm_job_model(const struct pm_output *o, struct pm_tables *t, void **packs,
                 const size_t *lens, int nranks, struct pm_h5model *job, char *err,
                 size_t errlen)
{
    struct pm_h5model *parts = calloc((size_t)nranks, sizeof *parts);
    int rc = parts ? 0 : -1, unpacked = 0;
    for (int r = 0; r < nranks && rc == 0; r++, unpacked++)
        rc = pm_h5model_unpack(&parts[r], packs[r], lens[r]);
    pm_h5model_init(job);
    int disagree = 0;
    if (rc == 0 && (rc = pm_h5model_join(job, parts, (size_t)nranks)) != 0)
        disagree = errno == EINVAL;
    if (rc == 0)
        rc = pm_tables_model(o, t, job);
    for (int r = 0; r < unpacked; r++)
        pm_h5model_free(&parts[r]);
    free(parts);
    if (rc != 0)
        snprintf(err, errlen, "cannot join the ranks' rows into the job's file (%s)",
                 disagree ? "the ranks' rows disagree" : "out of memory");
    return rc;
}

void pm_slab_counts(const struct pm_output *o, const struct pm_sample_rows *samples,
                    uint64_t counts[PM_K_N])
{
    size_t series_rows = 0, process_rows = 0, node_cpus = 0, node_procs = 0, node_rows = 0;
    pm_series_counts(o, &series_rows, &process_rows);
    pm_node_counts(o, &node_cpus, &node_procs, &node_rows);
    const uint64_t n[PM_K_N] = {(uint64_t)o->nthreads, o->totals ? 1 : 0, samples->nhits,
                                samples->nchains, samples->nframes, series_rows, process_rows,
                                node_cpus, node_procs, node_rows};
    memcpy(counts, n, sizeof n);
}

void pm_slab_place(struct pm_slab *slab, const uint64_t *before, const uint64_t *total,
                   uint64_t regions, const struct pm_sample_rows *samples)
{
    *slab = (struct pm_slab){.thread_offset = before[PM_K_THREADS],
                             .thread_total = total[PM_K_THREADS],
                             .rank_offset = before[PM_K_TOTALS],
                             .rank_total = total[PM_K_TOTALS],
                             .regions = regions,
                             .thread_base = before[PM_K_THREADS],
                             .samples = samples};
    for (int k = 0; k < PM_SPARSE_N; k++) {
        slab->sparse_offset[k] = slab->sparse_base[k] = before[PM_K_SPARSE + k];
        slab->sparse_total[k] = total[PM_K_SPARSE + k];
    }
}
