/* pm_h5lib — a model written by the HDF5 library (pm_h5lib.h). */
#include "pm_h5lib.h"
#include "pm_schema_h5.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* How a file in memory grows (HDF5's core driver). The driver allocates
 * and clears a whole increment up front: 1 MiB cost ~0.5 ms per file;
 * 64 KiB cost 0.04 ms, and large files build as fast (26 MB: same time). */
#define PM_H5_MEM_INCREMENT ((size_t)64 << 10)

/* ---- types ------------------------------------------------------------------------- */

static hid_t pm_string_type(void)
{
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, H5T_VARIABLE);
    H5Tset_cset(t, H5T_CSET_UTF8);
    return t;
}

static hid_t pm_fixed_string_type(size_t size)
{
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, size);
    H5Tset_strpad(t, H5T_STR_NULLTERM);
    H5Tset_cset(t, H5T_CSET_UTF8);
    return t;
}

/* An element type of the schema, as a type the caller closes. */
static hid_t pm_schema_type(enum pm_schema_type t)
{
    return t == PM_ST_STR     ? pm_string_type()
           : t == PM_ST_STR64 ? pm_fixed_string_type(PM_SCHEMA_STR64)
                              : H5Tcopy(pm_schema_native(t));
}

/* The memory type of a dataset's elements (compound members where the
 * row struct has them). */
static hid_t pm_mem_type(const struct pm_h5m_type *t)
{
    if (t->type != PM_ST_COMPOUND)
        return pm_schema_type(t->type);
    hid_t c = H5Tcreate(H5T_COMPOUND, t->size);
    for (size_t i = 0; c >= 0 && i < t->nfields; i++) {
        hid_t ft = pm_schema_type(pm_schema[t->fields[i].id].type);
        H5Tinsert(c, pm_schema_name(t->fields[i].id), t->fields[i].offset, ft);
        H5Tclose(ft);
    }
    return c;
}

/* ---- writing ----------------------------------------------------------------------- */

/* Chunk large datasets (last dimensions first), shuffle and deflate. The
 * layout depends only on the global shape, so every rank agrees on it. */
static hid_t pm_dcpl(int ndims, const hsize_t *dims)
{
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    hsize_t total = 1;
    for (int i = 0; i < ndims; i++)
        total *= dims[i];
    if (total <= PM_CHUNK_THRESHOLD)
        return dcpl;
    hsize_t chunk[3], budget = PM_CHUNK_THRESHOLD;
    for (int i = ndims - 1; i >= 0; i--) {
        chunk[i] = dims[i] < budget ? dims[i] : budget;
        if (chunk[i] == 0)
            chunk[i] = 1;
        budget = budget / chunk[i] ? budget / chunk[i] : 1;
    }
    H5Pset_chunk(dcpl, ndims, chunk);
    H5Pset_shuffle(dcpl);
    H5Pset_deflate(dcpl, 4);
    return dcpl;
}

static int pm_write_attrs(hid_t loc, const struct pm_h5m_attrs *attrs)
{
    int rc = 0;
    for (size_t i = 0; i < attrs->n; i++) {
        const struct pm_h5m_attr *at = &attrs->a[i];
        enum pm_schema_type st = pm_schema[at->id].type;
        hid_t type = pm_schema_type(st), space = H5Screate(H5S_SCALAR);
        hid_t a = H5Acreate2(loc, at->name, type, space, H5P_DEFAULT, H5P_DEFAULT);
        const char *str = at->str;
        rc |= a < 0 || H5Awrite(a, type, st == PM_ST_STR ? (const void *)&str : at->num) < 0;
        if (a >= 0)
            H5Aclose(a);
        H5Sclose(space), H5Tclose(type);
    }
    return rc ? -1 : 0;
}

/* Dataset d: created with its whole shape, its rows written (every rank
 * calls this in a parallel file, also with no rows). */
static int pm_write_dset(hid_t file, const struct pm_h5m_dset *d, hid_t type, hid_t dxpl)
{
    hsize_t dims[3], start[3] = {d->row0, 0, 0}, count[3], total = 1, local = 1;
    for (int i = 0; i < d->ndims; i++) {
        dims[i] = d->dims[i];
        count[i] = i == 0 ? d->nrows : d->dims[i];
        total *= dims[i];
        local *= count[i];
    }
    hid_t fspace = H5Screate_simple(d->ndims, dims, NULL);
    hid_t dcpl = pm_dcpl(d->ndims, dims);
    hid_t ds = H5Dcreate2(file, pm_h5model_path(d->id), type, fspace, H5P_DEFAULT, dcpl,
                          H5P_DEFAULT);
    herr_t rc = ds < 0 ? -1 : 0;
    if (rc == 0 && total > 0) {
        hid_t mspace = H5Screate_simple(d->ndims, count, NULL);
        if (local == 0) {
            H5Sselect_none(mspace);
            H5Sselect_none(fspace);
        } else {
            H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, NULL, count, NULL);
        }
        rc = H5Dwrite(ds, type, mspace, fspace, dxpl, d->data);
        H5Sclose(mspace);
    }
    if (ds >= 0 && pm_write_attrs(ds, &d->attrs) != 0)  /* collective too: whatever came before */
        rc = -1;
    if (ds >= 0)
        H5Dclose(ds);
    H5Pclose(dcpl), H5Sclose(fspace);
    return rc < 0 ? -1 : 0;
}

/* Every dataset's memory type, built before any dataset is created: in a
 * parallel file a rank that failed here would skip a collective create. */
