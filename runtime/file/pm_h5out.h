/* pm_h5out — the measurement as the file's content (docs/hdf5-schema.md),
 * built as a model (pm_h5model.h) that an encoder turns into HDF5 bytes.
 *
 * Two phases, so that the same code builds one process's file and, under
 * MPI, one file per job:
 *   rows   — /threads, /region/..., /thread/..., /rank/...: numeric and fixed-size
 *            data laid out by thread row. Each process gives its own slab
 *            (rows [offset, offset + its threads)) of the job's datasets.
 *   tables — root attributes, /events, /regions, /messages: variable-length
 *            strings, built once (parallel HDF5 1.10 cannot write them).
 * Regions of a process's threads are merged by path (pm_merge); under MPI
 * the merged tables of all ranks are unioned and the map rewritten. */
#ifndef PM_H5OUT_H
#define PM_H5OUT_H

#include "pm_h5model.h"
#include "pm_output.h"
#include "pm_thread.h"

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

/* One loaded object samples fell in, as /samples/modules lists it. */
struct pm_module_desc {
    const char *build_id, *path;
};

/* Sparse row datasets: sample hits, chains, frames (pm_h5out_samples.h);
 * interval rows of threads and of processes (pm_h5out_series.h); watched
 * CPUs, other processes and CPU interval rows (pm_h5out_node.h). */
enum { PM_SPARSE_HITS, PM_SPARSE_CHAINS, PM_SPARSE_FRAMES, PM_SPARSE_SERIES,
       PM_SPARSE_PSERIES, PM_SPARSE_NODE_CPUS, PM_SPARSE_NODE_PROCS, PM_SPARSE_NODE_ROWS,
       PM_SPARSE_N };

struct pm_sample_rows;

/* Where this process's rows go. Placement (offset, total) says where rows
 * are written in the file at hand; the bases say what row numbers they have
 * in the job's file (the same, except in a rank's own rows file that the
 * job's file is assembled from). */
struct pm_slab {
    uint64_t thread_offset, thread_total; /* our threads are rows [offset, offset + nthreads) */
    uint64_t rank_offset, rank_total;     /* our /rank row (if we have totals) */
    uint64_t regions;                     /* columns: regions in the file */
    uint64_t thread_base;                 /* job row of our first thread */
    const struct pm_sample_rows *samples; /* our sparse rows (NULL: none) */
    uint64_t sparse_offset[PM_SPARSE_N], sparse_total[PM_SPARSE_N], sparse_base[PM_SPARSE_N];
};

/* A slab whose sparse rows are all this process's, numbered from 0 (one
 * process's file, or a rank's own rows file). */
void pm_slab_local_sparse(struct pm_slab *slab, const struct pm_output *o,
                          const struct pm_sample_rows *r);

int pm_h5out_rows(struct pm_h5model *m, const struct pm_output *o, int32_t *const *map,
                  const struct pm_slab *slab);
int pm_h5out_tables(struct pm_h5model *m, const struct pm_output *o,
                    const struct pm_region_desc *regions, int32_t nregions,
                    const char *const *messages, size_t nmessages,
                    const struct pm_module_desc *modules, int32_t nmodules);

/* Where a model too large for perfmark's own encoder goes (pm_h5enc_fits):
 * the HDF5 library's image of it, as pm_h5out_image returns one. */
typedef int (*pm_h5out_large_fn)(const struct pm_h5model *m, void **image, size_t *len,
                                 char *err, size_t errlen);

/* The whole file for one process, built in memory: *image (malloc'ed,
 * the caller frees it) of *len bytes. 0, or -1 with a reason in err.
 * perfmark's own encoder writes it (pm_h5enc.h) when it fits, and always
 * for an emergency dump (o->partial: loading a library then could
 * deadlock); else `large` does (NULL, or when it fails: the encoder writes
 * it all the same).
 *
 * Why in memory: HDF5 that meets a full disk half way through a file keeps
 * it open in a broken state and crashes in its own atexit handler (seen:
 * SIGSEGV in H5F__close_cb, the program's exit status and buffered output
 * lost). In memory, no library sees the disk; perfmark writes the bytes
 * with write(2), where a failure is one errno and the bytes can go to the
 * next place (pm_session.c). The file is at most the size of the data the
 * runtime already holds. */
int pm_h5out_image(const struct pm_output *o, pm_h5out_large_fn large, void **image, size_t *len,
                   char *err, size_t errlen);
/* A model's file: perfmark's encoder when it fits (or `force_own`), else
 * `large`; where `large` fails, perfmark's encoder all the same (one
 * message: the file is uncompressed), so that no data is lost for want of
 * the HDF5 library. On a big-endian host, `large` only. */
int pm_h5out_encode(const struct pm_h5model *m, int force_own, pm_h5out_large_fn large,
                    void **image, size_t *len, char *err, size_t errlen);

#endif
