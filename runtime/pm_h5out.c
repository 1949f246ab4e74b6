#include "pm_h5out.h"
#include "pm_flags.h"
#include "pm_log.h"
#include "pm_names.h"

#include <errno.h>
#include <hdf5.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Datasets larger than this many elements are chunked and compressed. */
#define PM_CHUNK_THRESHOLD 65536

/* ---- merging regions by path ------------------------------------------------- */

struct pm_merged {
    int32_t n, cap;
    int32_t *parent, *name, *depth;
    int32_t *hash;      /* region + 1, 0 empty */
    uint32_t mask;
    int32_t **map;      /* per thread: node → region */
};

static uint32_t pm_merge_hash(int32_t parent, int32_t name, uint32_t mask)
{
    uint64_t key = (uint64_t)(uint32_t)(parent + 1) << 32 | (uint32_t)name;
    return (uint32_t)((key * 0x9E3779B97F4A7C15ull) >> 32) & mask;
}

static int pm_merge_grow(struct pm_merged *m)
{
    int32_t cap = m->cap ? m->cap * 2 : 256;
    int32_t *p = realloc(m->parent, (size_t)cap * sizeof *p);
    if (!p)
        return -1;
    m->parent = p;
    if (!(p = realloc(m->name, (size_t)cap * sizeof *p)))
        return -1;
    m->name = p;
    if (!(p = realloc(m->depth, (size_t)cap * sizeof *p)))
        return -1;
    m->depth = p;
    m->cap = cap;
    uint32_t size = (uint32_t)cap * 2;
    int32_t *hash = calloc(size, sizeof *hash);
    if (!hash)
        return -1;
    for (int32_t r = 0; r < m->n; r++) {
        uint32_t h = pm_merge_hash(m->parent[r], m->name[r], size - 1);
        while (hash[h])
            h = (h + 1) & (size - 1);
        hash[h] = r + 1;
    }
    free(m->hash);
    m->hash = hash;
    m->mask = size - 1;
    return 0;
}

static int32_t pm_merge_find(struct pm_merged *m, int32_t parent, int32_t name, int32_t depth)
{
    if (m->n == m->cap && pm_merge_grow(m) != 0)
        return -1;
    uint32_t h = pm_merge_hash(parent, name, m->mask);
    for (; m->hash[h]; h = (h + 1) & m->mask) {
        int32_t r = m->hash[h] - 1;
        if (m->parent[r] == parent && m->name[r] == name)
            return r;
    }
    int32_t r = m->n++;
    m->parent[r] = parent;
    m->name[r] = name;
    m->depth[r] = depth;
    m->hash[h] = r + 1;
    return r;
}

static void pm_merge_free(struct pm_merged *m, int32_t nthreads)
{
    if (m->map)
        for (int32_t t = 0; t < nthreads; t++)
            free(m->map[t]);
    free(m->map), free(m->parent), free(m->name), free(m->depth), free(m->hash);
}

/* Thread node arrays list parents before children, so one pass suffices. */
static int pm_merge(struct pm_merged *m, const struct pm_output *o)
{
    memset(m, 0, sizeof *m);
    if (pm_merge_grow(m) != 0 || !(m->map = calloc((size_t)o->nthreads + 1, sizeof *m->map)))
        return -1;
    for (int32_t t = 0; t < o->nthreads; t++) {
        const struct pm_thread *th = o->threads[t];
        m->map[t] = malloc(((size_t)th->nnodes + 1) * sizeof **m->map);
        if (!m->map[t])
            return -1;
        for (int32_t n = 0; n < th->nnodes; n++) {
            const struct pm_node *node = &th->nodes[n];
            int32_t parent = node->parent < 0 ? -1 : m->map[t][node->parent];
            m->map[t][n] = pm_merge_find(m, parent, node->name, (int32_t)node->depth);
            if (m->map[t][n] < 0)
                return -1;
        }
    }
    return 0;
}

/* ---- HDF5 helpers ---------------------------------------------------------------- */

static hid_t pm_string_type(void)
{
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, H5T_VARIABLE);
    H5Tset_cset(t, H5T_CSET_UTF8);
    return t;
}

