/*
 * h5read.c — load a perfmark HDF5 file (schema 1) into a struct pm_file.
 *
 * Everything is read up front and every shape is checked against T/R/E/G, so
 * a truncated, foreign or corrupt file ends here with a message instead of
 * reaching the report code. HDF5's own error printing is switched off for the
 * duration of the load: the caller gets one line, not an error stack.
 */
#include "h5read.h"
#include "read_guard.h"
#include "pm_schema.h"

#include <hdf5.h>
#ifdef H5_HAVE_PARALLEL
#include <mpi.h>
#endif

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define PM_ANY ((hsize_t)-1) /* shape entry taken from the file */
#define PM_TABLE_BLOCK 4096 /* rows of a compound table read at once */

struct pm_rd {
    const char *path;
    char *err;
    size_t errlen;
    int failed;
    hid_t file;
    hid_t root;
    int mpio; /* open through the MPI-IO driver (pm_file_open under mpirun) */
};

/* ---------------------------------------------------------------- errors */

/* User data (path, HDF5 text) may contain newlines; the message is one line. */
static void pm_oneline(char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f)
            *s = '?';
}

/* Keeps the first message: it is raised where the problem was detected and
 * is the most specific one. */
static int pm_fail(struct pm_rd *rd, const char *fmt, ...)
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
        pm_oneline(rd->err);
    }
    return -1;
}

static int pm_oom(struct pm_rd *rd)
{
    return pm_fail(rd, "out of memory");
}

struct pm_reason {
    char text[200];
};

static herr_t pm_reason_walk(unsigned n, const H5E_error2_t *e, void *data)
{
    struct pm_reason *r = data;

    if (n == 0 && e->desc)
        snprintf(r->text, sizeof r->text, "%s", e->desc);
    return 0;
}

/* The innermost HDF5 error description ("truncated file: eof = ..."), which
 * says more than the API-level "unable to open file". */
static const char *pm_hdf5_reason(struct pm_reason *r)
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
static H5T_cset_t pm_cset(hid_t filetype)
{
    H5T_cset_t c = H5Tget_cset(filetype);

    return c == H5T_CSET_ASCII ? H5T_CSET_ASCII : H5T_CSET_UTF8;
}

static hid_t pm_vlen_str_type(H5T_cset_t cset)
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
static hid_t pm_fixed_str_type(size_t filesize, H5T_cset_t cset)
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

static int pm_mul(size_t a, size_t b, size_t *out)
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

static int pm_link_exists(struct pm_rd *rd, const char *name)
{
    return H5Lexists(rd->file, name, H5P_DEFAULT) > 0;
}

/* ------------------------------------------------------------------ open */

static int pm_open(struct pm_rd *rd)
{
    struct stat st;
    struct pm_reason why;
    htri_t is_hdf5;
    hid_t fapl;

    if (stat(rd->path, &st) != 0)
        return pm_fail(rd, "%s", strerror(errno));
    if (S_ISDIR(st.st_mode))
        return pm_fail(rd, "is a directory");
    pm_read_begin("the file's header"); /* read_guard.h: each object read is a step */
    is_hdf5 = H5Fis_hdf5(rd->path);
    if (is_hdf5 == 0)
        return pm_fail(rd, "not a perfmark file (not an HDF5 file)");

    fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (fapl < 0)
        return pm_fail(rd, "cannot set up HDF5 (%s)", pm_hdf5_reason(&why));
    /* STRONG: closing the file also closes anything an error path left open. */
    H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG);
    /* Shared file systems without flock must not stop a read-only reader. */
    H5Pset_file_locking(fapl, 1, 1);
#ifdef H5_HAVE_PARALLEL
    if (rd->mpio && H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL) < 0) {
        H5Pclose(fapl);
        return pm_fail(rd, "cannot set up MPI-IO (%s)", pm_hdf5_reason(&why));
    }
#endif
    rd->file = H5Fopen(rd->path, H5F_ACC_RDONLY, fapl);
    if (rd->file < 0)
        pm_hdf5_reason(&why); /* before the next call clears the error stack */
    H5Pclose(fapl);
    if (rd->file < 0) {
        if (is_hdf5 > 0)
            return pm_fail(rd, "damaged or truncated HDF5 file (%s)", why.text);
        return pm_fail(rd, "cannot open (%s)", why.text);
    }
    pm_read_begin("the root group /");
    rd->root = H5Gopen2(rd->file, "/", H5P_DEFAULT);
    if (rd->root < 0)
        return pm_fail(rd, "cannot open the root group (%s)", pm_hdf5_reason(&why));
    return 0;
}

/* ------------------------------------------------------------ attributes */

/* 1 and an open attribute if it exists, 0 if not, -1 on error. */
static int pm_attr_open(struct pm_rd *rd, const char *name, hid_t *attr)
{
    htri_t ex;

    pm_read_begin("attribute '%s' of /", name);
    ex = H5Aexists(rd->root, name);

    if (ex < 0)
        return pm_fail(rd, "cannot look up attribute %s", name);
    if (ex == 0)
        return 0;
    *attr = H5Aopen(rd->root, name, H5P_DEFAULT);
    if (*attr < 0)
        return pm_fail(rd, "cannot open attribute %s", name);
    return 1;
}

static int pm_attr_single(hid_t attr)
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
static int pm_attr_read_int(hid_t attr, hid_t memtype, void *out)
{
    hid_t type = H5Aget_type(attr);
    int ok = type >= 0 && H5Tget_class(type) == H5T_INTEGER && pm_attr_single(attr) &&
             H5Aread(attr, memtype, out) >= 0;

    if (type >= 0)
        H5Tclose(type);
    return ok ? 0 : -1;
}

/* 1 if integer attribute `name` was read, 0 if absent, -1 if unreadable. */
static int pm_attr_int(struct pm_rd *rd, const char *name, hid_t memtype, void *out)
{
    hid_t attr = -1;
    int rc = pm_attr_open(rd, name, &attr);

    if (rc <= 0)
        return rc;
    rc = pm_attr_read_int(attr, memtype, out);
    H5Aclose(attr);
    return rc == 0 ? 1 : pm_fail(rd, "attribute %s is not an integer", name);
}

static int pm_attr_read_vlen(hid_t attr, H5T_cset_t cset, char **out)
{
    hid_t mem = pm_vlen_str_type(cset), space = H5Aget_space(attr);
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
    hid_t mem = pm_fixed_str_type(size, cset);
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
static int pm_attr_str(struct pm_rd *rd, const char *name, char **out)
{
    hid_t attr = -1, type;
    int rc = pm_attr_open(rd, name, &attr);

    *out = NULL;
    if (rc < 0)
        return -1;
    if (rc == 0) {
        *out = strdup("");
        return *out ? 0 : pm_oom(rd);
    }
    rc = -1;
    type = H5Aget_type(attr);
    if (type >= 0 && H5Tget_class(type) == H5T_STRING && pm_attr_single(attr)) {
        if (H5Tis_variable_str(type) > 0)
            rc = pm_attr_read_vlen(attr, pm_cset(type), out);
        else
            rc = pm_attr_read_fixed(attr, H5Tget_size(type), pm_cset(type), out);
    }
    if (type >= 0)
        H5Tclose(type);
    H5Aclose(attr);
    if (rc == -2)
        return pm_oom(rd);
    return rc == 0 ? 0 : pm_fail(rd, "attribute %s is not a string", name);
}

static int pm_load_version(struct pm_rd *rd, struct pm_file *d)
{
    hid_t attr = -1;
    int64_t v = 0;
    int rc = pm_attr_open(rd, pm_schema_name(PM_S_SCHEMA_VERSION), &attr);

    if (rc < 0)
        return -1;
    if (rc == 0)
        return pm_fail(rd, "not a perfmark file (no %s attribute)", pm_schema_name(PM_S_SCHEMA_VERSION));
    rc = pm_attr_read_int(attr, H5T_NATIVE_INT64, &v);
    H5Aclose(attr);
    if (rc < 0)
        return pm_fail(rd, "not a perfmark file (schema_version is not an integer)");
    if (v > PM_SCHEMA_VERSION)
        return pm_fail(rd, "written by a newer perfmark (schema %lld); this reader knows %d",
                       (long long)v, PM_SCHEMA_VERSION);
    if (v < 1)
        return pm_fail(rd, "not a perfmark file (schema_version %lld)", (long long)v);
    d->schema_version = (int32_t)v;
    return 0;
}

static int pm_load_attrs(struct pm_rd *rd, struct pm_file *d)
{
    static const struct {
        enum pm_schema_id id;
        size_t off;
    } strs[] = {
        {PM_S_PERFMARK_VERSION, offsetof(struct pm_file, perfmark_version)},
        {PM_S_COMMAND, offsetof(struct pm_file, command)},
        {PM_S_HOST, offsetof(struct pm_file, host)},
        {PM_S_START_TIME, offsetof(struct pm_file, start_time)},
        {PM_S_CLOCK, offsetof(struct pm_file, clock)},
        {PM_S_EVENTS_REQUESTED, offsetof(struct pm_file, events_requested)},
        {PM_S_EVENTS_MEASURED, offsetof(struct pm_file, events_measured)},
        {PM_S_EVENT_GROUP, offsetof(struct pm_file, event_group)},
        {PM_S_FALLBACK, offsetof(struct pm_file, fallback)},
        {PM_S_FALLBACK_CAUSE, offsetof(struct pm_file, fallback_cause)},
        {PM_S_CPU, offsetof(struct pm_file, cpu)},
        {PM_S_TOPDOWN_METHOD, offsetof(struct pm_file, topdown_method)},
        {PM_S_CPU_MODEL, offsetof(struct pm_file, cpu_model)},
        {PM_S_THROTTLE, offsetof(struct pm_file, throttle)},
    };
    int64_t groups = -1;
    int rc;

    for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++)
        if (pm_attr_str(rd, pm_schema_name(strs[i].id), (char **)((char *)d + strs[i].off)) < 0)
            return -1;
    d->bind_cpu = -1;
    if (pm_attr_int(rd, pm_schema_name(PM_S_PID), H5T_NATIVE_INT64, &d->pid) < 0 ||
        pm_attr_int(rd, pm_schema_name(PM_S_DURATION_NS), H5T_NATIVE_UINT64, &d->duration_ns) < 0 ||
        pm_attr_int(rd, pm_schema_name(PM_S_BIND_CPU), H5T_NATIVE_INT32, &d->bind_cpu) < 0 ||
        pm_attr_int(rd, pm_schema_name(PM_S_PARTIAL), H5T_NATIVE_UINT8, &d->partial) < 0 ||
        pm_attr_int(rd, pm_schema_name(PM_S_RANK), H5T_NATIVE_INT32, &d->rank) < 0 ||
        pm_attr_int(rd, pm_schema_name(PM_S_RANKS), H5T_NATIVE_INT32, &d->ranks) < 0 ||
        pm_attr_int(rd, pm_schema_name(PM_S_TOPDOWN_LEVELS), H5T_NATIVE_INT32, &d->topdown_levels) < 0)
        return -1;
    rc = pm_attr_int(rd, pm_schema_name(PM_S_KERNEL_GROUPS), H5T_NATIVE_INT64, &groups);
    if (rc < 0)
        return -1;
    if (rc == 0)
        return pm_fail(rd, "no %s attribute", pm_schema_name(PM_S_KERNEL_GROUPS));
    /* G sizes the [T,R,G] arrays: refuse nonsense before allocating. */
    if (groups < 0 || groups > 4096)
        return pm_fail(rd, "%s = %lld is out of range", pm_schema_name(PM_S_KERNEL_GROUPS),
                       (long long)groups);
    d->kernel_groups = (int32_t)groups;
    d->G = (size_t)groups;
    return 0;
}

