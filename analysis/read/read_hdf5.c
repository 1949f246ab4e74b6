/*
 * read_hdf5.c — the reader's ground floor: opening a file, one-line errors
 * instead of HDF5's error stack, attributes, and numeric datasets checked
 * against their schema row's shape and class (pm_rd_read_dataset).
 */
#include "read_internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <sys/stat.h>

/* ---------------------------------------------------------------- errors */

/* User data (path, HDF5 text) may contain newlines; the message is one line. */
void pm_rd_oneline(char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f)
            *s = '?';
}

/* Keeps the first message: it is raised where the problem was detected and
 * is the most specific one. */
int pm_rd_fail(struct pm_rd *rd, const char *fmt, ...)
{
    char msg[512];
    va_list ap;

    if (rd->failed)
        return -1;
    rd->failed = 1;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (rd->err && rd->errlen > 0) {
        snprintf(rd->err, rd->errlen, "%s: %s", rd->path, msg);
        pm_rd_oneline(rd->err);
    }
    return -1;
}

int pm_rd_oom(struct pm_rd *rd)
{
    return pm_rd_fail(rd, "out of memory");
}


static herr_t pm_reason_walk(unsigned n, const H5E_error2_t *e, void *data)
{
    struct pm_reason *r = data;

    if (n == 0 && e->desc)
        snprintf(r->text, sizeof r->text, "%s", e->desc);
    return 0;
}

/* The innermost HDF5 error description ("truncated file: eof = ..."), which
 * says more than the API-level "unable to open file". */
const char *pm_rd_hdf5_reason(struct pm_reason *r)
{
    r->text[0] = '\0';
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, pm_reason_walk, r);
    if (r->text[0] == '\0')
        snprintf(r->text, sizeof r->text, "HDF5 error");
    return r->text;
}

/* --------------------------------------------------------------- helpers */

/* Character set of a file string type. Memory types use the file's own:
 * HDF5 refuses to convert between ASCII and UTF-8 strings. */
H5T_cset_t pm_rd_cset(hid_t filetype)
{
    H5T_cset_t c = H5Tget_cset(filetype);

    return c == H5T_CSET_ASCII ? H5T_CSET_ASCII : H5T_CSET_UTF8;
}

hid_t pm_rd_vlen_str_type(H5T_cset_t cset)
{
    hid_t t = H5Tcopy(H5T_C_S1);

    if (t < 0)
        return -1;
    if (H5Tset_size(t, H5T_VARIABLE) < 0 || H5Tset_cset(t, cset) < 0) {
        H5Tclose(t);
        return -1;
    }
    return t;
}

/* A fixed-length string type one byte longer than the file's, so that HDF5
 * always leaves room for the terminating NUL. */
hid_t pm_rd_fixed_str_type(size_t filesize, H5T_cset_t cset)
{
    hid_t t = H5Tcopy(H5T_C_S1);

    if (t < 0)
        return -1;
    if (H5Tset_size(t, filesize + 1) < 0 || H5Tset_strpad(t, H5T_STR_NULLTERM) < 0 ||
        H5Tset_cset(t, cset) < 0) {
        H5Tclose(t);
        return -1;
    }
    return t;
}

int pm_rd_mul(size_t a, size_t b, size_t *out)
{
    if (a != 0 && b > SIZE_MAX / a)
        return -1;
    *out = a * b;
    return 0;
}

static void pm_fmt_dims(char *buf, size_t len, const hsize_t *dims, int n)
{
    size_t used = 0;

    buf[0] = '\0';
    for (int i = 0; i < n && used < len; i++) {
        int w = snprintf(buf + used, len - used, "%s%llu", i ? "," : "",
                         (unsigned long long)dims[i]);
        if (w < 0)
            break;
        used += (size_t)w;
    }
}

int pm_rd_link_exists(struct pm_rd *rd, const char *name)
{
    return H5Lexists(rd->file, name, H5P_DEFAULT) > 0;
}

/* ------------------------------------------------------------------ open */

