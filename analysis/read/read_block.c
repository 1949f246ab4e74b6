/*
 * read_block.c — the cells and /thread totals of a large file as blocks of
 * thread rows (pm_file_rows, pm_file_totals, pm_file_thread_rows): the model
 * aggregates a block at a time, so memory follows the block, not the file.
 */
#include "read_internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The thread rows of one chunk of /region/counts, the largest cell array:
 * the report reads and aggregates whole multiples of it (0: not chunked). */
size_t pm_rd_chunk_rows(hid_t file)
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

/* Files since the throttle: /region/reads, timer_visits, timed_visits,
 * throttled_from (any one of them). */
int pm_rd_has_visit_data(struct pm_rd *rd)
{
    static const enum pm_schema_id ids[] = {PM_S_REGION_READS, PM_S_REGION_TIMER_VISITS,
                                            PM_S_REGION_TIMED_VISITS, PM_S_REGION_THROTTLED_FROM};
    int any = 0;

    for (size_t i = 0; i < sizeof ids / sizeof *ids; i++)
        any |= pm_rd_link_exists(rd, pm_schema_path(ids[i]));
    return any;
}

/* The cell arrays, in the order of struct pm_cells' buf[]. */
static const enum pm_schema_id pm_cell_sets[PM_NCELLS] = {
    PM_S_REGION_VISITS,       PM_S_REGION_WALL_NS,       PM_S_REGION_FLAGS,
    PM_S_REGION_COUNTS,       PM_S_REGION_ENABLED_NS,    PM_S_REGION_RUNNING_NS,
    PM_S_REGION_BYTES,        PM_S_REGION_BYTES_UNKNOWN, PM_S_REGION_READS,
    PM_S_REGION_TIMER_VISITS, PM_S_REGION_TIMED_VISITS,  PM_S_REGION_THROTTLED_FROM,
};

/* The /thread totals, in the order of struct pm_totals' buf[]. */
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

/* Elements per thread row of /thread total k. */
static size_t pm_total_width(const struct pm_file *d, int k)
{
    return k == 1 ? d->E : (k == 2 || k == 3) ? d->G : 1;
}

/* Open and check the /thread totals (the checks and messages of
 * pm_read_ints, without the read); keep them open for pm_file_totals. */
int pm_rd_open_totals(struct pm_rd *rd, struct pm_file *d)
{
    struct pm_file_stream *st = d->stream;

    for (int k = 0; k < PM_NTOTALS; k++) {
        const char *name = pm_schema_path(pm_total_sets[k]);
        hsize_t dims[2] = {d->T, pm_total_width(d, k)};
        int nd = pm_schema_ndims(pm_total_sets[k]);
        hid_t type, space;
        int bad;

        if (!pm_schema_needed(pm_total_sets[k]) && !pm_rd_link_exists(rd, name))
            continue;
        pm_read_begin("dataset '%s'", name);
        st->tot[k] = H5Dopen2(rd->file, name, H5P_DEFAULT);
        if (st->tot[k] < 0)
            return pm_rd_fail(rd, "missing dataset %s", name);
        type = H5Dget_type(st->tot[k]);
        space = H5Dget_space(st->tot[k]);
        bad = type < 0 || space < 0 ||
              H5Tget_class(type) != (k == PM_TOTAL_COST ? H5T_FLOAT : H5T_INTEGER);
        if (bad)
            pm_rd_fail(rd, "%s is not %s array", name,
                    k == PM_TOTAL_COST ? "a floating-point" : "an integer");
        else
            bad = pm_rd_check_shape(rd, name, pm_schema_dims(pm_total_sets[k]), space, nd, dims) < 0;
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
int pm_rd_open_cells(struct pm_rd *rd, struct pm_file *d)
{
    struct pm_file_stream *st = calloc(1, sizeof *st);
    hid_t dapl = H5Pcreate(H5P_DATASET_ACCESS);

    if (!st) {
        if (dapl >= 0)
            H5Pclose(dapl);
        return pm_rd_oom(rd);
    }
    d->stream = st;
    st->file = -1;
    for (int k = 0; k < PM_NCELLS; k++)
        st->dset[k] = -1;
    for (int k = 0; k < PM_NTOTALS; k++)
        st->tot[k] = -1;
    if (!(st->path = strdup(rd->path)))
        return pm_rd_oom(rd);
    for (int k = 0; k < PM_NCELLS; k++) {
        hsize_t dims[3] = {d->T, d->R, k == 3 ? d->E : d->G};
        int nd = pm_schema_ndims(pm_cell_sets[k]);
        hid_t type, space;
        int bad;

        if (!pm_schema_needed(pm_cell_sets[k]) && !pm_rd_link_exists(rd, pm_schema_path(pm_cell_sets[k])))
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
            return pm_rd_fail(rd, "missing dataset %s", pm_schema_path(pm_cell_sets[k]));
        }
        type = H5Dget_type(st->dset[k]);
        space = H5Dget_space(st->dset[k]);
        bad = type < 0 || space < 0 || H5Tget_class(type) != H5T_INTEGER;
        if (bad)
            pm_rd_fail(rd, "%s is not an integer array", pm_schema_path(pm_cell_sets[k]));
        else
            bad = pm_rd_check_shape(rd, pm_schema_path(pm_cell_sets[k]), pm_schema_dims(pm_cell_sets[k]), space, nd,
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
    d->has_visit_data = pm_rd_has_visit_data(rd);
    return 0;
}

/* A block's buffers: buf[k] holds cap rows of width[k] words (at least
 * one word each, so that every pointer is valid). On failure all are
 * freed (NULL). */
static int pm_block_alloc(void **buf, int n, const size_t *width, size_t cap)
{
    for (int k = 0; k < n; k++) {
        size_t words;

        if (pm_rd_mul(width[k] ? width[k] : 1, cap ? cap : 1, &words) < 0 ||
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
                 (size_t)start[0], (size_t)(start[0] + count[0] - 1), pm_rd_hdf5_reason(&why));
        pm_rd_oneline(err);
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

const char *pm_totals_from_name(uint8_t from)
{
    static const char *const names[] = {"own", "at_exit", "first_region", "proc", "none"};
    return from < sizeof names / sizeof *names ? names[from] : "own";
}

void pm_thread_rows_free(struct pm_thread_rows *b)
{
    for (size_t i = 0; b->own && i < b->nt; i++) {
        free(b->own[i].host);
        free(b->own[i].binding);
        free(b->own[i].name);
        free(b->own[i].start);
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
    rc = pm_rd_thread_block(&rd, b, t0, nt);
    pm_read_end();
    H5Eclear2(H5E_DEFAULT);
    H5Eset_auto2(H5E_DEFAULT, old_func, old_data);
    return rc;
}

void pm_rd_close_stream(struct pm_file *d)
{
    if (!d->stream)
        return;
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
