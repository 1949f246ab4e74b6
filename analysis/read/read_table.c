/*
 * read_table.c — the compound tables (/events, /regions, /threads) and
 * string arrays: members matched by name, each member's type and whether a
 * file may lack it from the schema table, strings copied out of HDF5's
 * memory a block of rows at a time. Also the checks that make the tables
 * safe for the model (a tree whose parents come first, groups in range).
 */
#include "read_internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ------------------------------------------------------ compound tables */

enum pm_ftype { PM_STR, PM_I32, PM_U32, PM_I64, PM_U64, PM_U8 };

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
static const struct pm_field pm_rd_event_fields[] = {
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
static const struct pm_field pm_rd_region_fields[] = {
    {PM_S_REGIONS_NAME, PM_RG(name)},
    {PM_S_REGIONS_PARENT, PM_RG(parent)},
    {PM_S_REGIONS_DEPTH, PM_RG(depth)},
    {PM_S_REGIONS_KIND, PM_RG(kind)},
    {PM_S_REGIONS_PATH, PM_RG(path)},
};

#define PM_TH(f) offsetof(struct pm_file_thread, f)
static const struct pm_field pm_rd_thread_fields[] = {
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
    {PM_S_THREADS_NAME, PM_TH(name)},
    {PM_S_THREADS_START, PM_TH(start)},
    {PM_S_THREADS_TOTALS_FROM, PM_TH(totals_from)},
};

static hid_t pm_field_memtype(enum pm_ftype t, H5T_cset_t cset)
{
    switch (t) {
    case PM_STR: return pm_rd_vlen_str_type(cset);
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
        c = pm_rd_cset(mt);
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
        pm_rd_fail(rd, "cannot build a type for %s", name);
        return -1;
    }
    for (size_t i = 0; i < nf; i++) {
        int idx = H5Tget_member_index(ftype, pm_schema_name(f[i].id));
        hid_t ft;
        herr_t st;

        if (idx < 0) {
            if (!pm_schema_needed(f[i].id))
                continue;
            pm_rd_fail(rd, "%s has no field '%s'", name, pm_schema_name(f[i].id));
            break;
        }
        if (!pm_member_ok(ftype, idx, pm_field_type(&f[i]))) {
            pm_rd_fail(rd, "%s field '%s' has an unexpected type", name, pm_schema_name(f[i].id));
            break;
        }
        if (pm_member_fixed_size(ftype, idx))
            continue;  /* read separately */
        ft = pm_field_memtype(pm_field_type(&f[i]), pm_member_cset(ftype, idx));
        st = ft >= 0 ? H5Tinsert(mtype, pm_schema_name(f[i].id), f[i].off, ft) : -1;
        if (ft >= 0)
            H5Tclose(ft);
        if (st < 0) {
            pm_rd_fail(rd, "cannot build a type for %s", name);
            break;
        }
    }
    if (rd->failed) {
        H5Tclose(mtype);
        return -1;
    }
    return mtype;
}

static void pm_rd_free_table(void *tab, size_t n, const struct pm_field *f, size_t nf, size_t elsize)
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
 * 0, or -1 (the rows' strings are then NULL or ours: pm_rd_free_table). */
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
 * are then safe for pm_rd_free_table). */
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
        return pm_rd_fail(rd, "cannot read %s (%s)", name, pm_rd_hdf5_reason(&why));
    }
    ok = pm_own_rows(tab, raw, cnt, f, nf, elsize) == 0;
    H5Dvlen_reclaim(mtype, mspace, H5P_DEFAULT, raw);
    for (size_t k = 0; ok && k < nf; k++) {
        int idx = pm_field_type(&f[k]) == PM_STR ? H5Tget_member_index(ftype, pm_schema_name(f[k].id)) : -1;
        size_t fixed = idx >= 0 ? pm_member_fixed_size(ftype, idx) : 0;
        if (fixed && pm_read_fixed_member(dset, ftype, &f[k], fixed, tab, cnt, elsize, mspace,
                                          space) < 0) {
            H5Sclose(mspace);
            return pm_rd_fail(rd, "cannot read %s field '%s' (%s)", name, pm_schema_name(f[k].id),
                           pm_rd_hdf5_reason(&why));
        }
    }
    H5Sclose(mspace);
    return ok ? 0 : pm_rd_oom(rd);
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
        return pm_rd_fail(rd, "missing dataset %s", name);
    *ftype = H5Dget_type(*dset);
    *space = H5Dget_space(*dset);
    if (*ftype < 0 || *space < 0 || H5Tget_class(*ftype) != H5T_COMPOUND)
        return pm_rd_fail(rd, "%s is not a compound table", name);
    if (pm_rd_check_shape(rd, name, "rows", *space, 1, dims) < 0)
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
static int pm_rd_read_table(struct pm_rd *rd, const char *name, const struct pm_field *f, size_t nf,
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
        pm_rd_oom(rd);
        goto done;
    }
    for (size_t i0 = 0; i0 < n; i0 += block) {
        size_t cnt = n - i0 < block ? n - i0 : block;

        if (pm_table_rows(rd, name, dset, ftype, space, mtype, f, nf, elsize, i0, cnt, raw,
                          tab + i0 * elsize) < 0) {
            pm_rd_free_table(tab, n, f, nf, elsize);
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

int pm_rd_read_table_opt(struct pm_rd *rd, enum pm_schema_id id, const struct pm_field *f,
                         size_t nf, size_t elsize, void **out, size_t *count)
{
    *out = NULL;
    *count = 0;
    if (!pm_schema_needed(id) && !pm_rd_link_exists(rd, pm_schema_path(id)))
        return 0;
    return pm_rd_read_table(rd, pm_schema_path(id), f, nf, elsize, out, count);
}

void pm_rd_table_free(void *tab, size_t n, const struct pm_field *f, size_t nf, size_t elsize)
{
    pm_rd_free_table(tab, n, f, nf, elsize);
}

int pm_rd_table_block(struct pm_rd *rd, enum pm_schema_id id, const struct pm_field *f,
                      size_t nf, size_t elsize, size_t i0, size_t cnt, void *out)
{
    const char *name = pm_schema_path(id);
    hid_t dset, ftype, space, mtype;
    size_t n = 0;
    void *raw = NULL;
    int rc = -1;

    if (pm_table_open(rd, name, f, nf, elsize, &dset, &ftype, &space, &mtype, &n) < 0)
        goto done;
    if (i0 > n || cnt > n - i0) {
        pm_rd_fail(rd, "%s has %zu rows, not %zu", name, n, i0 + cnt);
        goto done;
    }
    if (!cnt) {
        rc = 0;
        goto done;
    }
    if (!(raw = calloc(cnt, elsize))) {
        pm_rd_oom(rd);
        goto done;
    }
    rc = pm_table_rows(rd, name, dset, ftype, space, mtype, f, nf, elsize, i0, cnt, raw, out);
done:
    free(raw);
    pm_table_close(dset, ftype, space, mtype);
    return rc;
}

/* Rows [t0, t0 + nt) of /threads into b->rows (b->cap rows of room). */
int pm_rd_thread_block(struct pm_rd *rd, struct pm_thread_rows *b, size_t t0, size_t nt)
{
    hid_t dset, ftype, space, mtype;
    size_t n = 0;
    void *raw = calloc(nt ? nt : 1, sizeof(struct pm_file_thread));
    int rc = -1;

    for (size_t i = 0; i < b->nt; i++) {
        free(b->own[i].host);
        free(b->own[i].binding);
        free(b->own[i].name);
        free(b->own[i].start);
    }
    memset(b->own, 0, b->cap * sizeof *b->own);
    b->t0 = t0;
    b->nt = 0;
    if (!raw)
        return pm_rd_oom(rd);
    if (pm_table_open(rd, pm_schema_path(PM_S_THREADS), pm_rd_thread_fields, PM_NFIELDS(pm_rd_thread_fields),
                      sizeof(struct pm_file_thread), &dset, &ftype, &space, &mtype, &n) == 0) {
        if (t0 + nt > n)
            pm_rd_fail(rd, "%s has %zu rows, not %zu", pm_schema_path(PM_S_THREADS), n, t0 + nt);
        else if (pm_table_rows(rd, pm_schema_path(PM_S_THREADS), dset, ftype, space, mtype, pm_rd_thread_fields,
                               PM_NFIELDS(pm_rd_thread_fields), sizeof(struct pm_file_thread), t0,
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
static int pm_rd_scan_threads(struct pm_rd *rd, struct pm_file *d)
{
    hid_t dset, ftype, space, mtype;
    size_t n = 0, block = PM_TABLE_BLOCK;
    struct pm_thread_rows b = {0};
    void *raw = NULL;
    int rc = -1;

    if (pm_table_open(rd, pm_schema_path(PM_S_THREADS), pm_rd_thread_fields, PM_NFIELDS(pm_rd_thread_fields),
                      sizeof(struct pm_file_thread), &dset, &ftype, &space, &mtype, &n) < 0)
        goto done;
    block = n < block ? n : block;
    b.cap = block;
    if (!(d->tids = calloc(n ? n : 1, sizeof *d->tids)) ||
        !(b.own = calloc(block ? block : 1, sizeof *b.own)) ||
        !(raw = calloc(block ? block : 1, sizeof *b.own))) {
        pm_rd_oom(rd);
        goto done;
    }
    for (size_t i0 = 0; i0 < n; i0 += block) {
        size_t cnt = n - i0 < block ? n - i0 : block;
        int bad = pm_table_rows(rd, pm_schema_path(PM_S_THREADS), dset, ftype, space, mtype, pm_rd_thread_fields,
                                PM_NFIELDS(pm_rd_thread_fields), sizeof(struct pm_file_thread), i0,
                                cnt, raw, (char *)b.own) < 0;

        for (size_t i = 0; i < cnt; i++) {
            d->tids[i0 + i].rank = b.own[i].rank;
            d->tids[i0 + i].thread = b.own[i].thread;
            free(b.own[i].host);
            free(b.own[i].binding);
            free(b.own[i].name);
            free(b.own[i].start);
            b.own[i].host = b.own[i].binding = b.own[i].name = b.own[i].start = NULL;
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
    hid_t mem = pm_rd_vlen_str_type(cset);
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
    hid_t mem = pm_rd_fixed_str_type(size, cset);
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
int pm_rd_read_strings(struct pm_rd *rd, enum pm_schema_id id, char ***out, size_t *count)
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
        return pm_rd_fail(rd, "cannot open %s", name);
    type = H5Dget_type(dset);
    space = H5Dget_space(dset);
    if (type < 0 || space < 0 || H5Tget_class(type) != H5T_STRING) {
        pm_rd_fail(rd, "%s is not an array of strings", name);
        goto done;
    }
    if (pm_rd_check_shape(rd, name, pm_schema_dims(id), space, 1, dims) < 0)
        goto done;
    n = (size_t)dims[0];
    if (n > SIZE_MAX / sizeof *strs || !(strs = calloc(n ? n : 1, sizeof *strs))) {
        pm_rd_oom(rd);
        goto done;
    }
    if (n > 0) {
        if (H5Tis_variable_str(type) > 0)
            rc = pm_read_vlen_strings(dset, space, n, pm_rd_cset(type), strs);
        else
            rc = pm_read_fixed_strings(dset, H5Tget_size(type), n, pm_rd_cset(type), strs);
        if (rc == -2)
            pm_rd_oom(rd);
        else if (rc < 0)
            pm_rd_fail(rd, "cannot read %s", name);
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

/* ------------------------------------------------ the three tables */

/* The report walks the tree through `parent`; a parent after its child would
 * make that walk (and the depth) meaningless, so such a file is refused. */
static int pm_check_regions(struct pm_rd *rd, struct pm_file *d)
{
    for (size_t r = 0; r < d->R; r++) {
        const struct pm_file_region *g = &d->regions[r];
        int32_t want;

        if (g->parent < -1 || (g->parent >= 0 && (size_t)g->parent >= r))
            return pm_rd_fail(rd, "%s row %zu has parent %d, which does not come before it",
                           pm_schema_path(PM_S_REGIONS), r,
                           (int)g->parent);
        want = g->parent < 0 ? 0 : d->regions[g->parent].depth + 1;
        if (g->depth != want)
            return pm_rd_fail(rd, "%s row %zu has depth %d, expected %d", pm_schema_path(PM_S_REGIONS), r, (int)g->depth,
                           (int)want);
    }
    return 0;
}

static int pm_check_events(struct pm_rd *rd, struct pm_file *d)
{
    for (size_t e = 0; e < d->E; e++)
        if (d->events[e].group < 0 || (size_t)d->events[e].group >= d->G)
            return pm_rd_fail(rd, "%s row %zu has group %d, but %s is %zu",
                           pm_schema_path(PM_S_EVENTS), e, (int)d->events[e].group,
                           pm_schema_name(PM_S_KERNEL_GROUPS), d->G);
    return 0;
}

int pm_rd_load_tables(struct pm_rd *rd, struct pm_file *d, int stream)
{
    if (pm_rd_read_table(rd, pm_schema_path(PM_S_EVENTS), pm_rd_event_fields, PM_NFIELDS(pm_rd_event_fields),
                      sizeof(struct pm_file_event), (void **)&d->events, &d->E) < 0 ||
        pm_rd_read_table(rd, pm_schema_path(PM_S_REGIONS), pm_rd_region_fields, PM_NFIELDS(pm_rd_region_fields),
                      sizeof(struct pm_file_region), (void **)&d->regions, &d->R) < 0)
        return -1;
    if (stream) {
        if (pm_rd_scan_threads(rd, d) < 0)
            return -1;
    } else {
        if (pm_rd_read_table(rd, pm_schema_path(PM_S_THREADS), pm_rd_thread_fields, PM_NFIELDS(pm_rd_thread_fields),
                          sizeof(struct pm_file_thread), (void **)&d->threads, &d->T) < 0)
            return -1;
        if (!(d->tids = calloc(d->T ? d->T : 1, sizeof *d->tids)))
            return pm_rd_oom(rd);
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

void pm_rd_free_tables(struct pm_file *d)
{
    pm_rd_free_table(d->events, d->E, pm_rd_event_fields, PM_NFIELDS(pm_rd_event_fields),
                     sizeof(struct pm_file_event));
    pm_rd_free_table(d->regions, d->R, pm_rd_region_fields, PM_NFIELDS(pm_rd_region_fields),
                     sizeof(struct pm_file_region));
    pm_rd_free_table(d->threads, d->T, pm_rd_thread_fields, PM_NFIELDS(pm_rd_thread_fields),
                     sizeof(struct pm_file_thread));
}