/* ---------------------------------------------------------- int arrays */

static int pm_check_shape(struct pm_rd *rd, const char *name, const char *shape, hid_t space,
                          int ndims, hsize_t *dims)
{
    hsize_t fd[H5S_MAX_RANK];
    char got[96], want[96];
    int nd = H5Sget_simple_extent_ndims(space);
    int bad = 0;

    if (nd != ndims)
        return pm_fail(rd, "%s has %d dimensions, expected %d [%s]", name, nd < 0 ? 0 : nd, ndims,
                       shape);
    if (H5Sget_simple_extent_dims(space, fd, NULL) < 0)
        return pm_fail(rd, "cannot read the shape of %s", name);
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
    return pm_fail(rd, "%s has shape [%s], expected [%s] = [%s]", name, got, shape, want);
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
        return pm_fail(rd, "missing dataset %s", name);
    type = H5Dget_type(dset);
    space = H5Dget_space(dset);
    if (type < 0 || space < 0 || H5Tget_class(type) != cls) {
        pm_fail(rd, "%s is not %s array", name, cls == H5T_FLOAT ? "a floating-point" : "an integer");
        goto done;
    }
    if (pm_check_shape(rd, name, shape, space, ndims, dims) < 0)
        goto done;
    for (int i = 0; i < ndims; i++)
        if (pm_mul(n, (size_t)dims[i], &n) < 0) {
            pm_fail(rd, "%s is too large", name);
            goto done;
        }
    buf = calloc(n ? n : 1, elsize);
    if (!buf) {
        pm_oom(rd);
        goto done;
    }
    if (n > 0 && H5Dread(dset, memtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0) {
        pm_fail(rd, "cannot read %s (%s)", name, pm_hdf5_reason(&why));
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

    if (pm_link_exists(rd, name))
        return pm_read_array(rd, name, shape, ndims, dims, cls, memtype, elsize, out);
    for (int i = 0; i < ndims; i++)
        if (pm_mul(n, (size_t)dims[i], &n) < 0)
            return pm_fail(rd, "%s is too large", name);
    *out = calloc(n ? n : 1, elsize);
    return *out ? 0 : pm_oom(rd);
}



/* Dataset `id` of the schema, shape `dims` (PM_ANY entries are taken from
 * the file): name, shape, class and element type from the table; a row a
 * file may lack (DEFAULT) reads as zeros when absent. */
static int pm_read_dataset(struct pm_rd *rd, enum pm_schema_id id, hsize_t *dims, void **out)
{
    const char *name = pm_schema_path(id), *shape = pm_schema_dims(id);
    int nd = pm_schema_ndims(id);
    enum pm_schema_type t = pm_schema[id].type;
    H5T_class_t cls = t == PM_ST_F64 ? H5T_FLOAT : H5T_INTEGER;
    hid_t mem = t == PM_ST_F64   ? H5T_NATIVE_DOUBLE
                : t == PM_ST_U32 ? H5T_NATIVE_UINT32
                : t == PM_ST_I32 ? H5T_NATIVE_INT32
                                 : H5T_NATIVE_UINT64;
    size_t elsize = t == PM_ST_U32 || t == PM_ST_I32 ? 4 : 8;

    if (!pm_schema_needed(id))
        return pm_read_array_opt(rd, name, shape, nd, dims, cls, mem, elsize, out);
    return pm_read_array(rd, name, shape, nd, dims, cls, mem, elsize, out);
}

/* ------------------------------------------------------ compound tables */

enum pm_ftype { PM_STR, PM_I32, PM_U32, PM_I64, PM_U64, PM_U8 };

/* A compound member the reader wants: its name, type and whether a file
 * may lack it from the schema row, its place in the reader's struct. */
struct pm_field {
    enum pm_schema_id id;
    size_t off;
};

static enum pm_ftype pm_field_type(const struct pm_field *f)
{
    switch (pm_schema[f->id].type) {
    case PM_ST_I32: return PM_I32;
    case PM_ST_U32: return PM_U32;
    case PM_ST_I64: return PM_I64;
    case PM_ST_U64: return PM_U64;
    case PM_ST_U8: return PM_U8;
    default: return PM_STR; /* STR and STR64: both read as C strings */
    }
}

#define PM_EV(f) offsetof(struct pm_file_event, f)
static const struct pm_field pm_event_fields[] = {
    {PM_S_EVENTS_NAME, PM_EV(name)},
    {PM_S_EVENTS_PFM_NAME, PM_EV(pfm_name)},
    {PM_S_EVENTS_GROUP, PM_EV(group)},
    {PM_S_EVENTS_TYPE, PM_EV(type)},
    {PM_S_EVENTS_CONFIG, PM_EV(config)},
    {PM_S_EVENTS_CONFIG1, PM_EV(config1)},
    {PM_S_EVENTS_CONFIG2, PM_EV(config2)},
    {PM_S_EVENTS_EXCLUDE_USER, PM_EV(exclude_user)},
    {PM_S_EVENTS_EXCLUDE_KERNEL, PM_EV(exclude_kernel)},
};

#define PM_RG(f) offsetof(struct pm_file_region, f)
static const struct pm_field pm_region_fields[] = {
    {PM_S_REGIONS_NAME, PM_RG(name)},
    {PM_S_REGIONS_PARENT, PM_RG(parent)},
    {PM_S_REGIONS_DEPTH, PM_RG(depth)},
    {PM_S_REGIONS_KIND, PM_RG(kind)},
    {PM_S_REGIONS_PATH, PM_RG(path)},
};

#define PM_TH(f) offsetof(struct pm_file_thread, f)
static const struct pm_field pm_thread_fields[] = {
    {PM_S_THREADS_RANK, PM_TH(rank)},
    {PM_S_THREADS_THREAD, PM_TH(thread)},
    {PM_S_THREADS_PID, PM_TH(pid)},
    {PM_S_THREADS_TID, PM_TH(tid)},
    {PM_S_THREADS_HOST, PM_TH(host)},
    {PM_S_THREADS_CPU_FIRST, PM_TH(cpu_first)},
    {PM_S_THREADS_CPU_LAST, PM_TH(cpu_last)},
    {PM_S_THREADS_EXITED, PM_TH(exited)},
    {PM_S_THREADS_OPEN_AT_END, PM_TH(open_at_end)},
    {PM_S_THREADS_CORE_FIRST, PM_TH(core_first)},
    {PM_S_THREADS_CORE_LAST, PM_TH(core_last)},
    {PM_S_THREADS_PACKAGE_FIRST, PM_TH(package_first)},
    {PM_S_THREADS_PACKAGE_LAST, PM_TH(package_last)},
    {PM_S_THREADS_NUMA_FIRST, PM_TH(numa_first)},
    {PM_S_THREADS_NUMA_LAST, PM_TH(numa_last)},
    {PM_S_THREADS_BINDING, PM_TH(binding)},
};

#define PM_NFIELDS(a) (sizeof(a) / sizeof((a)[0]))

static hid_t pm_field_memtype(enum pm_ftype t, H5T_cset_t cset)
{
    switch (t) {
    case PM_STR: return pm_vlen_str_type(cset);
    case PM_I32: return H5Tcopy(H5T_NATIVE_INT32);
    case PM_U32: return H5Tcopy(H5T_NATIVE_UINT32);
    case PM_I64: return H5Tcopy(H5T_NATIVE_INT64);
    case PM_U64: return H5Tcopy(H5T_NATIVE_UINT64);
    case PM_U8: return H5Tcopy(H5T_NATIVE_UINT8);
    }
    return -1;
}

static int pm_member_ok(hid_t ftype, int idx, enum pm_ftype want)
{
    hid_t mt = H5Tget_member_type(ftype, (unsigned)idx);
    int ok;

    if (mt < 0)
        return 0;
    if (want == PM_STR)
        ok = H5Tget_class(mt) == H5T_STRING;
    else
        ok = H5Tget_class(mt) == H5T_INTEGER;
    H5Tclose(mt);
    return ok;
}

/* Size of a fixed-length string member, 0 if it is variable length (or
 * not a string). HDF5 cannot convert fixed-length strings to variable
 * length, so those members are read on their own (pm_read_fixed_member). */
static size_t pm_member_fixed_size(hid_t ftype, int idx)
{
    hid_t mt = H5Tget_member_type(ftype, (unsigned)idx);
    size_t size = 0;

    if (mt >= 0 && H5Tget_class(mt) == H5T_STRING && H5Tis_variable_str(mt) == 0)
        size = H5Tget_size(mt);
    if (mt >= 0)
        H5Tclose(mt);
    return size;
}

static H5T_cset_t pm_member_cset(hid_t ftype, int idx)
{
    hid_t mt = H5Tget_member_type(ftype, (unsigned)idx);
    H5T_cset_t c = H5T_CSET_UTF8;

    if (mt >= 0 && H5Tget_class(mt) == H5T_STRING)
        c = pm_cset(mt);
    if (mt >= 0)
        H5Tclose(mt);
    return c;
}

/* Memory compound type with the fields present in the file, matched by name:
 * missing optional fields stay zero / "" in the result. */
static hid_t pm_table_memtype(struct pm_rd *rd, const char *name, hid_t ftype,
                              const struct pm_field *f, size_t nf, size_t elsize)
{
    hid_t mtype = H5Tcreate(H5T_COMPOUND, elsize);

    if (mtype < 0) {
        pm_fail(rd, "cannot build a type for %s", name);
        return -1;
    }
    for (size_t i = 0; i < nf; i++) {
        int idx = H5Tget_member_index(ftype, pm_schema_name(f[i].id));
        hid_t ft;
        herr_t st;

        if (idx < 0) {
            if (!pm_schema_needed(f[i].id))
                continue;
            pm_fail(rd, "%s has no field '%s'", name, pm_schema_name(f[i].id));
            break;
        }
        if (!pm_member_ok(ftype, idx, pm_field_type(&f[i]))) {
            pm_fail(rd, "%s field '%s' has an unexpected type", name, pm_schema_name(f[i].id));
            break;
        }
        if (pm_member_fixed_size(ftype, idx))
            continue;  /* read separately */
        ft = pm_field_memtype(pm_field_type(&f[i]), pm_member_cset(ftype, idx));
        st = ft >= 0 ? H5Tinsert(mtype, pm_schema_name(f[i].id), f[i].off, ft) : -1;
        if (ft >= 0)
            H5Tclose(ft);
        if (st < 0) {
            pm_fail(rd, "cannot build a type for %s", name);
            break;
        }
    }
    if (rd->failed) {
        H5Tclose(mtype);
        return -1;
    }
    return mtype;
}

static void pm_free_table(void *tab, size_t n, const struct pm_field *f, size_t nf, size_t elsize)
{
    if (!tab)
        return;
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < nf; k++)
            if (pm_field_type(&f[k]) == PM_STR)
                free(*(char **)((char *)tab + i * elsize + f[k].off));
    free(tab);
}

/* Copy `raw` (as read, strings owned by HDF5) into `tab` (n rows), with
 * strings of our own, so the HDF5 memory can be reclaimed at once. Returns
 * 0, or -1 (the rows' strings are then NULL or ours: pm_free_table). */
static int pm_own_rows(char *tab, const void *raw, size_t n, const struct pm_field *f, size_t nf,
                       size_t elsize)
{
    memcpy(tab, raw, n * elsize);
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < nf; k++)
            if (pm_field_type(&f[k]) == PM_STR)
                *(char **)(tab + i * elsize + f[k].off) = NULL;
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < nf; k++) {
            const char *s;
            char *copy;

            if (pm_field_type(&f[k]) != PM_STR)
                continue;
            s = *(char *const *)((const char *)raw + i * elsize + f[k].off);
            copy = strdup(s ? s : "");
            if (!copy)
                return -1;
            *(char **)(tab + i * elsize + f[k].off) = copy;
        }
    return 0;
}

