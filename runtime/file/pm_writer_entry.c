/* The HDF5 writer's entry point (pm_writer.h): the one symbol
 * libperfmark_writer.so exports, also linked directly into unit tests. */
#include "pm_h5lib.h"
#include "pm_writer.h"

#define PM_EXPORT __attribute__((visibility("default")))

PM_EXPORT int pm_writer_attach(uint64_t key, struct pm_writer_entry *out)
{
    if (key != pm_writer_key())
        return -1;
    out->image = pm_h5lib_image;
    out->rows_parallel = pm_h5lib_rows_parallel;
    out->add_tables = pm_h5lib_add_tables;
    return 0;
}
