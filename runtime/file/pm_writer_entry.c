/* The HDF5 writer's entry point (pm_writer.h): the one symbol
 * libperfmark_writer.so exports, also linked directly into unit tests. */
#include "pm_h5lib.h"
#include "pm_writer.h"

#define PM_EXPORT __attribute__((visibility("default")))

/* analysis/cli/job_summary.c, in the libraries; absent from unit tests. */
extern int pm_job_summary(const struct pm_comm *c, const char *path, uint64_t t_base,
                          uint64_t rows_bytes, uint64_t keep_bytes, struct pm_summary *out,
                          char *err, size_t errlen) __attribute__((weak));

PM_EXPORT int pm_writer_attach(uint64_t key, struct pm_writer_entry *out)
{
    if (key != pm_writer_key())
        return -1;
    out->image = pm_h5lib_image;
    out->rows_parallel = pm_h5lib_rows_parallel;
    out->add_tables = pm_h5lib_add_tables;
    out->summary = pm_job_summary;
    return 0;
}
