/* pm_writer — the HDF5 writer, a library of its own (libperfmark_writer.so)
 * that the runtime loads with dlopen once a process starts measuring.
 *
 * Why: Debian's parallel HDF5 pulls about 40 libraries into a process
 * (curl, gnutls, Kerberos, LDAP, ...): 5-6 ms of mapping and relocation in
 * every process that loads libperfmark.so, including those that never
 * measure: mpirun itself, shells and helpers that inherit LD_PRELOAD. The
 * runtime proper needs none of it until the file is written.
 *
 * The load runs on a thread of its own from the moment a process starts
 * measuring (pm_writer_preload), so that its cost overlaps the program's own
 * start (MPI_Init alone takes 200 ms); writing waits for it. The writer
 * reaches back into the runtime only through struct pm_writer_host (names,
 * messages, placement), and exports one symbol, pm_writer_attach. */
#ifndef PM_WRITER_H
#define PM_WRITER_H

#include "pm_names.h"
#include "pm_pin.h"

#include <stddef.h>
#include <stdint.h>

struct pm_output;  /* pm_h5out.h */

/* Where a finished file's bytes go (the runtime's pm_store): 0 when some
 * place took them. */
typedef int (*pm_writer_publish_fn)(const void *image, size_t len, void *ctx);

/* The job writer (wrappers/mpi_job_writer.c), called by every rank in
 * MPI_Finalize, builds the job's one file. A job file up to
 * pm_output.job_gather_max bytes (PERFMARK_JOB_GATHER_MAX, default
 * PM_JOB_GATHER_MAX) is built in memory on rank 0 from every rank's
 * rows and handed to `publish` there: only rank 0 touches the disk, and a
 * failure there is one errno, not a collective that half the ranks left.
 * A larger one is written collectively (parallel HDF5) at `tmp`, chosen
 * from `want`, after rank 0 checked the free space. Every rank returns the
 * same verdict, so none waits for ever:
 *   1  rank 0: published through `publish`       0  other ranks: done
 *   2  rank 0: complete at `tmp`, publish it under `want`
 *  -1  no job file: each rank writes its own
 *  -2  built, but no place took it: each rank prints its summary */
typedef int (*pm_writer_job_fn)(const struct pm_output *o, const char *want, char *tmp,
                                size_t tmplen, pm_writer_publish_fn publish, void *ctx,
                                char *err, size_t errlen);
#define PM_JOB_GATHER_MAX ((size_t)512 << 20)

/* What the writer needs from the runtime it was loaded by. */
struct pm_writer_host {
    int version;                         /* PM_WRITER_ABI */
    const char *(*name_get)(int32_t id);
    enum pm_kind (*name_kind)(int32_t id);
    const char *(*kind_name)(enum pm_kind kind);
    size_t (*msg_count)(void);
    const char *(*msg_get)(size_t i);
    void (*pin_place)(int cpu, struct pm_place *out);
    int (*td_rdpmc_used)(void);
};

/* What the writer gives back. */
struct pm_writer_entry {
    /* One process's file, in memory (pm_h5out_image). */
    int (*image)(const struct pm_output *o, void **image, size_t *len, char *err,
                 size_t errlen);
    /* The job's file under MPI, or NULL in a writer built without MPI. */
    pm_writer_job_fn job;
};

/* Bumped whenever either struct changes: a runtime and a writer from two
 * builds must not be mixed. */
#define PM_WRITER_ABI 3
#define PM_WRITER_ENTRY "pm_writer_attach"
typedef int (*pm_writer_attach_fn)(const struct pm_writer_host *host,
                                   struct pm_writer_entry *out);

/* Runtime side (pm_writer_load.c). Start loading the writer in the
 * background; idempotent. */
void pm_writer_preload(void);
/* Wait for the load and build one process's file in memory:
 * pm_h5out_image's contract. If the writer could not be loaded, -1 with the
 * reason in err. */
int pm_writer_image(const struct pm_output *o, void **image, size_t *len, char *err,
                    size_t errlen);
/* Wait for the load; the job writer, or NULL (no MPI, or no writer). */
pm_writer_job_fn pm_writer_job(void);
/* Wait until the load has ended (either way). */
void pm_writer_wait(void);
/* Before fork(): let a load under way finish (bounded), so that the child
 * never inherits a half-loaded library. In the child: the loading thread
 * did not come along. */
void pm_writer_before_fork(void);
void pm_writer_after_fork(void);

#endif
