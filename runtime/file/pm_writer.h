/* pm_writer — writing the file: the job writer's contract, and the HDF5
 * library's writer (libperfmark_writer.so), loaded only when a file needs it.
 *
 * Nearly every file is encoded by perfmark itself (pm_h5enc.h): no library
 * to load, nothing to initialise. The HDF5 library writes only what that
 * encoder leaves to it: files with datasets large enough to be chunked and
 * compressed (pm_h5enc_fits), and the parallel file of an MPI job too large
 * to gather on rank 0. Debian's parallel HDF5 pulls about 40 libraries into
 * a process (curl, gnutls, Kerberos, LDAP, ...): 15-30 ms of mapping and
 * relocation on a 2-vCPU VM, and a dlopen holds the dynamic loader's lock
 * throughout, so that loaded at start it held up every other dlopen of the
 * process (MPI_Init's own, a constructor's dlsym) until it ended
 * (bench/README.md). So it is loaded when the file is written, and only if
 * the file needs it. It gets the model and nothing else (pm_h5lib.h) and
 * exports one symbol, pm_writer_attach. */
#ifndef PM_WRITER_H
#define PM_WRITER_H

#include "pm_job_summary.h"
#include "pm_h5out.h"

#include <stddef.h>
#include <stdint.h>

struct pm_comm;  /* the job's ranks (job/pm_comm.h) */

/* Where a finished file's bytes go (the runtime's pm_store): 0 when some
 * place took them. */
typedef int (*pm_writer_publish_fn)(const void *image, size_t len, void *ctx);

/* The job writer (job/pm_job_write.c), called by every rank in
 * MPI_Finalize with the job's comm, builds the job's one file. A job file up to
 * pm_output.job_gather_max bytes (PERFMARK_JOB_GATHER_MAX, default
 * PM_JOB_GATHER_MAX) is built in memory on rank 0 from every rank's
 * rows and handed to `publish` there: only rank 0 touches the disk, and a
 * failure there is one errno, not a collective that half the ranks left.
 * A larger one is written collectively (parallel HDF5, where the writer
 * library was built for the job's MPI) at `tmp`, chosen from `want`, after
 * rank 0 checked the free space. Every rank returns the
 * same verdict, so none waits for ever:
 *   1  rank 0: published through `publish`       0  other ranks: done
 *   2  rank 0: complete at `tmp`, publish it under `want`
 *  -1  no job file: each rank writes its own
 *  -2  built, but no place took it: each rank prints its summary */
typedef int (*pm_writer_job_fn)(struct pm_comm *comm, const struct pm_output *o,
                                const char *want, char *tmp, size_t tmplen,
                                pm_writer_publish_fn publish, void *ctx, char *err,
                                size_t errlen);
int pm_job_write(struct pm_comm *comm, const struct pm_output *o, const char *want, char *tmp,
                 size_t tmplen, pm_writer_publish_fn publish, void *ctx, char *err, size_t errlen);
#define PM_JOB_GATHER_MAX ((size_t)512 << 20)

/* What the HDF5 writer library gives. */
struct pm_writer_entry {
    pm_h5out_large_fn image;  /* a model as a file in memory (pm_h5lib_image) */
    /* The parallel job file (pm_h5lib.h); comm points at an MPI_Comm of
     * the MPI this library was built with (PM_WRITER_MPI_ABI). */
    int (*rows_parallel)(const void *comm, const char *tmp, const struct pm_h5model *rows);
    int (*add_tables)(const char *tmp, const struct pm_h5model *tables);
    /* The report's engine for a summary file (job/pm_job_summary.h); NULL
     * where the library was built without it (unit tests). */
    pm_summary_fn summary;
};

/* Bumped whenever the struct changes: a runtime and a writer from two
 * builds must not be mixed. The key the two compare also covers what the
 * model they share is made of: its structs and the schema table. */
#define PM_WRITER_ABI 5
#define PM_WRITER_ENTRY "pm_writer_attach"
static inline uint64_t pm_writer_key(void)
{
    return (uint64_t)PM_WRITER_ABI << 56 ^ (uint64_t)PM_SCHEMA_REVISION << 48 ^
           (uint64_t)PM_S_COUNT << 32 ^ (uint64_t)sizeof(struct pm_h5m_dset) << 16 ^
           (uint64_t)sizeof(struct pm_h5model) << 8 ^ (uint64_t)sizeof(struct pm_h5m_attr);
}
typedef int (*pm_writer_attach_fn)(uint64_t key, struct pm_writer_entry *out);

/* Runtime side (pm_writer_load.c). The writer library, loaded now if it
 * was not yet (waiting for a load under way on another thread), or NULL
 * with the reason in err. */
const struct pm_writer_entry *pm_writer_lib(char *err, size_t errlen);
/* The same for a parallel file on an MPI of `abi` ("openmpi", ...): NULL
 * with the reason where the library was built for another MPI. */
const struct pm_writer_entry *pm_writer_lib_for(const char *abi, char *err, size_t errlen);
/* A model the encoder leaves to HDF5, through the writer library
 * (pm_h5out_large_fn). */
int pm_writer_large_image(const struct pm_h5model *m, void **image, size_t *len, char *err,
                          size_t errlen);
/* Before fork(): let a load under way finish (bounded), so that the child
 * never inherits a half-loaded library. In the child: the loading thread
 * did not come along. */
void pm_writer_before_fork(void);
void pm_writer_after_fork(void);

#endif