/* Replace the (empty) string field `fld` of every row of `tab` with the
 * fixed-length member of the same name, read on its own. */
static int pm_read_fixed_member(hid_t dset, hid_t ftype, const struct pm_field *fld, size_t fixed,
                                void *tab, size_t n, size_t elsize, hid_t mspace, hid_t fspace)
{
    int idx = H5Tget_member_index(ftype, pm_schema_name(fld->id));
    hid_t str = H5Tcopy(H5T_C_S1), mtype = H5Tcreate(H5T_COMPOUND, fixed);
    char *buf = calloc(n ? n : 1, fixed);
    int rc = -1;

    if (idx >= 0 && str >= 0 && mtype >= 0 && buf && H5Tset_size(str, fixed) >= 0 &&
        H5Tset_cset(str, pm_member_cset(ftype, idx)) >= 0 &&
        H5Tinsert(mtype, pm_schema_name(fld->id), 0, str) >= 0 &&
        H5Dread(dset, mtype, mspace, fspace, H5P_DEFAULT, buf) >= 0) {
        rc = 0;
        for (size_t i = 0; i < n && rc == 0; i++) {
            char **slot = (char **)((char *)tab + i * elsize + fld->off);
            char *copy = strndup(buf + i * fixed, fixed);
            if (!copy) {
                rc = -1;
                break;
            }
            free(*slot);
            *slot = copy;
        }
    }
    free(buf);
    if (mtype >= 0)
        H5Tclose(mtype);
    if (str >= 0)
        H5Tclose(str);
    return rc;
}

/* Rows [i0, i0 + cnt) of the open compound table `dset` into `tab`, with
 * strings of our own (fixed-length members included), through `raw` (room
 * for cnt rows). Returns 0, or -1 with the message in rd (the rows of `tab`
 * are then safe for pm_free_table). */
static int pm_table_rows(struct pm_rd *rd, const char *name, hid_t dset, hid_t ftype, hid_t space,
                         hid_t mtype, const struct pm_field *f, size_t nf, size_t elsize,
                         size_t i0, size_t cnt, void *raw, char *tab)
{
    struct pm_reason why;
    hsize_t start[1] = {i0}, count[1] = {cnt};
    hid_t mspace = H5Screate_simple(1, count, NULL);
    int ok;

    memset(tab, 0, cnt * elsize);
    pm_read_begin("rows %zu-%zu of dataset '%s'", i0, i0 + cnt - 1, name);
    if (mspace < 0 || H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, count, NULL) < 0 ||
        H5Dread(dset, mtype, mspace, space, H5P_DEFAULT, raw) < 0) {
        if (mspace >= 0)
            H5Sclose(mspace);
        return pm_fail(rd, "cannot read %s (%s)", name, pm_hdf5_reason(&why));
    }
    ok = pm_own_rows(tab, raw, cnt, f, nf, elsize) == 0;
    H5Dvlen_reclaim(mtype, mspace, H5P_DEFAULT, raw);
    for (size_t k = 0; ok && k < nf; k++) {
        int idx = pm_field_type(&f[k]) == PM_STR ? H5Tget_member_index(ftype, pm_schema_name(f[k].id)) : -1;
        size_t fixed = idx >= 0 ? pm_member_fixed_size(ftype, idx) : 0;
        if (fixed && pm_read_fixed_member(dset, ftype, &f[k], fixed, tab, cnt, elsize, mspace,
                                          space) < 0) {
            H5Sclose(mspace);
            return pm_fail(rd, "cannot read %s field '%s' (%s)", name, pm_schema_name(f[k].id),
                           pm_hdf5_reason(&why));
        }
    }
    H5Sclose(mspace);
    return ok ? 0 : pm_oom(rd);
}

/* Open compound table `name` of the schema's shape and its memory type. */
static int pm_table_open(struct pm_rd *rd, const char *name, const struct pm_field *f, size_t nf,
                         size_t elsize, hid_t *dset, hid_t *ftype, hid_t *space, hid_t *mtype,
                         size_t *n)
{
    hsize_t dims[1] = {PM_ANY};

    *ftype = *space = *mtype = -1;
    pm_read_begin("dataset '%s'", name);
    *dset = H5Dopen2(rd->file, name, H5P_DEFAULT);
    if (*dset < 0)
        return pm_fail(rd, "missing dataset %s", name);
    *ftype = H5Dget_type(*dset);
    *space = H5Dget_space(*dset);
    if (*ftype < 0 || *space < 0 || H5Tget_class(*ftype) != H5T_COMPOUND)
        return pm_fail(rd, "%s is not a compound table", name);
    if (pm_check_shape(rd, name, "rows", *space, 1, dims) < 0)
        return -1;
    *mtype = pm_table_memtype(rd, name, *ftype, f, nf, elsize);
    if (*mtype < 0)
        return -1;
    *n = (size_t)dims[0];
    return 0;
}

static void pm_table_close(hid_t dset, hid_t ftype, hid_t space, hid_t mtype)
{
    if (mtype >= 0)
        H5Tclose(mtype);
    if (space >= 0)
        H5Sclose(space);
    if (ftype >= 0)
        H5Tclose(ftype);
    if (dset >= 0)
        H5Dclose(dset);
}

/* Read the 1-D compound dataset `name` into a new array of `elsize` structs,
 * a block of rows at a time: HDF5's copies of the strings (one allocation
 * each) are reclaimed before the next block, so a table of many threads
 * does not hold them all at once. */