int pm_rd_open(struct pm_rd *rd)
{
    struct stat st;
    struct pm_reason why;
    htri_t is_hdf5;
    hid_t fapl;

    if (stat(rd->path, &st) != 0)
        return pm_rd_fail(rd, "%s", strerror(errno));
    if (S_ISDIR(st.st_mode))
        return pm_rd_fail(rd, "is a directory");
    pm_read_begin("the file's header"); /* read_guard.h: each object read is a step */
    is_hdf5 = H5Fis_hdf5(rd->path);
    if (is_hdf5 == 0)
        return pm_rd_fail(rd, "not a perfmark file (not an HDF5 file)");

    fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (fapl < 0)
        return pm_rd_fail(rd, "cannot set up HDF5 (%s)", pm_rd_hdf5_reason(&why));
    /* STRONG: closing the file also closes anything an error path left open. */
    H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG);
    /* Shared file systems without flock must not stop a read-only reader. */
    H5Pset_file_locking(fapl, 1, 1);
#ifdef H5_HAVE_PARALLEL
    if (rd->mpio && H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL) < 0) {
        H5Pclose(fapl);
        return pm_rd_fail(rd, "cannot set up MPI-IO (%s)", pm_rd_hdf5_reason(&why));
    }
#endif
    rd->file = H5Fopen(rd->path, H5F_ACC_RDONLY, fapl);
    if (rd->file < 0)
        pm_rd_hdf5_reason(&why); /* before the next call clears the error stack */
    H5Pclose(fapl);
    if (rd->file < 0) {
        if (is_hdf5 > 0)
            return pm_rd_fail(rd, "damaged or truncated HDF5 file (%s)", why.text);
        return pm_rd_fail(rd, "cannot open (%s)", why.text);
    }
    pm_read_begin("the root group /");
    rd->root = H5Gopen2(rd->file, "/", H5P_DEFAULT);
    if (rd->root < 0)
        return pm_rd_fail(rd, "cannot open the root group (%s)", pm_rd_hdf5_reason(&why));
    return 0;
}

/* ------------------------------------------------------------ attributes */

/* 1 and an open attribute if it exists, 0 if not, -1 on error. */
int pm_rd_attr_open(struct pm_rd *rd, const char *name, hid_t *attr)
{
    htri_t ex;

    pm_read_begin("attribute '%s' of /", name);
    ex = H5Aexists(rd->root, name);

    if (ex < 0)
        return pm_rd_fail(rd, "cannot look up attribute %s", name);
    if (ex == 0)
        return 0;
    *attr = H5Aopen(rd->root, name, H5P_DEFAULT);
    if (*attr < 0)
        return pm_rd_fail(rd, "cannot open attribute %s", name);
    return 1;
}

int pm_rd_attr_single(hid_t attr)
{
    hid_t space = H5Aget_space(attr);
    hssize_t n;

    if (space < 0)
        return 0;
    n = H5Sget_simple_extent_npoints(space);
    H5Sclose(space);
    return n == 1;
}

/* Read a single-valued integer attribute converted to memtype; -1 if it is
 * not one (the caller words the message). */
int pm_rd_attr_read_int(hid_t attr, hid_t memtype, void *out)
{
    hid_t type = H5Aget_type(attr);
    int ok = type >= 0 && H5Tget_class(type) == H5T_INTEGER && pm_rd_attr_single(attr) &&
             H5Aread(attr, memtype, out) >= 0;

    if (type >= 0)
        H5Tclose(type);
    return ok ? 0 : -1;
}

/* 1 if integer attribute `name` was read, 0 if absent, -1 if unreadable. */
int pm_rd_attr_int(struct pm_rd *rd, const char *name, hid_t memtype, void *out)
{
    hid_t attr = -1;
    int rc = pm_rd_attr_open(rd, name, &attr);

    if (rc <= 0)
        return rc;
    rc = pm_rd_attr_read_int(attr, memtype, out);
    H5Aclose(attr);
    return rc == 0 ? 1 : pm_rd_fail(rd, "attribute %s is not an integer", name);
}

