/* The job's file on the HDF5 side (pm_job_h5.c), for mpi_job_writer.c. */
#ifndef PM_JOB_H5_H
#define PM_JOB_H5_H

#include "pm_h5out.h"
#include "pm_job_tables.h"

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

/* 2. This rank's rows as a small HDF5 file in memory, numbered as in the
 * job's file (`job`: where its rows go among all ranks'). */
int pm_rows_image(const struct pm_output *o, int32_t *const *map, const struct pm_slab *job,
                  void **image, size_t *len, char *err, size_t errlen);

/* 3a. Rank 0: the job's file in memory from the tables and every rank's
 * rows file (images[r], lens[r]). */
int pm_job_image(const struct pm_output *o, struct pm_tables *t, void **images,
                 const size_t *lens, int nranks, void **image, size_t *len, char *err,
                 size_t errlen);

/* 3b. Every rank its rows into one parallel file `tmp` (collective), then
 * rank 0 alone its string tables and attributes. */
int pm_write_rows(MPI_Comm comm, const char *tmp, const struct pm_output *o,
                  int32_t *const *map, const struct pm_slab *base);
int pm_write_tables(const char *tmp, const struct pm_output *o, struct pm_tables *t);

#endif