static int pm_read_table(struct pm_rd *rd, const char *name, const struct pm_field *f, size_t nf,
                         size_t elsize, void **out, size_t *count)
{
    hid_t dset, ftype, space, mtype;
    void *raw = NULL;
    char *tab = NULL;
    size_t n = 0, block = PM_TABLE_BLOCK;
    int rc = -1;

    *out = NULL;
    *count = 0;
    if (pm_table_open(rd, name, f, nf, elsize, &dset, &ftype, &space, &mtype, &n) < 0)
        goto done;
    block = n < block ? n : block;
    if (n > SIZE_MAX / elsize || !(raw = calloc(block ? block : 1, elsize)) ||
        !(tab = calloc(n ? n : 1, elsize))) {
        pm_oom(rd);
        goto done;
    }
    for (size_t i0 = 0; i0 < n; i0 += block) {
        size_t cnt = n - i0 < block ? n - i0 : block;

        if (pm_table_rows(rd, name, dset, ftype, space, mtype, f, nf, elsize, i0, cnt, raw,
                          tab + i0 * elsize) < 0) {
            pm_free_table(tab, n, f, nf, elsize);
            tab = NULL;
            goto done;
        }
    }
    *out = tab;
    *count = n;
    rc = 0;
done:
    free(raw);
    pm_table_close(dset, ftype, space, mtype);
    return rc;
}

/* Rows [t0, t0 + nt) of /threads into b->rows (b->cap rows of room). */
static int pm_thread_block(struct pm_rd *rd, struct pm_thread_rows *b, size_t t0, size_t nt)
{
    hid_t dset, ftype, space, mtype;
    size_t n = 0;
    void *raw = calloc(nt ? nt : 1, sizeof(struct pm_file_thread));
    int rc = -1;

    for (size_t i = 0; i < b->nt; i++) {
        free(b->own[i].host);
        free(b->own[i].binding);
    }
    memset(b->own, 0, b->cap * sizeof *b->own);
    b->t0 = t0;
    b->nt = 0;
    if (!raw)
        return pm_oom(rd);
    if (pm_table_open(rd, pm_schema_path(PM_S_THREADS), pm_thread_fields, PM_NFIELDS(pm_thread_fields),
                      sizeof(struct pm_file_thread), &dset, &ftype, &space, &mtype, &n) == 0) {
        if (t0 + nt > n)
            pm_fail(rd, "%s has %zu rows, not %zu", pm_schema_path(PM_S_THREADS), n, t0 + nt);
        else if (pm_table_rows(rd, pm_schema_path(PM_S_THREADS), dset, ftype, space, mtype, pm_thread_fields,
                               PM_NFIELDS(pm_thread_fields), sizeof(struct pm_file_thread), t0,
                               nt, raw, (char *)b->own) == 0)
            rc = 0;
    }
    b->nt = nt; /* rows are zeros or ours either way */
    b->rows = b->own;
    pm_table_close(dset, ftype, space, mtype);
    free(raw);
    return rc;
}

/* pm_file_open: /threads read and checked a block of rows at a time, only
 * (rank, thread) kept; renderers re-read the rows they print in blocks
 * (pm_file_thread_rows), so no part of the table is held for the file. */
static int pm_scan_threads(struct pm_rd *rd, struct pm_file *d)
{
    hid_t dset, ftype, space, mtype;
    size_t n = 0, block = PM_TABLE_BLOCK;
    struct pm_thread_rows b = {0};
    void *raw = NULL;
    int rc = -1;

    if (pm_table_open(rd, pm_schema_path(PM_S_THREADS), pm_thread_fields, PM_NFIELDS(pm_thread_fields),
                      sizeof(struct pm_file_thread), &dset, &ftype, &space, &mtype, &n) < 0)
        goto done;
    block = n < block ? n : block;
    b.cap = block;
    if (!(d->tids = calloc(n ? n : 1, sizeof *d->tids)) ||
        !(b.own = calloc(block ? block : 1, sizeof *b.own)) ||
        !(raw = calloc(block ? block : 1, sizeof *b.own))) {
        pm_oom(rd);
        goto done;
    }
    for (size_t i0 = 0; i0 < n; i0 += block) {
        size_t cnt = n - i0 < block ? n - i0 : block;
        int bad = pm_table_rows(rd, pm_schema_path(PM_S_THREADS), dset, ftype, space, mtype, pm_thread_fields,
                                PM_NFIELDS(pm_thread_fields), sizeof(struct pm_file_thread), i0,
                                cnt, raw, (char *)b.own) < 0;

        for (size_t i = 0; i < cnt; i++) {
            d->tids[i0 + i].rank = b.own[i].rank;
            d->tids[i0 + i].thread = b.own[i].thread;
            free(b.own[i].host);
            free(b.own[i].binding);
            b.own[i].host = b.own[i].binding = NULL;
        }
        if (bad)
            goto done;
    }
    d->T = n;
    rc = 0;
done:
    free(raw);
    free(b.own);
    pm_table_close(dset, ftype, space, mtype);
    return rc;
}

/* ------------------------------------------------------- string arrays */

static int pm_read_vlen_strings(hid_t dset, hid_t space, size_t n, H5T_cset_t cset, char **out)
{
    hid_t mem = pm_vlen_str_type(cset);
    char **raw = calloc(n ? n : 1, sizeof *raw);
    int rc = -1;

    if (mem >= 0 && raw && H5Dread(dset, mem, H5S_ALL, H5S_ALL, H5P_DEFAULT, raw) >= 0) {
        rc = 0;
        for (size_t i = 0; i < n && rc == 0; i++)
            if (!(out[i] = strdup(raw[i] ? raw[i] : "")))
                rc = -2;
        H5Dvlen_reclaim(mem, space, H5P_DEFAULT, raw);
    } else if (!raw) {
        rc = -2;
    }
    free(raw);
    if (mem >= 0)
        H5Tclose(mem);
    return rc;
}

static int pm_read_fixed_strings(hid_t dset, size_t size, size_t n, H5T_cset_t cset,
                                 char **out)
{
    hid_t mem = pm_fixed_str_type(size, cset);
    char *raw = NULL;
    int rc = -1;

    if (size + 1 <= SIZE_MAX / (n ? n : 1))
        raw = calloc(n ? n : 1, size + 1);
    if (!raw)
        rc = -2;
    else if (mem >= 0 && H5Dread(dset, mem, H5S_ALL, H5S_ALL, H5P_DEFAULT, raw) >= 0) {
        rc = 0;
        for (size_t i = 0; i < n && rc == 0; i++) {
            raw[i * (size + 1) + size] = '\0';
            if (!(out[i] = strdup(raw + i * (size + 1))))
                rc = -2;
        }
    }
    free(raw);
    if (mem >= 0)
        H5Tclose(mem);
    return rc;
}

/* 1-D string dataset (variable or fixed length) into a new array of strings. */
static int pm_read_strings(struct pm_rd *rd, enum pm_schema_id id, char ***out, size_t *count)
{
    const char *name = pm_schema_path(id);
    hid_t dset, type = -1, space = -1;
    hsize_t dims[1] = {PM_ANY};
    size_t n = 0;
    char **strs = NULL;
    int rc = -1;

    *out = NULL;
    *count = 0;
    pm_read_begin("dataset '%s'", name);
    dset = H5Dopen2(rd->file, name, H5P_DEFAULT);
    if (dset < 0)
        return pm_fail(rd, "cannot open %s", name);
    type = H5Dget_type(dset);
    space = H5Dget_space(dset);
    if (type < 0 || space < 0 || H5Tget_class(type) != H5T_STRING) {
        pm_fail(rd, "%s is not an array of strings", name);
        goto done;
    }
    if (pm_check_shape(rd, name, pm_schema_dims(id), space, 1, dims) < 0)
        goto done;
    n = (size_t)dims[0];
    if (n > SIZE_MAX / sizeof *strs || !(strs = calloc(n ? n : 1, sizeof *strs))) {
        pm_oom(rd);
        goto done;
    }
    if (n > 0) {
        if (H5Tis_variable_str(type) > 0)
            rc = pm_read_vlen_strings(dset, space, n, pm_cset(type), strs);
        else
            rc = pm_read_fixed_strings(dset, H5Tget_size(type), n, pm_cset(type), strs);
        if (rc == -2)
            pm_oom(rd);
        else if (rc < 0)
            pm_fail(rd, "cannot read %s", name);
        if (rc < 0)
            goto done;
    }
    *out = strs;
    *count = n;
    strs = NULL;
    rc = 0;
done:
    if (strs)
        for (size_t i = 0; i < n; i++)
            free(strs[i]);
    free(strs);
    if (space >= 0)
        H5Sclose(space);
    if (type >= 0)
        H5Tclose(type);
    H5Dclose(dset);
    return rc;
}

/* ------------------------------------------------------------- loading */

/* The report walks the tree through `parent`; a parent after its child would
 * make that walk (and the depth) meaningless, so such a file is refused. */
static int pm_check_regions(struct pm_rd *rd, struct pm_file *d)
{
    for (size_t r = 0; r < d->R; r++) {
        const struct pm_file_region *g = &d->regions[r];
        int32_t want;

        if (g->parent < -1 || (g->parent >= 0 && (size_t)g->parent >= r))
            return pm_fail(rd, "%s row %zu has parent %d, which does not come before it",
                           pm_schema_path(PM_S_REGIONS), r,
                           (int)g->parent);
        want = g->parent < 0 ? 0 : d->regions[g->parent].depth + 1;
        if (g->depth != want)
            return pm_fail(rd, "%s row %zu has depth %d, expected %d", pm_schema_path(PM_S_REGIONS), r, (int)g->depth,
                           (int)want);
    }
    return 0;
}

