/* pm_h5out_samples — the sampling part of the file (docs/hdf5-schema.md,
 * "/samples"): per thread and region the samples and losses (dense [T,R,S]
 * cells beside the counts), and the sparse rows that say where: one hit per
 * (thread, region, event, instruction), as (object, offset) so that the
 * report can name functions and lines offline, and the call chains.
 *
 * Sparse rows refer to thread rows, objects, chains and frames by row
 * number. Under MPI each rank's rows are placed after the previous ranks'
 * (pm_slab's bases), and objects are the job's union (the job writer remaps
 * them), so the rows of every rank can simply be concatenated. */
#ifndef PM_H5OUT_SAMPLES_H
#define PM_H5OUT_SAMPLES_H

#include "pm_h5out.h"

#include <stddef.h>
#include <stdint.h>

struct pm_h5_hit {
    int32_t thread, region, event, module;
    uint64_t offset, count;
    int64_t chain;
};

struct pm_h5_chain {
    uint64_t first;
    int32_t length;
};

struct pm_h5_frame {
    int32_t module;
    uint64_t offset;
};

/* This process's sparse rows, with local row numbers (thread: this
 * process's thread index; module: index into `modules`; chain, first: rows of
 * this process's chains and frames). */
struct pm_sample_rows {
    size_t nhits, nchains, nframes;
    struct pm_h5_hit *hits;
    struct pm_h5_chain *chains;
    struct pm_h5_frame *frames;
    int32_t nmodules;
    struct pm_module_desc *modules;  /* the objects used, in first-use order */
};

int pm_sample_rows_build(const struct pm_output *o, int32_t *const *map,
                         struct pm_sample_rows *r);
/* Object numbers → the job's: module k becomes to[k]. */
void pm_sample_rows_remap(struct pm_sample_rows *r, const int32_t *to);
void pm_sample_rows_free(struct pm_sample_rows *r);

/* Rows phase: the [T,R,S] and [T,S] cells and this process's sparse rows
 * at the slab's places. */
int pm_h5out_sample_rows(struct pm_h5model *m, const struct pm_output *o, int32_t *const *map,
                         const struct pm_slab *slab);
/* Tables phase: /samples@requested, /samples/events, /samples/modules. */
int pm_h5out_sample_tables(struct pm_h5model *m, const struct pm_output *o,
                           const struct pm_module_desc *modules, int32_t nmodules);

#endif
