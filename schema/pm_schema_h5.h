/*
 * pm_schema_h5.h — the HDF5 side of the schema table, for the code that
 * reads or writes files (the runtime's writer, the reader, gen_synthetic):
 * the native memory type of a number row. Header only: pm_schema itself
 * stays free of HDF5.
 */
#ifndef PM_SCHEMA_H5_H
#define PM_SCHEMA_H5_H

#include "pm_schema.h"

#include <hdf5.h>

/* The native HDF5 type of a number element type; -1 for strings, compounds. */
static inline hid_t pm_schema_native(enum pm_schema_type t)
{
    switch (t) {
    case PM_ST_I32: return H5T_NATIVE_INT32;
    case PM_ST_U8: return H5T_NATIVE_UINT8;
    case PM_ST_U32: return H5T_NATIVE_UINT32;
    case PM_ST_I64: return H5T_NATIVE_INT64;
    case PM_ST_U64: return H5T_NATIVE_UINT64;
    case PM_ST_F64: return H5T_NATIVE_DOUBLE;
    default: return -1;
    }
}

#endif
