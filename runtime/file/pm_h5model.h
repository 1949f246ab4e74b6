/* pm_h5model — a perfmark file as plain data: the groups, datasets and
 * attributes of the schema table (schema/pm_schema.def), with their shapes
 * and bytes, before any HDF5 code sees them (docs/design.md, "The file").
 *
 * The writer builds a model (pm_h5out*.c); then either perfmark's own
 * encoder turns it into the bytes of an HDF5 file (pm_h5enc.c: no HDF5
 * library, nothing to load) or, for files with datasets large enough to be
 * chunked and compressed, the HDF5 library writes it (pm_h5lib.c, in the
 * writer library). Under MPI each rank's rows travel to rank 0 as a packed
 * model (pm_h5model_pack), where they are joined in rank order.
 *
 * Every item is a row of the schema table: its id gives its path, its
 * element type (numbers, STR, STR64) and its rank. A compound dataset adds
 * its members (struct pm_field: the schema row of each member and where it
 * sits in the caller's row struct). The model owns copies of everything it
 * is given: the caller's buffers may go as soon as a call returns.
 *
 * Errors: functions return 0, or -1 with the model marked failed (an
 * allocation failed, or an item disagrees with the schema table); a failed
 * model stays failed, and pm_h5model_ok says whether it is whole. */
#ifndef PM_H5MODEL_H
#define PM_H5MODEL_H

#include "pm_schema.h"

#include <stddef.h>
#include <stdint.h>

/* A member of a compound row: its schema row (a FIELD) and its place in the
 * caller's C struct. */
struct pm_field {
    enum pm_schema_id id;
    size_t offset, size;
};

#define PM_FIELD(row, member, id) \
    {PM_S_##id, offsetof(struct row, member), sizeof(((struct row *)0)->member)}
#define PM_NFIELDS(f) (sizeof(f) / sizeof *(f))

/* The element type of a dataset, in memory: a number or string type from
 * the schema row, or a compound of `nfields` members `size` bytes apart. */
struct pm_h5m_type {
    enum pm_schema_type type;
    size_t size;
    size_t nfields;
    struct pm_field *fields; /* COMPOUND only (owned) */
};

/* A scalar attribute: a number of its schema row's type, or a string. */
struct pm_h5m_attr {
    enum pm_schema_id id;   /* its schema row: type (and name, unless renamed) */
    char *name;             /* (owned) */
    unsigned char num[8];   /* numbers, little-endian as in memory */
    char *str;              /* STR rows (owned) */
};

struct pm_h5m_attrs {
    struct pm_h5m_attr *a;
    size_t n, cap;
};

struct pm_h5m_group {
    enum pm_schema_id id;
    struct pm_h5m_attrs attrs;
};

/* A dataset, or this process's rows of one: rows [row0, row0 + nrows) of
 * a dataset of shape dims (dims[0] counts the rows of every process). */
struct pm_h5m_dset {
    enum pm_schema_id id;
    struct pm_h5m_type type;
    int ndims;
    uint64_t dims[3];
    uint64_t row0, nrows;
    void *data;  /* nrows rows in memory layout; STR elements point into the model */
    struct pm_h5m_attrs attrs;
};

struct pm_h5model {
    struct pm_h5m_group *groups; /* groups[0] is the root */
    size_t ngroups, groups_cap;
    struct pm_h5m_dset *dsets;
    size_t ndsets, dsets_cap;
    char **strs; /* the strings STR elements point at (owned) */
    size_t nstrs, strs_cap;
    int failed;
};

/* An empty file: the root group only. */
void pm_h5model_init(struct pm_h5model *m);
void pm_h5model_free(struct pm_h5model *m);
static inline int pm_h5model_ok(const struct pm_h5model *m) { return !m->failed; }

/* Group `id`, added if the model has none yet (its parent must exist). */
int pm_h5model_group(struct pm_h5model *m, enum pm_schema_id id);

/* Dataset `id` of shape `dims` (as many as the schema row has), holding
 * rows [row0, row0 + nrows) from `data`. Numbers and strings take their
 * type from the schema row (fields NULL); compound rows pass their members
 * and the row struct's size. Its group must exist. */
int pm_h5model_rows(struct pm_h5model *m, enum pm_schema_id id, const struct pm_field *fields,
                    size_t nfields, size_t row_size, const uint64_t *dims, uint64_t row0,
                    uint64_t nrows, const void *data);
/* The whole dataset, from one process. */
static inline int pm_h5model_dataset(struct pm_h5model *m, enum pm_schema_id id,
                                     const struct pm_field *fields, size_t nfields,
                                     size_t row_size, const uint64_t *dims, const void *data)
{
    return pm_h5model_rows(m, id, fields, nfields, row_size, dims, 0, dims[0], data);
}

/* Attribute `id` (a number of its row's type at `value`, or a string) on
 * the group or dataset `owner`. `name` NULL: the schema row's name. An
 * object has one attribute of a name, as a model has one dataset per row:
 * a second is refused. */
int pm_h5model_attr_num(struct pm_h5model *m, enum pm_schema_id owner, enum pm_schema_id id,
                        const char *name, const void *value);
int pm_h5model_attr_str(struct pm_h5model *m, enum pm_schema_id owner, enum pm_schema_id id,
                        const char *value);

/* Bytes of one element, and of one row (an element times the inner dims). */
size_t pm_h5model_row_bytes(const struct pm_h5m_dset *d);
/* The largest dataset's number of elements (every dimension multiplied). */
uint64_t pm_h5model_max_elements(const struct pm_h5model *m);
/* Group or dataset path of a row: "/region", "/region/visits". */
const char *pm_h5model_path(enum pm_schema_id id);

/* ---- rows between processes (the MPI job's file) ---------------------- */

/* This model's row datasets and their attributes as one buffer (*buf,
 * malloc'ed, *len bytes). Only fixed-size elements travel: a dataset with
 * STR elements, a string attribute or a group attribute is refused (-1);
 * groups travel by id. */
int pm_h5model_pack(const struct pm_h5model *m, void **buf, size_t *len);
/* A model from a packed buffer (0), or -1 when the buffer is not one. */
int pm_h5model_unpack(struct pm_h5model *m, const void *buf, size_t len);
/* Every model's datasets joined in order, as rows of one dataset per id:
 * into `out`, which holds the groups and datasets of parts[0] (with their
 * attributes) and each dataset's rows of every part after one another.
 * Each part holds its own rows only (row0 is ignored). -1 with errno
 * EINVAL when the parts disagree on a dataset's type or inner dims,
 * ENOMEM when memory ran out. */
int pm_h5model_join(struct pm_h5model *out, const struct pm_h5model *parts, size_t nparts);

#endif