static int pm_attr_string(hid_t loc, const char *name, const char *value)
{
    hid_t type = pm_string_type(), space = H5Screate(H5S_SCALAR);
    hid_t attr = H5Acreate2(loc, name, type, space, H5P_DEFAULT, H5P_DEFAULT);
    herr_t rc = attr < 0 ? -1 : H5Awrite(attr, type, &value);
    if (attr >= 0)
        H5Aclose(attr);
    H5Sclose(space), H5Tclose(type);
    return rc < 0 ? -1 : 0;
}

static int pm_attr_scalar(hid_t loc, const char *name, hid_t type, const void *value)
{
    hid_t space = H5Screate(H5S_SCALAR);
    hid_t attr = H5Acreate2(loc, name, type, space, H5P_DEFAULT, H5P_DEFAULT);
    herr_t rc = attr < 0 ? -1 : H5Awrite(attr, type, value);
    if (attr >= 0)
        H5Aclose(attr);
    H5Sclose(space);
    return rc < 0 ? -1 : 0;
}

static int pm_dataset(hid_t loc, const char *name, hid_t type, int rank, const hsize_t *dims,
                      const void *data)
{
    hsize_t total = 1;
    for (int i = 0; i < rank; i++)
        total *= dims[i];
    hid_t space = H5Screate_simple(rank, dims, NULL);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    if (total > PM_CHUNK_THRESHOLD) {
        hsize_t chunk[3];
        hsize_t budget = PM_CHUNK_THRESHOLD;  /* elements per chunk, last dims first */
        for (int i = rank - 1; i >= 0; i--) {
            chunk[i] = dims[i] < budget ? dims[i] : budget;
            if (chunk[i] == 0)
                chunk[i] = 1;
            budget = budget / chunk[i] ? budget / chunk[i] : 1;
        }
        H5Pset_chunk(dcpl, rank, chunk);
        H5Pset_shuffle(dcpl);
        H5Pset_deflate(dcpl, 4);
    }
    hid_t ds = H5Dcreate2(loc, name, type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    herr_t rc = ds < 0 ? -1 : (total ? H5Dwrite(ds, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) : 0);
    if (ds >= 0)
        H5Dclose(ds);
    H5Pclose(dcpl), H5Sclose(space);
    return rc < 0 ? -1 : 0;
}

/* ---- tables --------------------------------------------------------------------- */

/* A compound row type as data: one line per field. */
enum pm_field_type { PM_F_STR, PM_F_I32, PM_F_U32, PM_F_I64, PM_F_U64, PM_F_U8 };

struct pm_field {
    const char *name;
    size_t offset;
    enum pm_field_type type;
};

#define PM_FIELD(row, member, type) {#member, offsetof(struct row, member), type}

static hid_t pm_field_h5type(enum pm_field_type type, hid_t str)
{
    switch (type) {
    case PM_F_STR: return str;
    case PM_F_I32: return H5T_NATIVE_INT32;
    case PM_F_U32: return H5T_NATIVE_UINT32;
    case PM_F_I64: return H5T_NATIVE_INT64;
    case PM_F_U64: return H5T_NATIVE_UINT64;
    case PM_F_U8: return H5T_NATIVE_UINT8;
    }
    return str;
}

/* Write `n` rows of `row_size` bytes described by `fields` as a 1-D
 * compound dataset. */
static int pm_write_table(hid_t loc, const char *name, const struct pm_field *fields,
                          size_t nfields, size_t row_size, hsize_t n, const void *rows)
{
    hid_t str = pm_string_type();
    hid_t t = H5Tcreate(H5T_COMPOUND, row_size);
    for (size_t i = 0; i < nfields; i++)
        H5Tinsert(t, fields[i].name, fields[i].offset, pm_field_h5type(fields[i].type, str));
    hsize_t dims[1] = {n};
    int rc = pm_dataset(loc, name, t, 1, dims, rows);
    H5Tclose(t), H5Tclose(str);
    return rc;
}

struct pm_h5_event {
    const char *name, *pfm_name;
    int32_t group;
    uint32_t type;
    uint64_t config, config1, config2;
    uint8_t exclude_user, exclude_kernel;
};

static int pm_write_events(hid_t file, const struct pm_eventset *set)
{
    struct pm_h5_event rows[PM_MAX_EVENTS];
    for (int i = 0; i < set->n; i++) {
        const struct pm_event *e = &set->ev[i];
        rows[i] = (struct pm_h5_event){e->name, e->pfm_name, e->group, e->attr.type,
                                       e->attr.config, e->attr.config1, e->attr.config2,
                                       (uint8_t)e->attr.exclude_user,
                                       (uint8_t)e->attr.exclude_kernel};
    }
    static const struct pm_field fields[] = {
        PM_FIELD(pm_h5_event, name, PM_F_STR), PM_FIELD(pm_h5_event, pfm_name, PM_F_STR),
        PM_FIELD(pm_h5_event, group, PM_F_I32), PM_FIELD(pm_h5_event, type, PM_F_U32),
        PM_FIELD(pm_h5_event, config, PM_F_U64), PM_FIELD(pm_h5_event, config1, PM_F_U64),
        PM_FIELD(pm_h5_event, config2, PM_F_U64),
        PM_FIELD(pm_h5_event, exclude_user, PM_F_U8),
        PM_FIELD(pm_h5_event, exclude_kernel, PM_F_U8),
    };
    return pm_write_table(file, "events", fields, sizeof fields / sizeof *fields,
                          sizeof *rows, (hsize_t)set->n, rows);
}

struct pm_h5_region {
    const char *name;
    int32_t parent, depth;
    const char *kind, *path;
};

static int pm_write_regions(hid_t file, const struct pm_merged *m)
{
    struct pm_h5_region *rows = calloc((size_t)m->n + 1, sizeof *rows);
    char **paths = calloc((size_t)m->n + 1, sizeof *paths);
    int rc = -1;
    if (!rows || !paths)
        goto out;
    for (int32_t r = 0; r < m->n; r++) {
        const char *name = pm_name_get(m->name[r]);
        const char *up = m->parent[r] < 0 ? NULL : paths[m->parent[r]];
        size_t len = strlen(name) + (up ? strlen(up) + 1 : 0) + 1;
        if (!(paths[r] = malloc(len)))
            goto out;
        snprintf(paths[r], len, "%s%s%s", up ? up : "", up ? "/" : "", name);
        rows[r] = (struct pm_h5_region){name, m->parent[r], m->depth[r],
                                        pm_kind_names[pm_name_kind(m->name[r])], paths[r]};
    }
    static const struct pm_field fields[] = {
        PM_FIELD(pm_h5_region, name, PM_F_STR), PM_FIELD(pm_h5_region, parent, PM_F_I32),
        PM_FIELD(pm_h5_region, depth, PM_F_I32), PM_FIELD(pm_h5_region, kind, PM_F_STR),
        PM_FIELD(pm_h5_region, path, PM_F_STR),
    };
    rc = pm_write_table(file, "regions", fields, sizeof fields / sizeof *fields, sizeof *rows,
                        (hsize_t)m->n, rows);
out:
    if (paths)
        for (int32_t r = 0; r < m->n; r++)
            free(paths[r]);
    free(paths), free(rows);
    return rc;
}

struct pm_h5_thread {
    int32_t rank, thread;
    int64_t pid, tid;
    const char *host;
    int32_t cpu_first, cpu_last;
    uint8_t exited;
    int32_t open_at_end;
};

static int pm_write_threads(hid_t file, const struct pm_output *o)
{
    struct pm_h5_thread *rows = calloc((size_t)o->nthreads + 1, sizeof *rows);
    if (!rows)
        return -1;
    for (int32_t i = 0; i < o->nthreads; i++) {
        const struct pm_thread *t = o->threads[i];
        rows[i] = (struct pm_h5_thread){o->rank, t->index, o->pid, t->tid, o->host, t->cpu_first,
                                        t->cpu_last, (uint8_t)t->exited, t->open_at_end};
    }
    static const struct pm_field fields[] = {
        PM_FIELD(pm_h5_thread, rank, PM_F_I32), PM_FIELD(pm_h5_thread, thread, PM_F_I32),
        PM_FIELD(pm_h5_thread, pid, PM_F_I64), PM_FIELD(pm_h5_thread, tid, PM_F_I64),
        PM_FIELD(pm_h5_thread, host, PM_F_STR), PM_FIELD(pm_h5_thread, cpu_first, PM_F_I32),
        PM_FIELD(pm_h5_thread, cpu_last, PM_F_I32), PM_FIELD(pm_h5_thread, exited, PM_F_U8),
        PM_FIELD(pm_h5_thread, open_at_end, PM_F_I32),
    };
    int rc = pm_write_table(file, "threads", fields, sizeof fields / sizeof *fields,
                            sizeof *rows, (hsize_t)o->nthreads, rows);
    free(rows);
    return rc;
}

static int pm_write_messages(hid_t file)
{
    size_t n = pm_msg_count();
    const char **rows = calloc(n + 1, sizeof *rows);
    if (!rows)
        return -1;
    for (size_t i = 0; i < n; i++)
        rows[i] = pm_msg_get(i);
    hid_t str = pm_string_type();
    hsize_t dims[1] = {(hsize_t)n};
    int rc = pm_dataset(file, "messages", str, 1, dims, rows);
    H5Tclose(str);
    free(rows);
    return rc;
}

/* ---- the per-(thread, region) arrays ------------------------------------------------- */

static int pm_write_cells(hid_t file, const struct pm_output *o, const struct pm_merged *m)
{
    const hsize_t T = (hsize_t)o->nthreads, R = (hsize_t)m->n;
    const hsize_t E = (hsize_t)o->set->n, G = (hsize_t)o->set->ngroups;
    const unsigned stride = pm_stride(o->set);
    uint64_t *visits = calloc(T * R + 1, 8), *wall = calloc(T * R + 1, 8);
    uint64_t *bytes = calloc(T * R + 1, 8), *bytes_unknown = calloc(T * R + 1, 8);
    uint32_t *flags = calloc(T * R + 1, 4);
    uint64_t *counts = calloc(T * R * E + 1, 8);
    uint64_t *ena = calloc(T * R * G + 1, 8), *run = calloc(T * R * G + 1, 8);
    int rc = -1;
    if (!visits || !wall || !flags || !counts || !ena || !run || !bytes || !bytes_unknown)
        goto out;
    for (hsize_t t = 0; t < T; t++) {
        const struct pm_thread *th = o->threads[t];
        for (int32_t n = 0; n < th->nnodes; n++) {
            hsize_t cell = t * R + (hsize_t)m->map[t][n];
            const struct pm_node *node = &th->nodes[n];
            const uint64_t *acc = th->acc + (size_t)n * stride;
            visits[cell] += node->visits;
            bytes[cell] += node->bytes;
            bytes_unknown[cell] += node->bytes_unknown;
            wall[cell] += (uint64_t)((double)node->ticks * o->ns_per_tick + 0.5);
            flags[cell] |= node->flags | (o->partial ? PM_FLAG_PARTIAL : 0);
            for (hsize_t e = 0; e < E; e++)
                counts[cell * E + e] += acc[e];
            for (hsize_t g = 0; g < G; g++) {
                ena[cell * G + g] += acc[E + g];
                run[cell * G + g] += acc[E + G + g];
            }
        }
    }
    hid_t grp = H5Gcreate2(file, "region", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    if (grp < 0)
        goto out;
    hsize_t d2[2] = {T, R}, d3e[3] = {T, R, E}, d3g[3] = {T, R, G};
    rc = pm_dataset(grp, "visits", H5T_NATIVE_UINT64, 2, d2, visits);
    rc |= pm_dataset(grp, "wall_ns", H5T_NATIVE_UINT64, 2, d2, wall);
    rc |= pm_dataset(grp, "counts", H5T_NATIVE_UINT64, 3, d3e, counts);
    rc |= pm_dataset(grp, "enabled_ns", H5T_NATIVE_UINT64, 3, d3g, ena);
    rc |= pm_dataset(grp, "running_ns", H5T_NATIVE_UINT64, 3, d3g, run);
    rc |= pm_dataset(grp, "flags", H5T_NATIVE_UINT32, 2, d2, flags);
    rc |= pm_dataset(grp, "bytes", H5T_NATIVE_UINT64, 2, d2, bytes);
    rc |= pm_dataset(grp, "bytes_unknown", H5T_NATIVE_UINT64, 2, d2, bytes_unknown);
    hid_t fds = rc ? -1 : H5Dopen2(grp, "flags", H5P_DEFAULT);
    for (size_t i = 0; fds >= 0 && i < sizeof pm_flag_names / sizeof *pm_flag_names; i++)
        rc |= pm_attr_scalar(fds, pm_flag_names[i].name, H5T_NATIVE_UINT32,
                             &pm_flag_names[i].bit);
    if (fds >= 0)
        H5Dclose(fds);
    H5Gclose(grp);
out:
    free(visits), free(wall), free(flags), free(counts), free(ena), free(run);
    free(bytes), free(bytes_unknown);
    return rc ? -1 : 0;
}

/* Split stride-word readings into counts [N,E], enabled [N,G], running [N,G]. */
static int pm_write_readings(hid_t grp, const struct pm_eventset *set, hsize_t rows,
                             const uint64_t *const *readings)
{
    const hsize_t E = (hsize_t)set->n, G = (hsize_t)set->ngroups;
    uint64_t *counts = calloc(rows * E + 1, 8), *ena = calloc(rows * G + 1, 8),
             *run = calloc(rows * G + 1, 8);
    int rc = -1;
    if (counts && ena && run) {
        for (hsize_t r = 0; r < rows; r++) {
            memcpy(counts + r * E, readings[r], E * 8);
            memcpy(ena + r * G, readings[r] + E, G * 8);
            memcpy(run + r * G, readings[r] + E + G, G * 8);
        }
        hsize_t de[2] = {rows, E}, dg[2] = {rows, G};
        rc = pm_dataset(grp, "counts", H5T_NATIVE_UINT64, 2, de, counts);
        rc |= pm_dataset(grp, "enabled_ns", H5T_NATIVE_UINT64, 2, dg, ena);
        rc |= pm_dataset(grp, "running_ns", H5T_NATIVE_UINT64, 2, dg, run);
    }
    free(counts), free(ena), free(run);
    return rc ? -1 : 0;
}

static int pm_write_totals(hid_t file, const struct pm_output *o)
{
    hsize_t T = (hsize_t)o->nthreads, N = o->totals ? 1 : 0;
    const uint64_t **readings = calloc(T + 1, sizeof *readings);
    uint64_t *wall = calloc(T + 1, sizeof *wall);
    uint32_t *flags = calloc(T + 1, sizeof *flags);
    int rc = -1;
    if (!readings || !wall || !flags)
        goto out;
    for (hsize_t t = 0; t < T; t++) {
        const struct pm_thread *th = o->threads[t];
        readings[t] = th->total;
        wall[t] = (uint64_t)((double)(th->end_ticks - th->start_ticks) * o->ns_per_tick);
        flags[t] = th->total_flags | (o->partial ? PM_FLAG_PARTIAL : 0);
    }
    hid_t grp = H5Gcreate2(file, "thread", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    rc = grp < 0 ? -1 : pm_write_readings(grp, o->set, T, readings);
    if (grp >= 0) {
        hsize_t d1[1] = {T};
        rc |= pm_dataset(grp, "wall_ns", H5T_NATIVE_UINT64, 1, d1, wall);
        rc |= pm_dataset(grp, "flags", H5T_NATIVE_UINT32, 1, d1, flags);
        H5Gclose(grp);
    }
    grp = H5Gcreate2(file, "rank", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    const uint64_t *rank[1] = {o->totals};
    int32_t rank_id[1] = {o->rank};
    rc |= grp < 0 ? -1 : pm_write_readings(grp, o->set, N, rank);
    if (grp >= 0) {
        hsize_t d1[1] = {N};
        rc |= pm_dataset(grp, "rank", H5T_NATIVE_INT32, 1, d1, rank_id);
        H5Gclose(grp);
    }
out:
    free(readings), free(wall), free(flags);
    return rc ? -1 : 0;
}

static int pm_write_root_attrs(hid_t file, const struct pm_output *o)
{
    const struct pm_eventset *set = o->set;
    char measured[PM_MAX_EVENTS * (PM_EVENT_NAME_LEN + 1) + 1] = "";
    for (int i = 0; i < set->n; i++) {
        size_t used = strlen(measured);
        snprintf(measured + used, sizeof measured - used, "%s%s", i ? "," : "",
                 set->ev[i].name);
    }
    int32_t version = PM_SCHEMA_VERSION, groups = set->ngroups, cpu = o->bind_cpu;
    int64_t pid = o->pid;
    uint8_t partial = (uint8_t)o->partial;
    int rc = pm_attr_scalar(file, "schema_version", H5T_NATIVE_INT32, &version);
    rc |= pm_attr_string(file, "perfmark_version", PERFMARK_VERSION);
    rc |= pm_attr_string(file, "command", o->command);
    rc |= pm_attr_string(file, "host", o->host);
    rc |= pm_attr_scalar(file, "pid", H5T_NATIVE_INT64, &pid);
    rc |= pm_attr_string(file, "start_time", o->start_time);
    rc |= pm_attr_scalar(file, "duration_ns", H5T_NATIVE_UINT64, &o->duration_ns);
    rc |= pm_attr_string(file, "clock", o->clock);
    rc |= pm_attr_string(file, "events_requested", set->requested);
    rc |= pm_attr_string(file, "events_measured", measured);
    rc |= pm_attr_string(file, "event_group", set->n ? set->group_name : "none");
    rc |= pm_attr_string(file, "fallback", set->fallback);
    rc |= pm_attr_scalar(file, "kernel_groups", H5T_NATIVE_INT32, &groups);
    rc |= pm_attr_scalar(file, "bind_cpu", H5T_NATIVE_INT32, &cpu);
    rc |= pm_attr_scalar(file, "partial", H5T_NATIVE_UINT8, &partial);
    int32_t rank = o->rank, ranks = o->ranks;
    rc |= pm_attr_scalar(file, "rank", H5T_NATIVE_INT32, &rank);
    rc |= pm_attr_scalar(file, "ranks", H5T_NATIVE_INT32, &ranks);
    return rc ? -1 : 0;
}

int pm_h5out_write(const char *path, const struct pm_output *o, char *err, size_t errlen)
{
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);  /* our message, not HDF5's stack dump */
    struct pm_merged m;
    if (pm_merge(&m, o) != 0) {
        pm_merge_free(&m, o->nthreads);
        snprintf(err, errlen, "out of memory merging regions");
        return -1;
    }
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_libver_bounds(fapl, H5F_LIBVER_EARLIEST, H5F_LIBVER_LATEST);
    errno = 0;
    hid_t file = H5Fcreate(path, H5F_ACC_EXCL, H5P_DEFAULT, fapl);
    H5Pclose(fapl);
    if (file < 0) {
        int e = errno;
        pm_merge_free(&m, o->nthreads);
        snprintf(err, errlen, "cannot create %s: %s", path, e ? strerror(e) : "HDF5 error");
        return -1;
    }
    int rc = pm_write_root_attrs(file, o);
    rc |= pm_write_events(file, o->set);
    rc |= pm_write_regions(file, &m);
    rc |= pm_write_threads(file, o);
    rc |= pm_write_cells(file, o, &m);
    rc |= pm_write_totals(file, o);
    rc |= pm_write_messages(file);
    rc |= H5Fclose(file) < 0;
    pm_merge_free(&m, o->nthreads);
    if (rc) {
        unlink(path);
        snprintf(err, errlen, "writing %s failed (disk full or HDF5 error)", path);
        return -1;
    }
    return 0;
}
