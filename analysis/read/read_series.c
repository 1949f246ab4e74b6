/*
 * read_series.c — counts over time (schema revision 7, docs/hdf5-schema.md
 * "/series"): the interval and the shapes at open, the rows a block at a
 * time from the open file (pm_file_series, streamed files only). Files
 * without /series read as no series.
 */
#include "read_internal.h"

#include <stdlib.h>
#include <string.h>

/* The row datasets of each part, in pm_series_block's order; -1: none
 * (the process rows have no region and no flags). */
enum { PM_SB_TIME, PM_SB_THREAD, PM_SB_REGION, PM_SB_FLAGS, PM_SB_COUNTS, PM_SB_ENABLED,
       PM_SB_RUNNING, PM_SB_N };
static const int pm_sb_ids[2][PM_SB_N] = {
    {PM_S_SERIES_TIME_NS, PM_S_SERIES_THREAD, PM_S_SERIES_REGION, PM_S_SERIES_FLAGS,
     PM_S_SERIES_COUNTS, PM_S_SERIES_ENABLED_NS, PM_S_SERIES_RUNNING_NS},
    {PM_S_SERIES_PROCESS_TIME_NS, PM_S_SERIES_PROCESS_RANK, -1, -1, PM_S_SERIES_PROCESS_COUNTS,
     PM_S_SERIES_PROCESS_ENABLED_NS, PM_S_SERIES_PROCESS_RUNNING_NS},
};

/* Columns of a row dataset: 1, E or G. */
static size_t pm_sb_cols(const struct pm_file *d, int k)
{
    return k == PM_SB_COUNTS ? d->E : k == PM_SB_ENABLED || k == PM_SB_RUNNING ? d->G : 1;
}

static hid_t pm_sb_type(int k)
{
    return k == PM_SB_THREAD || k == PM_SB_REGION ? H5T_NATIVE_INT32
           : k == PM_SB_FLAGS                      ? H5T_NATIVE_UINT32
                                                   : H5T_NATIVE_UINT64;
}

int pm_rd_load_series(struct pm_rd *rd, struct pm_file *d)
{
    d->series_interval = calloc(d->T + 1, sizeof *d->series_interval);
    if (!d->series_interval)
        return pm_rd_oom(rd);
    if (!pm_rd_link_exists(rd, pm_schema_path(PM_S_SERIES)))
        return 0;
    hid_t grp = H5Gopen2(rd->file, pm_schema_path(PM_S_SERIES), H5P_DEFAULT);
    if (grp < 0)
        return pm_rd_fail(rd, "cannot open %s", pm_schema_path(PM_S_SERIES));
    if (H5Aexists(grp, pm_schema_name(PM_S_SERIES_ASKED_NS)) > 0) {
        struct pm_rd on_group = *rd;
        on_group.root = grp;
        if (pm_rd_attr_int(&on_group, pm_schema_name(PM_S_SERIES_ASKED_NS), H5T_NATIVE_UINT64,
                           &d->series_asked_ns) < 0) {
            rd->failed = on_group.failed;
            H5Gclose(grp);
            return -1;
        }
    }
    H5Gclose(grp);
    /* every row dataset's shape: I or J rows, 1, E or G columns */
    for (int part = 0; part < 2; part++) {
        size_t rows = (size_t)-1;
        for (int k = 0; k < PM_SB_N; k++) {
            int id = pm_sb_ids[part][k];
            if (id < 0 || !pm_rd_link_exists(rd, pm_schema_path((enum pm_schema_id)id)))
                continue;
            const char *name = pm_schema_path((enum pm_schema_id)id);
            int ndims = pm_schema_ndims((enum pm_schema_id)id);
            hsize_t dims[2] = {rows == (size_t)-1 ? PM_ANY : rows, pm_sb_cols(d, k)};
            pm_read_begin("dataset '%s'", name);
            hid_t ds = H5Dopen2(rd->file, name, H5P_DEFAULT);
            hid_t sp = ds >= 0 ? H5Dget_space(ds) : -1;
            int rc = sp < 0 ? pm_rd_fail(rd, "cannot open %s", name)
                            : pm_rd_check_shape(rd, name, pm_schema_dims((enum pm_schema_id)id), sp,
                                                ndims, dims);
            if (sp >= 0)
                H5Sclose(sp);
            if (ds >= 0)
                H5Dclose(ds);
            if (rc < 0)
                return -1;
            rows = (size_t)dims[0];
        }
        if (rows == (size_t)-1)
            rows = 0;
        if (part == 0)
            d->I = rows;
        else
            d->J = rows;
    }
    if (pm_rd_link_exists(rd, pm_schema_path(PM_S_SERIES_THREAD_INTERVAL_NS))) {
        hsize_t dims[1] = {d->T};
        void *buf = NULL;
        if (pm_rd_read_dataset(rd, PM_S_SERIES_THREAD_INTERVAL_NS, dims, &buf) < 0)
            return -1;
        if (buf) {
            free(d->series_interval);
            d->series_interval = buf;
        }
    }
    return 0;
}

int pm_series_block_alloc(const struct pm_file *d, size_t cap, struct pm_series_block *b)
{
    memset(b, 0, sizeof *b);
    b->cap = cap;
    b->time_ns = calloc(cap + 1, 8);
    b->thread = calloc(cap + 1, 4);
    b->region = calloc(cap + 1, 4);
    b->flags = calloc(cap + 1, 4);
    b->counts = calloc(cap * d->E + 1, 8);
    b->enabled_ns = calloc(cap * d->G + 1, 8);
    b->running_ns = calloc(cap * d->G + 1, 8);
    if (!b->time_ns || !b->thread || !b->region || !b->flags || !b->counts || !b->enabled_ns ||
        !b->running_ns) {
        pm_series_block_free(b);
        return -1;
    }
    return 0;
}

void pm_series_block_free(struct pm_series_block *b)
{
    free(b->time_ns), free(b->thread), free(b->region), free(b->flags);
    free(b->counts), free(b->enabled_ns), free(b->running_ns);
    memset(b, 0, sizeof *b);
}

int pm_file_series(const struct pm_file *d, int process, size_t i0, size_t n,
                   struct pm_series_block *b, char *err, size_t errlen)
{
    size_t total = process ? d->J : d->I;
    if (i0 > total || n > total - i0 || n > b->cap) {
        snprintf(err, errlen, "series: rows %zu..%zu asked of %zu", i0, i0 + n, total);
        return -1;
    }
    if (!d->stream) {
        snprintf(err, errlen, "series: the file is not open");
        return -1;
    }
    struct pm_rd rd = {d->stream->path, err, errlen, 0, d->stream->file, -1, 0};
    void *dst[PM_SB_N] = {b->time_ns, b->thread, b->region, b->flags, b->counts, b->enabled_ns,
                          b->running_ns};
    b->i0 = i0;
    b->n = n;
    for (int k = 0; k < PM_SB_N; k++) {
        int id = pm_sb_ids[process ? 1 : 0][k];
        size_t cols = pm_sb_cols(d, k);
        if (id < 0 || !n || !cols || !pm_rd_link_exists(&rd, pm_schema_path((enum pm_schema_id)id))) {
            memset(dst[k], k == PM_SB_REGION ? 0xff : 0, n * cols * (k == PM_SB_THREAD ||
                   k == PM_SB_REGION || k == PM_SB_FLAGS ? 4 : 8));
            continue;
        }
        if (pm_rd_read_rows(&rd, (enum pm_schema_id)id, pm_sb_type(k), i0, n, cols, dst[k]) < 0)
            return -1;
    }
    return 0;
}