static hid_t *pm_types(const struct pm_h5model *m)
{
    hid_t *types = calloc(m->ndsets + 1, sizeof *types);
    int ok = types != NULL;
    for (size_t i = 0; ok && i < m->ndsets; i++)
        ok = (types[i] = pm_mem_type(&m->dsets[i].type)) >= 0;
    if (!ok && types) {
        for (size_t i = 0; i < m->ndsets && types[i] > 0; i++)
            H5Tclose(types[i]);
        free(types);
        types = NULL;
    }
    return types;
}

static void pm_types_free(const struct pm_h5model *m, hid_t *types)
{
    for (size_t i = 0; types && i < m->ndsets; i++)
        H5Tclose(types[i]);
    free(types);
}

/* The model into `file` with its types built (pm_types). */
static int pm_write_model(hid_t file, const struct pm_h5model *m, const hid_t *types, hid_t dxpl)
{
    int rc = 0;
    /* Every step on every rank, whatever failed before: in a parallel file
     * each is collective. */
    for (size_t g = 0; g < m->ngroups; g++) {
        const char *path = pm_h5model_path(m->groups[g].id);
        hid_t grp = m->groups[g].id == PM_S_ROOT ? H5Gopen2(file, "/", H5P_DEFAULT)
                    : H5Lexists(file, path, H5P_DEFAULT) > 0
                        ? H5Gopen2(file, path, H5P_DEFAULT)
                        : H5Gcreate2(file, path, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        rc |= grp < 0 ? -1 : pm_write_attrs(grp, &m->groups[g].attrs);
        if (grp >= 0)
            H5Gclose(grp);
    }
    for (size_t i = 0; i < m->ndsets; i++)
        rc |= pm_write_dset(file, &m->dsets[i], types[i], dxpl);
    return rc ? -1 : 0;
}

int pm_h5lib_write(hid_t file, const struct pm_h5model *m, hid_t dxpl)
{
    hid_t *types = pm_h5model_ok(m) ? pm_types(m) : NULL;
    int rc = types ? pm_write_model(file, m, types, dxpl) : -1;
    pm_types_free(m, types);
    return rc;
}

/* ---- in memory ---------------------------------------------------------------------- */

static hid_t pm_mem_create(char *err, size_t errlen)
{
    static unsigned serial;
    char name[64];
    snprintf(name, sizeof name, "perfmark-image-%ld-%u", (long)getpid(), serial++);
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_libver_bounds(fapl, H5F_LIBVER_EARLIEST, H5F_LIBVER_LATEST);
    H5Pset_fapl_core(fapl, PM_H5_MEM_INCREMENT, 0);
    hid_t file = H5Fcreate(name, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    H5Pclose(fapl);
    if (file < 0)
        snprintf(err, errlen, "HDF5 cannot create a file in memory (out of memory?)");
    return file;
}

static int pm_mem_take(hid_t file, void **image, size_t *len, char *err, size_t errlen)
{
    *image = NULL;
    *len = 0;
    ssize_t n = H5Fflush(file, H5F_SCOPE_LOCAL) < 0 ? -1 : H5Fget_file_image(file, NULL, 0);
    void *buf = n > 0 ? malloc((size_t)n) : NULL;
    if (buf && H5Fget_file_image(file, buf, (size_t)n) != n) {
        free(buf);
        buf = NULL;
    }
    if (H5Fclose(file) < 0 || !buf) {
        free(buf);
        snprintf(err, errlen, "HDF5 could not produce the file's bytes (out of memory?)");
        return -1;
    }
    *image = buf;
    *len = (size_t)n;
    return 0;
}

int pm_h5lib_image(const struct pm_h5model *m, void **image, size_t *len, char *err,
                   size_t errlen)
{
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL); /* our message, not HDF5's stack dump */
    *image = NULL;
    *len = 0;
    hid_t file = pm_mem_create(err, errlen);
    if (file < 0)
        return -1;
    if (pm_h5lib_write(file, m, H5P_DEFAULT) != 0) {
        H5Fclose(file);
        snprintf(err, errlen, "HDF5 could not build the file (out of memory?)");
        return -1;
    }
    return pm_mem_take(file, image, len, err, errlen);
}

/* ---- the MPI job's parallel file ------------------------------------------------------ */

static int pm_agree(MPI_Comm comm, int ok)
{
    int all = 0;
    return PMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, comm) == MPI_SUCCESS && all;
}

int pm_h5lib_rows_parallel(const void *comm_ptr, const char *tmp, const struct pm_h5model *rows)
{
    MPI_Comm comm = *(const MPI_Comm *)comm_ptr;
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    hid_t *types = pm_h5model_ok(rows) ? pm_types(rows) : NULL;
    if (!pm_agree(comm, types != NULL)) {
        pm_types_free(rows, types);
        return -1;
    }
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_fapl_mpio(fapl, comm, MPI_INFO_NULL);
    hid_t file = H5Fcreate(tmp, H5F_ACC_EXCL, H5P_DEFAULT, fapl);
    H5Pclose(fapl);
    if (!pm_agree(comm, file >= 0)) {
        if (file >= 0)
            H5Fclose(file);
        pm_types_free(rows, types);
        return -1;
    }
    hid_t dxpl = H5Pcreate(H5P_DATASET_XFER);
    H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE);
    int rc = pm_write_model(file, rows, types, dxpl);
    rc |= H5Fclose(file) < 0;
    H5Pclose(dxpl);
    pm_types_free(rows, types);
    return pm_agree(comm, rc == 0) ? 0 : -1;
}

int pm_h5lib_add_tables(const char *tmp, const struct pm_h5model *tables)
{
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    hid_t file = H5Fopen(tmp, H5F_ACC_RDWR, H5P_DEFAULT);
    int rc = file >= 0 ? pm_h5lib_write(file, tables, H5P_DEFAULT) : -1;
    if (file >= 0 && H5Fclose(file) < 0)
        rc = -1;
    return rc;
}
