/* The HDF5 writer's entry point (pm_writer.h): the one symbol
 * libperfmark_writer.so exports, also linked directly into unit tests. */
#include "pm_h5out.h"
#include "pm_writer.h"

#define PM_EXPORT __attribute__((visibility("default")))

/* wrappers/mpi_job_writer.c, in a writer built with MPI. */
extern int pm_mpi_job_writer(const struct pm_output *o, const char *want, char *tmp,
                             size_t tmplen, pm_writer_publish_fn publish, void *ctx, char *err,
                             size_t errlen) __attribute__((weak, visibility("hidden")));

/* Where the writer's own forwarders (pm_writer_host.c) find the runtime. */
const struct pm_writer_host *pm_writer_host_table;

PM_EXPORT int pm_writer_attach(const struct pm_writer_host *host, struct pm_writer_entry *out)
{
    if (!host || host->version != PM_WRITER_ABI)
        return -1;
    pm_writer_host_table = host;
    out->image = pm_h5out_image;
    out->job = pm_mpi_job_writer;
    return 0;
}
