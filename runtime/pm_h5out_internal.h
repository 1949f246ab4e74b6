/* pm_h5out_internal — the writer's HDF5 helpers, shared by the files of
 * the writer (pm_h5out.c, pm_h5out_samples.c); not for the job writer. */
#ifndef PM_H5OUT_INTERNAL_H
#define PM_H5OUT_INTERNAL_H

#include "pm_schema_h5.h"

#include <hdf5.h>
#include <stddef.h>

/* A compound row type as data: one line per field, its name and type from
 * the schema row, its place from the C struct. */
struct pm_field {
    enum pm_schema_id id;
    size_t offset, size;
};

#define PM_FIELD(row, member, id) \
    {PM_S_##id, offsetof(struct row, member), sizeof(((struct row *)0)->member)}
#define PM_NFIELDS(f) (sizeof(f) / sizeof *(f))

/* The row type, or -1 when a field's size disagrees with its schema row. */
hid_t pm_compound(const struct pm_field *fields, size_t nfields, size_t row_size);
hid_t pm_string_type(void);
/* A fixed-size NUL-terminated UTF-8 string (STR64 rows). */
hid_t pm_fixed_string_type(size_t size);
int pm_attr_string(hid_t loc, enum pm_schema_id id, const char *value);
/* Dataset `id` of global shape `dims`: rows [row0, row0 + nrows) from data
 * (collectively in a parallel file, also with nrows = 0). */
int pm_slab_write_type(hid_t loc, enum pm_schema_id id, hid_t type, const hsize_t *dims,
                       hsize_t row0, hsize_t nrows, const void *data, hid_t dxpl);
int pm_slab_write(hid_t loc, enum pm_schema_id id, const hsize_t *dims, hsize_t row0,
                  hsize_t nrows, const void *data, hid_t dxpl);
/* A whole dataset written by one process. */
int pm_dataset(hid_t loc, enum pm_schema_id id, hid_t type, const hsize_t *dims,
               const void *data);
hid_t pm_group(hid_t loc, enum pm_schema_id id);
/* The group, created if the file has none yet. */
hid_t pm_group_open(hid_t loc, enum pm_schema_id id);

#endif