static int pm_check_events(struct pm_rd *rd, struct pm_file *d)
{
    for (size_t e = 0; e < d->E; e++)
        if (d->events[e].group < 0 || (size_t)d->events[e].group >= d->G)
            return pm_fail(rd, "%s row %zu has group %d, but %s is %zu",
                           pm_schema_path(PM_S_EVENTS), e, (int)d->events[e].group,
                           pm_schema_name(PM_S_KERNEL_GROUPS), d->G);
    return 0;
}

static int pm_load_tables(struct pm_rd *rd, struct pm_file *d, int stream)
{
    if (pm_read_table(rd, pm_schema_path(PM_S_EVENTS), pm_event_fields, PM_NFIELDS(pm_event_fields),
                      sizeof(struct pm_file_event), (void **)&d->events, &d->E) < 0 ||
        pm_read_table(rd, pm_schema_path(PM_S_REGIONS), pm_region_fields, PM_NFIELDS(pm_region_fields),
                      sizeof(struct pm_file_region), (void **)&d->regions, &d->R) < 0)
        return -1;
    if (stream) {
        if (pm_scan_threads(rd, d) < 0)
            return -1;
    } else {
        if (pm_read_table(rd, pm_schema_path(PM_S_THREADS), pm_thread_fields, PM_NFIELDS(pm_thread_fields),
                          sizeof(struct pm_file_thread), (void **)&d->threads, &d->T) < 0)
            return -1;
        if (!(d->tids = calloc(d->T ? d->T : 1, sizeof *d->tids)))
            return pm_oom(rd);
        for (size_t t = 0; t < d->T; t++) {
            d->tids[t].rank = d->threads[t].rank;
            d->tids[t].thread = d->threads[t].thread;
        }
    }
    if (pm_check_events(rd, d) < 0 || pm_check_regions(rd, d) < 0)
        return -1;
    /* Placement came with PERFMARK_PIN: older files lack it (their zeros
     * would read as core 0). */
    pm_read_begin("dataset '%s'", pm_schema_path(PM_S_THREADS));
    hid_t dset = H5Dopen2(rd->file, pm_schema_path(PM_S_THREADS), H5P_DEFAULT);
    if (dset >= 0) {
        hid_t type = H5Dget_type(dset);
        d->has_placement = type >= 0 && H5Tget_member_index(type, pm_schema_name(PM_S_THREADS_BINDING)) >= 0 &&
                           H5Tget_member_index(type, pm_schema_name(PM_S_THREADS_NUMA_LAST)) >= 0;
        if (type >= 0)
            H5Tclose(type);
        H5Dclose(dset);
    }
    return 0;
}

/* Files since the throttle: /region/reads, timer_visits, timed_visits,
 * throttled_from (any one of them). */
static int pm_has_visit_data(struct pm_rd *rd)
{
    static const enum pm_schema_id ids[] = {PM_S_REGION_READS, PM_S_REGION_TIMER_VISITS,
                                            PM_S_REGION_TIMED_VISITS, PM_S_REGION_THROTTLED_FROM};
    int any = 0;

    for (size_t i = 0; i < sizeof ids / sizeof *ids; i++)
        any |= pm_link_exists(rd, pm_schema_path(ids[i]));
    return any;
}

static int pm_load_cells(struct pm_rd *rd, struct pm_file *d)
{
    hsize_t tr[2] = {d->T, d->R};
    hsize_t tre[3] = {d->T, d->R, d->E};
    hsize_t trg[3] = {d->T, d->R, d->G};

    if (pm_read_dataset(rd, PM_S_REGION_VISITS, tr, (void **)&d->visits) < 0 ||
        pm_read_dataset(rd, PM_S_REGION_WALL_NS, tr, (void **)&d->wall_ns) < 0 ||
        pm_read_dataset(rd, PM_S_REGION_FLAGS, tr, (void **)&d->flags) < 0 ||
        pm_read_dataset(rd, PM_S_REGION_COUNTS, tre, (void **)&d->counts) < 0 ||
        pm_read_dataset(rd, PM_S_REGION_ENABLED_NS, trg, (void **)&d->enabled_ns) < 0 ||
        pm_read_dataset(rd, PM_S_REGION_RUNNING_NS, trg, (void **)&d->running_ns) < 0 ||
        pm_read_dataset(rd, PM_S_REGION_BYTES, tr, (void **)&d->bytes) < 0 ||
        pm_read_dataset(rd, PM_S_REGION_BYTES_UNKNOWN, tr, (void **)&d->bytes_unknown) < 0 ||
        pm_read_dataset(rd, PM_S_REGION_READS, tr, (void **)&d->reads) < 0 ||
        pm_read_dataset(rd, PM_S_REGION_TIMER_VISITS, tr, (void **)&d->timer_visits) < 0 ||
        pm_read_dataset(rd, PM_S_REGION_THROTTLED_FROM, tr, (void **)&d->throttled_from) < 0)
        return -1;
    /* absent: every visit was timed (pm_file_rows gives visits) */
    if (pm_link_exists(rd, pm_schema_path(PM_S_REGION_TIMED_VISITS)) &&
        pm_read_dataset(rd, PM_S_REGION_TIMED_VISITS, tr, (void **)&d->timed_visits) < 0)
        return -1;
    d->has_visit_data = pm_has_visit_data(rd);
    return 0;
}

static int pm_open_totals(struct pm_rd *rd, struct pm_file *d);

static int pm_load_thread_totals(struct pm_rd *rd, struct pm_file *d)
{
    hsize_t t[1] = {d->T};
    hsize_t te[2] = {d->T, d->E};
    hsize_t tg[2] = {d->T, d->G};

    if (d->stream)
        return pm_open_totals(rd, d);
    if (pm_read_dataset(rd, PM_S_THREAD_WALL_NS, t, (void **)&d->thread_wall_ns) < 0 ||
        pm_read_dataset(rd, PM_S_THREAD_COUNTS, te, (void **)&d->thread_counts) < 0 ||
        pm_read_dataset(rd, PM_S_THREAD_ENABLED_NS, tg, (void **)&d->thread_enabled_ns) < 0 ||
        pm_read_dataset(rd, PM_S_THREAD_RUNNING_NS, tg, (void **)&d->thread_running_ns) < 0 ||
        pm_read_dataset(rd, PM_S_THREAD_FLAGS, t, (void **)&d->thread_flags) < 0 ||
        pm_read_dataset(rd, PM_S_THREAD_READS, t, (void **)&d->thread_reads) < 0 ||
        pm_read_dataset(rd, PM_S_THREAD_READ_COST_NS, t, (void **)&d->thread_read_cost_ns) < 0)
        return -1;
    d->has_read_cost = pm_link_exists(rd, pm_schema_path(PM_S_THREAD_READ_COST_NS));
    return 0;
}

/* /rank is optional: absent, or without counts, means zero rows. */
static int pm_load_rank(struct pm_rd *rd, struct pm_file *d)
{
    hsize_t ne[2] = {PM_ANY, d->E};
    hsize_t ng[2];

    if (!pm_link_exists(rd, pm_schema_path(PM_S_RANKGRP)) ||
        !pm_link_exists(rd, pm_schema_path(PM_S_RANK_COUNTS)))
        return 0;
    if (pm_read_dataset(rd, PM_S_RANK_COUNTS, ne, (void **)&d->rank_counts) < 0)
        return -1;
    d->N = (size_t)ne[0];
    ng[0] = d->N;
    ng[1] = d->G;
    if (pm_read_dataset(rd, PM_S_RANK_ENABLED_NS, ng, (void **)&d->rank_enabled_ns) < 0 ||
        pm_read_dataset(rd, PM_S_RANK_RUNNING_NS, ng, (void **)&d->rank_running_ns) < 0)
        return -1;
    return 0;
}

static int pm_load_messages(struct pm_rd *rd, struct pm_file *d)
{
    if (!pm_link_exists(rd, pm_schema_path(PM_S_MESSAGES)))
        return 0;
    return pm_read_strings(rd, PM_S_MESSAGES, &d->messages, &d->M);
}

/* Some tools write paths only for display; rebuild it if the field is absent
 * so every consumer can rely on it. */
static int pm_fill_paths(struct pm_rd *rd, struct pm_file *d)
{
    for (size_t r = 0; r < d->R; r++) {
        struct pm_file_region *g = &d->regions[r];
        const char *up;
        char *p;
        size_t n;

        /* only an empty top-level name legitimately has an empty path */
        if (g->path[0] != '\0' || (g->parent < 0 && g->name[0] == '\0'))
            continue;
        up = g->parent < 0 ? NULL : d->regions[g->parent].path;
        n = (up ? strlen(up) + 1 : 0) + strlen(g->name) + 1;
        if (!(p = malloc(n)))
            return pm_oom(rd);
        snprintf(p, n, "%s%s%s", up ? up : "", up ? "/" : "", g->name);
        free(g->path);
        g->path = p;
    }
    return 0;
}

/* -------------------------------------------------------------- flags */

static const struct {
    uint32_t bit;
    const char *name;
} pm_builtin_flags[] = {
    {PM_FILE_FLAG_MULTIPLEXED, "MULTIPLEXED"},
    {PM_FILE_FLAG_NOT_COUNTED, "NOT_COUNTED"},
    {PM_FILE_FLAG_LOST_GENERATION, "LOST_GENERATION"},
    {PM_FILE_FLAG_MIGRATED, "MIGRATED"},
    {PM_FILE_FLAG_UNBALANCED, "UNBALANCED"},
    {PM_FILE_FLAG_SHORT, "SHORT"},
    {PM_FILE_FLAG_PARTIAL, "PARTIAL"},
};