static int pm_attr_read_vlen(hid_t attr, H5T_cset_t cset, char **out)
{
    hid_t mem = pm_rd_vlen_str_type(cset), space = H5Aget_space(attr);
    char *s = NULL;
    int rc = -1;

    if (mem >= 0 && space >= 0 && H5Aread(attr, mem, &s) >= 0) {
        *out = strdup(s ? s : "");
        rc = *out ? 0 : -2;
        H5Dvlen_reclaim(mem, space, H5P_DEFAULT, &s);
    }
    if (space >= 0)
        H5Sclose(space);
    if (mem >= 0)
        H5Tclose(mem);
    return rc;
}

static int pm_attr_read_fixed(hid_t attr, size_t size, H5T_cset_t cset, char **out)
{
    hid_t mem = pm_rd_fixed_str_type(size, cset);
    char *buf = calloc(size + 2, 1);
    int rc = -1;

    if (!buf)
        rc = -2;
    else if (mem >= 0 && H5Aread(attr, mem, buf) >= 0)
        rc = 0;
    if (mem >= 0)
        H5Tclose(mem);
    if (rc == 0)
        *out = buf;
    else
        free(buf);
    return rc;
}

/* String attribute `name` (variable or fixed length); "" when absent. */
int pm_rd_attr_str(struct pm_rd *rd, const char *name, char **out)
{
    hid_t attr = -1, type;
    int rc = pm_rd_attr_open(rd, name, &attr);

    *out = NULL;
    if (rc < 0)
        return -1;
    if (rc == 0) {
        *out = strdup("");
        return *out ? 0 : pm_rd_oom(rd);
    }
    rc = -1;
    type = H5Aget_type(attr);
    if (type >= 0 && H5Tget_class(type) == H5T_STRING && pm_rd_attr_single(attr)) {
        if (H5Tis_variable_str(type) > 0)
            rc = pm_attr_read_vlen(attr, pm_rd_cset(type), out);
        else
            rc = pm_attr_read_fixed(attr, H5Tget_size(type), pm_rd_cset(type), out);
    }
    if (type >= 0)
        H5Tclose(type);
    H5Aclose(attr);
    if (rc == -2)
        return pm_rd_oom(rd);
    return rc == 0 ? 0 : pm_rd_fail(rd, "attribute %s is not a string", name);
}

/* ---------------------------------------------------------- int arrays */

int pm_rd_check_shape(struct pm_rd *rd, const char *name, const char *shape, hid_t space,
                          int ndims, hsize_t *dims)
{
    hsize_t fd[H5S_MAX_RANK];
    char got[96], want[96];
    int nd = H5Sget_simple_extent_ndims(space);
    int bad = 0;

    if (nd != ndims)
        return pm_rd_fail(rd, "%s has %d dimensions, expected %d [%s]", name, nd < 0 ? 0 : nd, ndims,
                       shape);
    if (H5Sget_simple_extent_dims(space, fd, NULL) < 0)
        return pm_rd_fail(rd, "cannot read the shape of %s", name);
    for (int i = 0; i < nd; i++) {
        if (dims[i] == PM_ANY)
            dims[i] = fd[i];
        else if (dims[i] != fd[i])
            bad = 1;
    }
    if (!bad)
        return 0;
    pm_fmt_dims(got, sizeof got, fd, nd);
    pm_fmt_dims(want, sizeof want, dims, nd);
    return pm_rd_fail(rd, "%s has shape [%s], expected [%s] = [%s]", name, got, shape, want);
}

/* Read dataset `name` of class `cls` (integer or float) and shape `dims`
 * (PM_ANY entries are taken from the file and returned) converted to
 * memtype, into a new array. */
