/* The job's file as models (pm_job_model.c), for pm_job_write.c: each
 * rank's rows, packed to travel, and rank 0's whole file. No MPI and no
 * HDF5 here. */
#ifndef PM_JOB_MODEL_H
#define PM_JOB_MODEL_H

#include "pm_h5out.h"
#include "pm_job_tables.h"

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

#endif