static int pm_flag_add(struct pm_file *d, uint32_t bit, const char *name)
{
    struct pm_file_flagname *grown;
    char *copy;

    for (size_t i = 0; i < d->nflagnames; i++)
        if (d->flagnames[i].bit == bit)
            return 0;
    grown = realloc(d->flagnames, (d->nflagnames + 1) * sizeof *grown);
    if (!grown)
        return -1;
    d->flagnames = grown;
    if (!(copy = strdup(name)))
        return -1;
    d->flagnames[d->nflagnames].bit = bit;
    d->flagnames[d->nflagnames].name = copy;
    d->nflagnames++;
    return 0;
}

struct pm_flagscan {
    struct pm_file *d;
    int oom;
};

/* A flag bit newer than this reader still gets its name from the file. */
static herr_t pm_flag_attr(hid_t loc, const char *name, const H5A_info_t *info, void *op)
{
    struct pm_flagscan *scan = op;
    hid_t attr, type;
    uint64_t v = 0;

    (void)info;
    pm_read_begin("attribute '%s' of /region/flags", name);
    attr = H5Aopen(loc, name, H5P_DEFAULT);
    type = attr >= 0 ? H5Aget_type(attr) : -1;
    if (type >= 0 && H5Tget_class(type) == H5T_INTEGER && pm_attr_single(attr) &&
        H5Aread(attr, H5T_NATIVE_UINT64, &v) >= 0 && v != 0 && (v & (v - 1)) == 0 &&
        v <= 0x80000000u && pm_flag_add(scan->d, (uint32_t)v, name) < 0)
        scan->oom = 1;
    if (type >= 0)
        H5Tclose(type);
    if (attr >= 0)
        H5Aclose(attr);
    return 0;
}

static int pm_load_flagnames(struct pm_rd *rd, struct pm_file *d)
{
    struct pm_flagscan scan = {d, 0};
    hid_t dset;

    for (size_t i = 0; i < sizeof pm_builtin_flags / sizeof pm_builtin_flags[0]; i++)
        if (pm_flag_add(d, pm_builtin_flags[i].bit, pm_builtin_flags[i].name) < 0)
            return pm_oom(rd);
    pm_read_begin("dataset '/region/flags'");
    dset = H5Dopen2(rd->file, pm_schema_path(PM_S_REGION_FLAGS), H5P_DEFAULT);
    if (dset >= 0) {
        H5Aiterate2(dset, H5_INDEX_NAME, H5_ITER_INC, NULL, pm_flag_attr, &scan);
        H5Dclose(dset);
    }
    if (scan.oom)
        return pm_oom(rd);
    for (size_t i = 0; i < d->nflagnames; i++) {
        const struct pm_file_flagname *f = &d->flagnames[i];

        if (f->bit == PM_FILE_FLAG_TIMER_ONLY && strcmp(f->name, "TIMER_ONLY") == 0)
            d->flag_timer_only = f->bit;
        if (f->bit == PM_FILE_FLAG_THROTTLED && strcmp(f->name, "THROTTLED") == 0)
            d->flag_throttled = f->bit;
        if (f->bit == PM_FILE_FLAG_OVERHEAD && strcmp(f->name, "OVERHEAD") == 0)
            d->flag_overhead = f->bit;
    }
    /* insertion sort by bit: a handful of entries */
    for (size_t i = 1; i < d->nflagnames; i++)
        for (size_t k = i; k > 0 && d->flagnames[k - 1].bit > d->flagnames[k].bit; k--) {
            struct pm_file_flagname tmp = d->flagnames[k];
            d->flagnames[k] = d->flagnames[k - 1];
            d->flagnames[k - 1] = tmp;
        }
    return 0;
}

/* -------------------------------------------------------------- public */

/* The thread rows of one chunk of /region/counts, the largest cell array:
 * the report reads and aggregates whole multiples of it (0: not chunked). */
static size_t pm_chunk_rows(hid_t file)
{
    hid_t dset, dcpl;
    hsize_t dims[H5S_MAX_RANK];
    size_t rows = 0;

    pm_read_begin("dataset '%s'", pm_schema_path(PM_S_REGION_COUNTS));
    dset = H5Dopen2(file, pm_schema_path(PM_S_REGION_COUNTS), H5P_DEFAULT);
    dcpl = dset >= 0 ? H5Dget_create_plist(dset) : -1;
    if (dcpl >= 0 && H5Pget_layout(dcpl) == H5D_CHUNKED && H5Pget_chunk(dcpl, H5S_MAX_RANK, dims) >= 1)
        rows = (size_t)dims[0];
    if (dcpl >= 0)
        H5Pclose(dcpl);
    if (dset >= 0)
        H5Dclose(dset);
    return rows;
}

/* ------------------------------------------------------------ streaming */

/* The cell arrays, in the order of struct pm_cells' buf[]. */
enum { PM_NCELLS = 12, PM_CELL_TIMED = 10 };

static const enum pm_schema_id pm_cell_sets[PM_NCELLS] = {
    PM_S_REGION_VISITS,       PM_S_REGION_WALL_NS,       PM_S_REGION_FLAGS,
    PM_S_REGION_COUNTS,       PM_S_REGION_ENABLED_NS,    PM_S_REGION_RUNNING_NS,
    PM_S_REGION_BYTES,        PM_S_REGION_BYTES_UNKNOWN, PM_S_REGION_READS,
    PM_S_REGION_TIMER_VISITS, PM_S_REGION_TIMED_VISITS,  PM_S_REGION_THROTTLED_FROM,
};

/* The /thread totals, in the order of struct pm_totals' buf[]. */
enum { PM_NTOTALS = 7, PM_TOTAL_FLAGS = 4, PM_TOTAL_COST = 6 };

static const enum pm_schema_id pm_total_sets[PM_NTOTALS] = {
    PM_S_THREAD_WALL_NS, PM_S_THREAD_COUNTS, PM_S_THREAD_ENABLED_NS, PM_S_THREAD_RUNNING_NS,
    PM_S_THREAD_FLAGS,   PM_S_THREAD_READS,  PM_S_THREAD_READ_COST_NS,
};

/* Memory type and bytes per element of /thread total k. */
static hid_t pm_total_type(int k)
{
    return k == PM_TOTAL_FLAGS ? H5T_NATIVE_UINT32
           : k == PM_TOTAL_COST ? H5T_NATIVE_DOUBLE : H5T_NATIVE_UINT64;
}

static size_t pm_total_elsize(int k)
{
    return k == PM_TOTAL_FLAGS ? 4 : 8;
}

struct pm_file_stream {
    hid_t file;
    hid_t dset[PM_NCELLS]; /* -1: an optional dataset the file lacks (reads as 0) */
    hid_t tot[PM_NTOTALS]; /* the same for the /thread totals */
    char *path;
};

/* Elements per thread row of /thread total k. */
static size_t pm_total_width(const struct pm_file *d, int k)
{
    return k == 1 ? d->E : (k == 2 || k == 3) ? d->G : 1;
}

/* Open and check the /thread totals (the checks and messages of
 * pm_read_ints, without the read); keep them open for pm_file_totals. */
static int pm_open_totals(struct pm_rd *rd, struct pm_file *d)
{
    struct pm_file_stream *st = d->stream;

    for (int k = 0; k < PM_NTOTALS; k++) {
        const char *name = pm_schema_path(pm_total_sets[k]);
        hsize_t dims[2] = {d->T, pm_total_width(d, k)};
        int nd = pm_schema_ndims(pm_total_sets[k]);
        hid_t type, space;
        int bad;

        if (!pm_schema_needed(pm_total_sets[k]) && !pm_link_exists(rd, name))
            continue;
        pm_read_begin("dataset '%s'", name);
        st->tot[k] = H5Dopen2(rd->file, name, H5P_DEFAULT);
        if (st->tot[k] < 0)
            return pm_fail(rd, "missing dataset %s", name);
        type = H5Dget_type(st->tot[k]);
        space = H5Dget_space(st->tot[k]);
        bad = type < 0 || space < 0 ||
              H5Tget_class(type) != (k == PM_TOTAL_COST ? H5T_FLOAT : H5T_INTEGER);
        if (bad)
            pm_fail(rd, "%s is not %s array", name,
                    k == PM_TOTAL_COST ? "a floating-point" : "an integer");
        else
            bad = pm_check_shape(rd, name, pm_schema_dims(pm_total_sets[k]), space, nd, dims) < 0;
        if (space >= 0)
            H5Sclose(space);
        if (type >= 0)
            H5Tclose(type);
        if (bad)
            return -1;
    }
    d->has_read_cost = st->tot[PM_TOTAL_COST] >= 0;
    return 0;
}

/* Elements per thread row of cell array k. */
static size_t pm_cell_width(const struct pm_file *d, int k)
{
    return k == 3 ? d->R * d->E : (k == 4 || k == 5) ? d->R * d->G : d->R;
}

/* Chunk cache for one cell dataset: two of its chunks, at least HDF5's
 * default 1 MiB. */
