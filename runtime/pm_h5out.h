/* pm_h5out — write the measurement as HDF5 (docs/hdf5-schema.md).
 *
 * Two phases, so that the same code writes one process's file and, under
 * MPI, one file per job:
 *   rows   — /threads, /region/..., /thread/..., /rank/...: numeric and fixed-size
 *            data laid out by thread row. Each process writes its own slab
 *            (rows [offset, offset + its threads)), possibly collectively
 *            into a parallel file.
 *   tables — root attributes, /events, /regions, /messages: variable-length
 *            strings, written once (parallel HDF5 1.10 cannot write them).
 * Regions of a process's threads are merged by path (pm_merge); under MPI
 * the merged tables of all ranks are unioned and the map rewritten. */
#ifndef PM_H5OUT_H
#define PM_H5OUT_H

#include "pm_output.h"
#include "pm_thread.h"

#include <hdf5.h>
#include <stddef.h>
#include <stdint.h>

/* This process's regions, merged over its threads by (parent, name id). */
struct pm_merged {
    int32_t n, cap;
    int32_t *parent, *name, *depth;  /* name: pm_names id (carries the kind) */
    int32_t *hash;                   /* region + 1, 0 empty */
    uint32_t mask;
    int32_t **map;                   /* per thread: node → region column */
};

int pm_merge(struct pm_merged *m, const struct pm_output *o);
void pm_merge_free(struct pm_merged *m, int32_t nthreads);

/* One row of /regions, as the tables phase needs it. */
struct pm_region_desc {
    const char *name;
    int32_t parent, depth;
    int kind;   /* enum pm_kind */
};

/* Where this process's rows go. */
struct pm_slab {
    hsize_t thread_offset, thread_total;  /* our threads are rows [offset, offset + nthreads) */
    hsize_t rank_offset, rank_total;      /* our /rank row (if we have totals) */
    hsize_t regions;                      /* columns: regions in the file */
    hid_t dxpl;                           /* H5P_DEFAULT, or collective MPI-IO */
};

int pm_h5out_rows(hid_t file, const struct pm_output *o, int32_t *const *map,
                  const struct pm_slab *slab);
int pm_h5out_tables(hid_t file, const struct pm_output *o, const struct pm_region_desc *regions,
                    int32_t nregions, const char *const *messages, size_t nmessages);

/* The whole file for one process: create `path` (which must not exist).
 * 0, or -1 with a reason in err (the partly written file is removed). */
int pm_h5out_write(const char *path, const struct pm_output *o, char *err, size_t errlen);

#endif
