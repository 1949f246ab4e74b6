/* The job's file as models (pm_job_model.c), for pm_job_write.c: each
 * rank's rows, packed to travel, and rank 0's whole file. No MPI and no
 * HDF5 here. */
#ifndef PM_JOB_MODEL_H
#define PM_JOB_MODEL_H

#include "pm_comm.h"
#include "pm_h5out.h"
#include "pm_job_tables.h"
#include "pm_writer.h"

#include <stddef.h>
#include <stdint.h>

/* 2. This rank's rows, numbered as in the job's file (`job`: where its
 * rows go among all ranks'), packed (pm_h5model_pack) to go to rank 0. */
int pm_rows_packed(const struct pm_output *o, int32_t *const *map, const struct pm_slab *job,
                   void **buf, size_t *len, char *err, size_t errlen);

/* 3a. Rank 0: the job's file from the tables and every rank's packed rows
 * (packs[r], lens[r]), as a model in *job (pm_h5model_free it). */
int pm_job_model(const struct pm_output *o, struct pm_tables *t, void **packs,
                 const size_t *lens, int nranks, struct pm_h5model *job, char *err,
                 size_t errlen);

/* 3b. This rank's rows of the parallel file (`job`: its slab), and rank
 * 0's string tables and attributes, as models (pm_h5model_free them). */
int pm_rows_model(const struct pm_output *o, int32_t *const *map, const struct pm_slab *job,
                  struct pm_h5model *rows);
int pm_tables_model(const struct pm_output *o, struct pm_tables *t, struct pm_h5model *tables);

/* A rank's numbers of rows of each kind (threads, its /rank row, its sparse
 * rows: pm_slab_counts), and its slab from the sums over the ranks before
 * it and over all of them (the same kinds). */
enum { PM_K_THREADS, PM_K_TOTALS, PM_K_SPARSE, PM_K_N = PM_K_SPARSE + PM_SPARSE_N };
void pm_slab_counts(const struct pm_output *o, const struct pm_sample_rows *samples,
                    uint64_t counts[PM_K_N]);
void pm_slab_place(struct pm_slab *slab, const uint64_t *before, const uint64_t *total,
                   uint64_t regions, const struct pm_sample_rows *samples);

/* pm_job_write.c. Every rank's packed rows to rank 0 (sizes, then bytes):
 * on rank 0, images[r] and lens[r] are set (images[0] is rank 0's own and
 * holds the block all are in). Then rank 0's file in memory from the
 * tables and the packs: perfmark's encoder, or the HDF5 writer for
 * datasets too large for it. */
int pm_gather_images(const struct pm_comm *c, void *mine, size_t mylen, void **images,
                     size_t *lens);
int pm_job_file(const struct pm_output *o, struct pm_tables *t, void **packs,
                const size_t *lens, int nranks, void **image, size_t *len, char *err,
                size_t errlen);

/* 3c. A summary file (pm_job_summary_write.c, PERFMARK_DETAIL): the
 * report's statistics over every rank made in the job, and the rows of the
 * ranks it keeps (`beside`: the path of a summary written beside the full
 * file, PERFMARK_SUMMARY_OUTPUT; NULL otherwise). Returns pm_job_write's verdict, or PM_JOB_FULL on every
 * rank when no summary could be made (said once): write the full file. */
#define PM_JOB_FULL 100
int pm_job_write_summary(const struct pm_comm *comm, const struct pm_output *o,
                         int32_t *const *map, struct pm_tables *tables,
                         const struct pm_slab *job, const uint64_t *counts, uint64_t rows_bytes,
                         uint64_t all_bytes, const char *beside, pm_writer_publish_fn publish,
                         void *ctx, char *err, size_t errlen);

#endif