static size_t pm_cache_bytes(hid_t file, const char *name)
{
    hid_t dset, dcpl, type;
    hsize_t dims[H5S_MAX_RANK];
    size_t bytes = (size_t)1 << 20, chunk;
    int nd;

    pm_read_begin("dataset '%s'", name);
    dset = H5Dopen2(file, name, H5P_DEFAULT);
    dcpl = dset >= 0 ? H5Dget_create_plist(dset) : -1;
    type = dset >= 0 ? H5Dget_type(dset) : -1;
    if (dcpl >= 0 && type >= 0 && H5Pget_layout(dcpl) == H5D_CHUNKED &&
        (nd = H5Pget_chunk(dcpl, H5S_MAX_RANK, dims)) >= 1) {
        chunk = H5Tget_size(type) < 8 ? 8 : H5Tget_size(type); /* read as 8-byte ints */
        for (int i = 0; i < nd; i++)
            chunk = dims[i] && chunk <= ((size_t)1 << 40) / dims[i] ? chunk * (size_t)dims[i]
                                                                   : (size_t)1 << 40;
        if (chunk <= ((size_t)1 << 30) && 2 * chunk > bytes)
            bytes = 2 * chunk;
    }
    if (type >= 0)
        H5Tclose(type);
    if (dcpl >= 0)
        H5Pclose(dcpl);
    if (dset >= 0)
        H5Dclose(dset);
    return bytes;
}

/* Open and check every cell dataset; keep them open for pm_file_rows. */
static int pm_open_cells(struct pm_rd *rd, struct pm_file *d)
{
    struct pm_file_stream *st = calloc(1, sizeof *st);
    hid_t dapl = H5Pcreate(H5P_DATASET_ACCESS);

    if (!st) {
        if (dapl >= 0)
            H5Pclose(dapl);
        return pm_oom(rd);
    }
    d->stream = st;
    st->file = -1;
    for (int k = 0; k < PM_NCELLS; k++)
        st->dset[k] = -1;
    for (int k = 0; k < PM_NTOTALS; k++)
        st->tot[k] = -1;
    if (!(st->path = strdup(rd->path)))
        return pm_oom(rd);
    for (int k = 0; k < PM_NCELLS; k++) {
        hsize_t dims[3] = {d->T, d->R, k == 3 ? d->E : d->G};
        int nd = pm_schema_ndims(pm_cell_sets[k]);
        hid_t type, space;
        int bad;

        if (!pm_schema_needed(pm_cell_sets[k]) && !pm_link_exists(rd, pm_schema_path(pm_cell_sets[k])))
            continue;
        /* A chunk of the [T,R] arrays spans more thread rows than a block:
         * a cache that holds the two chunks a block can straddle inflates
         * each chunk once, not once per block; no larger, so memory stays
         * bounded by the chunks */
        if (dapl >= 0)
            H5Pset_chunk_cache(dapl, 1009, pm_cache_bytes(rd->file, pm_schema_path(pm_cell_sets[k])), 1.0);
        st->dset[k] = H5Dopen2(rd->file, pm_schema_path(pm_cell_sets[k]), dapl >= 0 ? dapl : H5P_DEFAULT);
        if (st->dset[k] < 0) {
            if (dapl >= 0)
                H5Pclose(dapl);
            return pm_fail(rd, "missing dataset %s", pm_schema_path(pm_cell_sets[k]));
        }
        type = H5Dget_type(st->dset[k]);
        space = H5Dget_space(st->dset[k]);
        bad = type < 0 || space < 0 || H5Tget_class(type) != H5T_INTEGER;
        if (bad)
            pm_fail(rd, "%s is not an integer array", pm_schema_path(pm_cell_sets[k]));
        else
            bad = pm_check_shape(rd, pm_schema_path(pm_cell_sets[k]), pm_schema_dims(pm_cell_sets[k]), space, nd,
                                 dims) < 0;
        if (space >= 0)
            H5Sclose(space);
        if (type >= 0)
            H5Tclose(type);
        if (bad) {
            if (dapl >= 0)
                H5Pclose(dapl);
            return -1;
        }
    }
    if (dapl >= 0)
        H5Pclose(dapl);
    d->has_visit_data = pm_has_visit_data(rd);
    return 0;
}

/* A block's buffers: buf[k] holds cap rows of width[k] words (at least
 * one word each, so that every pointer is valid). On failure all are
 * freed (NULL). */
static int pm_block_alloc(void **buf, int n, const size_t *width, size_t cap)
{
    for (int k = 0; k < n; k++) {
        size_t words;

        if (pm_mul(width[k] ? width[k] : 1, cap ? cap : 1, &words) < 0 ||
            !(buf[k] = calloc(words, 8))) {
            for (int j = 0; j <= k; j++)
                free(buf[j]), buf[j] = NULL;
            return -1;
        }
    }
    return 0;
}

int pm_cells_alloc(const struct pm_file *d, size_t cap, struct pm_cells *c)
{
    size_t width[PM_NCELLS];

    memset(c, 0, sizeof *c);
    c->cap = cap;
    if (!d->stream)
        return 0;
    for (int k = 0; k < PM_NCELLS; k++)
        width[k] = pm_cell_width(d, k);
    if (pm_block_alloc(c->buf, PM_NCELLS, width, cap) < 0)
        return -1;
    c->visits = c->buf[0];
    c->wall_ns = c->buf[1];
    c->flags = c->buf[2];
    c->counts = c->buf[3];
    c->enabled_ns = c->buf[4];
    c->running_ns = c->buf[5];
    c->bytes = c->buf[6];
    c->bytes_unknown = c->buf[7];
    c->reads = c->buf[8];
    c->timer_visits = c->buf[9];
    /* absent: every visit was timed */
    c->timed_visits = d->stream->dset[PM_CELL_TIMED] >= 0 ? c->buf[PM_CELL_TIMED] : c->buf[0];
    c->throttled_from = c->buf[11];
    return 0;
}

void pm_cells_free(struct pm_cells *c)
{
    for (int k = 0; k < PM_NCELLS; k++)
        free(c->buf[k]);
    memset(c, 0, sizeof *c);
}

/* Rows [t0, t0 + nt) of the open dataset `name` (nd dimensions, the first
 * one rows; count[] the block's extent) into `buf` as `type`. < 0 with the
 * message in err on failure. */
static herr_t pm_read_slab(const struct pm_file_stream *st, hid_t dset, const char *name, int nd,
                           const hsize_t *start, const hsize_t *count, hid_t type, void *buf,
                           char *err, size_t errlen)
{
    struct pm_reason why;
    hid_t fs, ms;
    herr_t rc;

    pm_read_begin("rows %zu-%zu of dataset '%s'", (size_t)start[0],
                  (size_t)(start[0] + count[0] - 1), name);
    fs = H5Dget_space(dset);
    ms = H5Screate_simple(nd, count, NULL);
    rc = fs >= 0 && ms >= 0 ? H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL)
                            : -1;

    if (rc >= 0)
        rc = H5Dread(dset, type, ms, fs, H5P_DEFAULT, buf);
    if (rc < 0 && err && errlen > 0) {
        snprintf(err, errlen, "%s: cannot read %s rows %zu-%zu (%s)", st->path, name,
                 (size_t)start[0], (size_t)(start[0] + count[0] - 1), pm_hdf5_reason(&why));
        pm_oneline(err);
    }
    if (ms >= 0)
        H5Sclose(ms);
    if (fs >= 0)
        H5Sclose(fs);
    return rc;
}

static int pm_read_rows(const struct pm_file *d, size_t t0, size_t nt, struct pm_cells *c,
                        char *err, size_t errlen)
{
    const struct pm_file_stream *st = d->stream;

    for (int k = 0; k < PM_NCELLS; k++) {
        hsize_t start[3] = {t0, 0, 0}, count[3] = {nt, d->R, k == 3 ? d->E : d->G};
        int nd = pm_schema_ndims(pm_cell_sets[k]);

        if (st->dset[k] < 0 || pm_cell_width(d, k) == 0) {
            memset(c->buf[k], 0, nt * pm_cell_width(d, k) * 8);
            continue;
        }
        if (pm_read_slab(st, st->dset[k], pm_schema_path(pm_cell_sets[k]), nd, start, count,
                         k == 2 ? H5T_NATIVE_UINT32 : H5T_NATIVE_UINT64, c->buf[k], err,
                         errlen) < 0)
            return -1;
    }
    return 0;
}

int pm_file_rows(const struct pm_file *d, size_t t0, size_t nt, struct pm_cells *c, char *err,
                 size_t errlen)
{
    H5E_auto2_t old_func = NULL;
    void *old_data = NULL;
    int rc;

    c->t0 = t0;
    c->nt = nt;
    if (!d->stream) {
        c->visits = d->visits + t0 * d->R;
        c->wall_ns = d->wall_ns + t0 * d->R;
        c->flags = d->flags + t0 * d->R;
        c->counts = d->counts + t0 * d->R * d->E;
        c->enabled_ns = d->enabled_ns + t0 * d->R * d->G;
        c->running_ns = d->running_ns + t0 * d->R * d->G;
        c->bytes = d->bytes + t0 * d->R;
        c->bytes_unknown = d->bytes_unknown + t0 * d->R;
        c->reads = d->reads + t0 * d->R;
        c->timer_visits = d->timer_visits + t0 * d->R;
        c->timed_visits = (d->timed_visits ? d->timed_visits : d->visits) + t0 * d->R;
        c->throttled_from = d->throttled_from + t0 * d->R;
        return 0;
    }
    if (nt > c->cap) {
        snprintf(err, errlen, "%s: internal error: %zu rows into a buffer of %zu", d->stream->path,
                 nt, c->cap);
        return -1;
    }
    if (nt == 0)
        return 0;
    H5Eget_auto2(H5E_DEFAULT, &old_func, &old_data);
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    pm_read_file(d->stream->path);
    rc = pm_read_rows(d, t0, nt, c, err, errlen);
    pm_read_end();
    H5Eclear2(H5E_DEFAULT);
    H5Eset_auto2(H5E_DEFAULT, old_func, old_data);
    return rc;
}

