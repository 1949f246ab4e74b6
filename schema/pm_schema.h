/*
 * pm_schema.h — the perfmark HDF5 file's schema as a table (pm_schema.def):
 * one row per group, dataset, attribute and compound field. The writer and
 * the reader take every path, shape and type from it; so does schema.json,
 * which the build generates from it for readers in other languages.
 */
#ifndef PM_SCHEMA_H
#define PM_SCHEMA_H

#include <stddef.h>

/* The schema_version attribute of every file this table describes. A reader
 * refuses other versions: a new version means an old reader would misread. */
#define PM_SCHEMA_VERSION 1
/* The newest revision: additions within version 1 (the SINCE column). */
#define PM_SCHEMA_REVISION 12
/* Bytes of a STR64 element (fixed size: parallel HDF5 cannot write
 * variable-length strings collectively). */
#define PM_SCHEMA_STR64 64

enum pm_schema_kind { PM_SK_GROUP, PM_SK_DATASET, PM_SK_ATTR, PM_SK_FIELD };

enum pm_schema_type {
    PM_ST_NONE, PM_ST_COMPOUND, PM_ST_I32, PM_ST_U8, PM_ST_U32, PM_ST_I64, PM_ST_U64,
    PM_ST_F64, PM_ST_STR, PM_ST_STR64
};

/* NEEDED: a reader refuses a file without it. DEFAULT: absent in older
 * files, read as zeros or "". */
enum pm_schema_rule { PM_SR_NEEDED, PM_SR_DEFAULT };

enum pm_schema_id {
#define PM_SCHEMA(id, kind, path, dims, type, since, rule, meaning) PM_S_##id,
#include "pm_schema.def"
#undef PM_SCHEMA
    PM_S_COUNT
};

struct pm_schema_entry {
    const char *id;   /* the row's ID, as written in pm_schema.def */
    enum pm_schema_kind kind;
    const char *path; /* "/group/dataset", "/object@attribute", "/dataset.field" */
    const char *dims; /* "T,R,E"; "" for scalars, attributes and fields */
    enum pm_schema_type type;
    int since;        /* schema revision that added it */
    enum pm_schema_rule rule;
    const char *meaning;
};

extern const struct pm_schema_entry pm_schema[PM_S_COUNT];

/* The row's path, and its last component: what H5Dcreate/H5Aopen/H5Tinsert
 * take relative to the parent object. */
static inline const char *pm_schema_path(enum pm_schema_id id) { return pm_schema[id].path; }
const char *pm_schema_name(enum pm_schema_id id);
/* Number of dimensions (0 for scalars). */
int pm_schema_ndims(enum pm_schema_id id);
static inline const char *pm_schema_dims(enum pm_schema_id id) { return pm_schema[id].dims; }
static inline int pm_schema_needed(enum pm_schema_id id)
{
    return pm_schema[id].rule == PM_SR_NEEDED;
}
/* Bytes of an element of that type in a C row struct (a pointer for STR);
 * 0 for NONE and COMPOUND. Writers check their row structs against it. */
size_t pm_schema_type_size(enum pm_schema_type type);
const char *pm_schema_kind_name(enum pm_schema_kind kind);
const char *pm_schema_type_name(enum pm_schema_type type);

#endif
