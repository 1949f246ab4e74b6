/* pm_h5lib — a model (pm_h5model.h) written by the HDF5 library: the files
 * perfmark's own encoder leaves to it (datasets large enough to be chunked
 * and compressed), and the MPI job's parallel file. Only in the writer
 * library (pm_writer.h), which the runtime loads when such a file is due. */
#ifndef PM_H5LIB_H
#define PM_H5LIB_H

#include "pm_h5model.h"

#include <hdf5.h>
#include <stddef.h>

/* Datasets with more elements than this are chunked (last dimensions
 * first), shuffled and deflated; perfmark's encoder writes none of them. */
#define PM_CHUNK_THRESHOLD 65536

/* The model into `file`: its groups (opened where they exist), datasets
 * (each process's rows of them, collectively when dxpl says so) and
 * attributes. 0 or -1. */
int pm_h5lib_write(hid_t file, const struct pm_h5model *m, hid_t dxpl);

/* The whole model as a file in memory (pm_h5out_large_fn). */
int pm_h5lib_image(const struct pm_h5model *m, void **image, size_t *len, char *err,
                   size_t errlen);

/* The MPI job's parallel file (job/pm_job_write.c, 3b): every rank's rows
 * collectively into `tmp` (comm points at an MPI_Comm; all ranks agree on
 * the outcome), then rank 0 adds the tables serially. */
int pm_h5lib_rows_parallel(const void *comm, const char *tmp, const struct pm_h5model *rows);
int pm_h5lib_add_tables(const char *tmp, const struct pm_h5model *tables);

#endif