int pm_totals_alloc(const struct pm_file *d, size_t cap, struct pm_totals *b)
{
    size_t width[PM_NTOTALS];

    memset(b, 0, sizeof *b);
    b->cap = cap;
    if (!d->stream)
        return 0;
    for (int k = 0; k < PM_NTOTALS; k++)
        width[k] = pm_total_width(d, k);
    if (pm_block_alloc(b->buf, PM_NTOTALS, width, cap) < 0)
        return -1;
    b->wall_ns = b->buf[0];
    b->counts = b->buf[1];
    b->enabled_ns = b->buf[2];
    b->running_ns = b->buf[3];
    b->flags = b->buf[PM_TOTAL_FLAGS];
    b->reads = b->buf[5];
    b->read_cost_ns = b->buf[PM_TOTAL_COST];
    return 0;
}

void pm_totals_free(struct pm_totals *b)
{
    for (int k = 0; k < PM_NTOTALS; k++)
        free(b->buf[k]);
    memset(b, 0, sizeof *b);
}

static int pm_read_totals(const struct pm_file *d, size_t t0, size_t nt, struct pm_totals *b,
                          char *err, size_t errlen)
{
    const struct pm_file_stream *st = d->stream;
    int rc = 0;

    for (int k = 0; k < PM_NTOTALS; k++) {
        size_t w = pm_total_width(d, k);
        hsize_t start[2] = {t0, 0}, count[2] = {nt, w};
        int nd = pm_schema_ndims(pm_total_sets[k]);

        if (st->tot[k] < 0 || w == 0 || rc < 0) {
            memset(b->buf[k], 0, nt * w * pm_total_elsize(k));
            continue;
        }
        if (pm_read_slab(st, st->tot[k], pm_schema_path(pm_total_sets[k]), nd, start, count,
                         pm_total_type(k), b->buf[k], err, errlen) < 0) {
            rc = -1;
            for (int j = 0; j <= k; j++) /* a failed block reads as zeros */
                memset(b->buf[j], 0, nt * pm_total_width(d, j) * pm_total_elsize(j));
        }
    }
    return rc;
}

int pm_file_totals(const struct pm_file *d, size_t t0, size_t nt, struct pm_totals *b, char *err,
                   size_t errlen)
{
    H5E_auto2_t old_func = NULL;
    void *old_data = NULL;
    int rc;

    b->t0 = t0;
    b->nt = nt;
    if (!d->stream) {
        b->wall_ns = d->thread_wall_ns + t0;
        b->counts = d->thread_counts + t0 * d->E;
        b->enabled_ns = d->thread_enabled_ns + t0 * d->G;
        b->running_ns = d->thread_running_ns + t0 * d->G;
        b->flags = d->thread_flags + t0;
        b->reads = d->thread_reads + t0;
        b->read_cost_ns = d->thread_read_cost_ns + t0;
        return 0;
    }
    if (nt > b->cap) {
        snprintf(err, errlen, "%s: internal error: %zu rows into a buffer of %zu", d->stream->path,
                 nt, b->cap);
        b->nt = 0;
        return -1;
    }
    if (nt == 0)
        return 0;
    H5Eget_auto2(H5E_DEFAULT, &old_func, &old_data);
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    pm_read_file(d->stream->path);
    rc = pm_read_totals(d, t0, nt, b, err, errlen);
    pm_read_end();
    H5Eclear2(H5E_DEFAULT);
    H5Eset_auto2(H5E_DEFAULT, old_func, old_data);
    return rc;
}

int pm_thread_rows_alloc(const struct pm_file *d, size_t cap, struct pm_thread_rows *b)
{
    memset(b, 0, sizeof *b);
    if (!d->stream)
        return 0;
    b->cap = cap;
    b->own = calloc(cap ? cap : 1, sizeof *b->own);
    return b->own ? 0 : -1;
}

void pm_thread_rows_free(struct pm_thread_rows *b)
{
    for (size_t i = 0; b->own && i < b->nt; i++) {
        free(b->own[i].host);
        free(b->own[i].binding);
    }
    free(b->own);
    memset(b, 0, sizeof *b);
}

int pm_file_thread_rows(const struct pm_file *d, size_t t0, size_t nt, struct pm_thread_rows *b,
                        char *err, size_t errlen)
{
    struct pm_rd rd = {d->stream ? d->stream->path : "", err, errlen, 0, -1, -1, 0};
    H5E_auto2_t old_func = NULL;
    void *old_data = NULL;
    int rc;

    if (!d->stream) {
        b->t0 = t0;
        b->nt = nt;
        b->rows = d->threads + t0;
        return 0;
    }
    if (nt > b->cap) {
        snprintf(err, errlen, "%s: internal error: %zu rows into a buffer of %zu", d->stream->path,
                 nt, b->cap);
        return -1;
    }
    rd.file = d->stream->file;
    H5Eget_auto2(H5E_DEFAULT, &old_func, &old_data);
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    pm_read_file(d->stream->path);
    rc = pm_thread_block(&rd, b, t0, nt);
    pm_read_end();
    H5Eclear2(H5E_DEFAULT);
    H5Eset_auto2(H5E_DEFAULT, old_func, old_data);
    return rc;
}

/* -------------------------------------------------------------- public */

static int pm_load(struct pm_rd *rd, struct pm_file *d, int stream)
{
    if (pm_open(rd) < 0 || pm_load_version(rd, d) < 0 || pm_load_attrs(rd, d) < 0 ||
        pm_load_tables(rd, d, stream) < 0 ||
        (stream ? pm_open_cells(rd, d) : pm_load_cells(rd, d)) < 0 ||
        pm_load_thread_totals(rd, d) < 0 || pm_load_rank(rd, d) < 0 ||
        pm_load_messages(rd, d) < 0 || pm_fill_paths(rd, d) < 0 || pm_load_flagnames(rd, d) < 0)
        return -1;
    d->chunk_threads = pm_chunk_rows(rd->file);
    return 0;
}

static int pm_file_read(const char *path, struct pm_file *d, int stream, int mpio, char *err,
                        size_t errlen)
{
    struct pm_rd rd = {path ? path : "(no file)", err, errlen, 0, -1, -1, mpio};
    H5E_auto2_t old_func = NULL;
    void *old_data = NULL;
    int rc;

    memset(d, 0, sizeof *d);
    if (err && errlen > 0)
        err[0] = '\0';
    if (!path)
        return pm_fail(&rd, "no file name given");
    H5Eget_auto2(H5E_DEFAULT, &old_func, &old_data);
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    pm_read_file(rd.path);
    rc = pm_load(&rd, d, stream);
    pm_read_end();
    if (rd.root >= 0)
        H5Gclose(rd.root);
    if (rc != 0)
        pm_file_free(d); /* closes the datasets a failed stream left open */
    if (rc == 0 && stream)
        d->stream->file = rd.file; /* closed by pm_file_free */
    else if (rd.file >= 0)
        H5Fclose(rd.file);
    H5Eclear2(H5E_DEFAULT);
    H5Eset_auto2(H5E_DEFAULT, old_func, old_data);
    return rc;
}

int pm_file_load(const char *path, struct pm_file *d, char *err, size_t errlen)
{
    return pm_file_read(path, d, 0, 0, err, errlen);
}

int pm_file_open(const char *path, struct pm_file *d, int mpio, char *err, size_t errlen)
{
    return pm_file_read(path, d, 1, mpio, err, errlen);
}

void pm_file_free(struct pm_file *d)
{
    char **strs[] = {&d->perfmark_version, &d->command, &d->host, &d->start_time, &d->clock,
                     &d->events_requested, &d->events_measured, &d->event_group, &d->fallback,
                     &d->fallback_cause, &d->cpu,
                     &d->topdown_method, &d->cpu_model, &d->throttle};

    for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++)
        free(*strs[i]);
    pm_free_table(d->events, d->E, pm_event_fields, PM_NFIELDS(pm_event_fields),
                  sizeof(struct pm_file_event));
    pm_free_table(d->regions, d->R, pm_region_fields, PM_NFIELDS(pm_region_fields),
                  sizeof(struct pm_file_region));
    pm_free_table(d->threads, d->T, pm_thread_fields, PM_NFIELDS(pm_thread_fields),
                  sizeof(struct pm_file_thread));
    free(d->tids);
    free(d->visits);
    free(d->wall_ns);
    free(d->flags);
    free(d->counts);
    free(d->enabled_ns);
    free(d->running_ns);
    free(d->bytes);
    free(d->bytes_unknown);
    free(d->reads);
    free(d->timer_visits);
    free(d->timed_visits);
    free(d->throttled_from);
    free(d->thread_wall_ns);
    free(d->thread_counts);
    free(d->thread_enabled_ns);
    free(d->thread_running_ns);
    free(d->thread_flags);
    free(d->thread_reads);
    free(d->thread_read_cost_ns);
    free(d->rank_counts);
    free(d->rank_enabled_ns);
    free(d->rank_running_ns);
    for (size_t i = 0; i < d->M; i++)
        free(d->messages[i]);
    free(d->messages);
    for (size_t i = 0; i < d->nflagnames; i++)
        free(d->flagnames[i].name);
    free(d->flagnames);
    if (d->stream) {
        for (int k = 0; k < PM_NCELLS; k++)
            if (d->stream->dset[k] >= 0)
                H5Dclose(d->stream->dset[k]);
        for (int k = 0; k < PM_NTOTALS; k++)
            if (d->stream->tot[k] >= 0)
                H5Dclose(d->stream->tot[k]);
        if (d->stream->file >= 0) /* collective under mpirun: not a read step (read_guard.c) */
            H5Fclose(d->stream->file);
        free(d->stream->path);
        free(d->stream);
    }
    memset(d, 0, sizeof *d);
}