static int pm_read_array(struct pm_rd *rd, const char *name, const char *shape, int ndims,
                         hsize_t *dims, H5T_class_t cls, hid_t memtype, size_t elsize,
                         void **out)
{
    struct pm_reason why;
    hid_t dset, type = -1, space = -1;
    size_t n = 1;
    void *buf = NULL;
    int rc = -1;

    *out = NULL;
    pm_read_begin("dataset '%s'", name);
    dset = H5Dopen2(rd->file, name, H5P_DEFAULT);
    if (dset < 0)
        return pm_rd_fail(rd, "missing dataset %s", name);
    type = H5Dget_type(dset);
    space = H5Dget_space(dset);
    if (type < 0 || space < 0 || H5Tget_class(type) != cls) {
        pm_rd_fail(rd, "%s is not %s array", name, cls == H5T_FLOAT ? "a floating-point" : "an integer");
        goto done;
    }
    if (pm_rd_check_shape(rd, name, shape, space, ndims, dims) < 0)
        goto done;
    for (int i = 0; i < ndims; i++)
        if (pm_rd_mul(n, (size_t)dims[i], &n) < 0) {
            pm_rd_fail(rd, "%s is too large", name);
            goto done;
        }
    buf = calloc(n ? n : 1, elsize);
    if (!buf) {
        pm_rd_oom(rd);
        goto done;
    }
    if (n > 0 && H5Dread(dset, memtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0) {
        pm_rd_fail(rd, "cannot read %s (%s)", name, pm_rd_hdf5_reason(&why));
        goto done;
    }
    *out = buf;
    buf = NULL;
    rc = 0;
done:
    free(buf);
    if (space >= 0)
        H5Sclose(space);
    if (type >= 0)
        H5Tclose(type);
    H5Dclose(dset);
    return rc;
}



/* An optional dataset (absent in files of older writers) reads as zeros, so
 * the report code never has to test for it. */
static int pm_read_array_opt(struct pm_rd *rd, const char *name, const char *shape, int ndims,
                             hsize_t *dims, H5T_class_t cls, hid_t memtype, size_t elsize,
                             void **out)
{
    size_t n = 1;

    if (pm_rd_link_exists(rd, name))
        return pm_read_array(rd, name, shape, ndims, dims, cls, memtype, elsize, out);
    for (int i = 0; i < ndims; i++)
        if (pm_rd_mul(n, (size_t)dims[i], &n) < 0)
            return pm_rd_fail(rd, "%s is too large", name);
    *out = calloc(n ? n : 1, elsize);
    return *out ? 0 : pm_rd_oom(rd);
}



/* Dataset `id` of the schema, shape `dims` (PM_ANY entries are taken from
 * the file): name, shape, class and element type from the table; a row a
 * file may lack (DEFAULT) reads as zeros when absent. */
int pm_rd_read_dataset(struct pm_rd *rd, enum pm_schema_id id, hsize_t *dims, void **out)
{
    const char *name = pm_schema_path(id), *shape = pm_schema_dims(id);
    int nd = pm_schema_ndims(id);
    enum pm_schema_type t = pm_schema[id].type;
    H5T_class_t cls = t == PM_ST_F64 ? H5T_FLOAT : H5T_INTEGER;
    hid_t mem = pm_schema_native(t);
    size_t elsize = pm_schema_type_size(t);

    if (!pm_schema_needed(id))
        return pm_read_array_opt(rd, name, shape, nd, dims, cls, mem, elsize, out);
    return pm_read_array(rd, name, shape, nd, dims, cls, mem, elsize, out);
}

int pm_rd_read_rows(struct pm_rd *rd, enum pm_schema_id id, hid_t type, size_t i0, size_t n,
                    size_t cols, void *dst)
{
    const char *name = pm_schema_path(id);
    int ndims = pm_schema_ndims(id);
    struct pm_reason why;
    hsize_t start[2] = {i0, 0}, count[2] = {n, cols};
    pm_read_begin("rows %zu-%zu of dataset '%s'", i0, i0 + n - 1, name);
    hid_t ds = H5Dopen2(rd->file, name, H5P_DEFAULT);
    hid_t fs = ds >= 0 ? H5Dget_space(ds) : -1;
    hid_t ms = H5Screate_simple(ndims, count, NULL);
    int ok = ds >= 0 && fs >= 0 && ms >= 0 &&
             H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL) >= 0 &&
             H5Dread(ds, type, ms, fs, H5P_DEFAULT, dst) >= 0;
    if (ms >= 0)
        H5Sclose(ms);
    if (fs >= 0)
        H5Sclose(fs);
    if (ds >= 0)
        H5Dclose(ds);
    return ok ? 0 : pm_rd_fail(rd, "cannot read %s (%s)", name, pm_rd_hdf5_reason(&why));
}
