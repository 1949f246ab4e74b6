/*
 * read_file.c — load a perfmark HDF5 file (schema 1) into a struct pm_file:
 * the version, root attributes, tables, whole-file cells or an open stream,
 * totals, rank rows, messages and flag names, in that order.
 *
 * Every shape is checked against T/R/E/G, so a truncated, foreign or corrupt
 * file ends here with a message instead of reaching the model. HDF5's own
 * error printing is switched off for the duration of the load: the caller
 * gets one line, not an error stack.
 */
#include "read_internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int pm_load_version(struct pm_rd *rd, struct pm_file *d)
{
    hid_t attr = -1;
    int64_t v = 0;
    int rc = pm_rd_attr_open(rd, pm_schema_name(PM_S_SCHEMA_VERSION), &attr);

    if (rc < 0)
        return -1;
    if (rc == 0)
        return pm_rd_fail(rd, "not a perfmark file (no %s attribute)", pm_schema_name(PM_S_SCHEMA_VERSION));
    rc = pm_rd_attr_read_int(attr, H5T_NATIVE_INT64, &v);
    H5Aclose(attr);
    if (rc < 0)
        return pm_rd_fail(rd, "not a perfmark file (schema_version is not an integer)");
    if (v > PM_SCHEMA_VERSION)
        return pm_rd_fail(rd, "written by a newer perfmark (schema %lld); this reader knows %d",
                       (long long)v, PM_SCHEMA_VERSION);
    if (v < 1)
        return pm_rd_fail(rd, "not a perfmark file (schema_version %lld)", (long long)v);
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
        {PM_S_THREADS_SEEN, offsetof(struct pm_file, threads_seen)},
    };
    int64_t groups = -1;
    int rc;

    for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++)
        if (pm_rd_attr_str(rd, pm_schema_name(strs[i].id), (char **)((char *)d + strs[i].off)) < 0)
            return -1;
    d->bind_cpu = -1;
    if (pm_rd_attr_int(rd, pm_schema_name(PM_S_PID), H5T_NATIVE_INT64, &d->pid) < 0 ||
        pm_rd_attr_int(rd, pm_schema_name(PM_S_DURATION_NS), H5T_NATIVE_UINT64, &d->duration_ns) < 0 ||
        pm_rd_attr_int(rd, pm_schema_name(PM_S_BIND_CPU), H5T_NATIVE_INT32, &d->bind_cpu) < 0 ||
        pm_rd_attr_int(rd, pm_schema_name(PM_S_PARTIAL), H5T_NATIVE_UINT8, &d->partial) < 0 ||
        pm_rd_attr_int(rd, pm_schema_name(PM_S_RANK), H5T_NATIVE_INT32, &d->rank) < 0 ||
        pm_rd_attr_int(rd, pm_schema_name(PM_S_RANKS), H5T_NATIVE_INT32, &d->ranks) < 0 ||
        pm_rd_attr_int(rd, pm_schema_name(PM_S_TOPDOWN_LEVELS), H5T_NATIVE_INT32, &d->topdown_levels) < 0)
        return -1;
    rc = pm_rd_attr_int(rd, pm_schema_name(PM_S_KERNEL_GROUPS), H5T_NATIVE_INT64, &groups);
    if (rc < 0)
        return -1;
    if (rc == 0)
        return pm_rd_fail(rd, "no %s attribute", pm_schema_name(PM_S_KERNEL_GROUPS));
    /* G sizes the [T,R,G] arrays: refuse nonsense before allocating. */
    if (groups < 0 || groups > 4096)
        return pm_rd_fail(rd, "%s = %lld is out of range", pm_schema_name(PM_S_KERNEL_GROUPS),
                       (long long)groups);
    d->kernel_groups = (int32_t)groups;
    d->G = (size_t)groups;
    return 0;
}

/* ------------------------------------------------------------- loading */


static int pm_load_cells(struct pm_rd *rd, struct pm_file *d)
{
    hsize_t tr[2] = {d->T, d->R};
    hsize_t tre[3] = {d->T, d->R, d->E};
    hsize_t trg[3] = {d->T, d->R, d->G};

    if (pm_rd_read_dataset(rd, PM_S_REGION_VISITS, tr, (void **)&d->visits) < 0 ||
        pm_rd_read_dataset(rd, PM_S_REGION_WALL_NS, tr, (void **)&d->wall_ns) < 0 ||
        pm_rd_read_dataset(rd, PM_S_REGION_FLAGS, tr, (void **)&d->flags) < 0 ||
        pm_rd_read_dataset(rd, PM_S_REGION_COUNTS, tre, (void **)&d->counts) < 0 ||
        pm_rd_read_dataset(rd, PM_S_REGION_ENABLED_NS, trg, (void **)&d->enabled_ns) < 0 ||
        pm_rd_read_dataset(rd, PM_S_REGION_RUNNING_NS, trg, (void **)&d->running_ns) < 0 ||
        pm_rd_read_dataset(rd, PM_S_REGION_BYTES, tr, (void **)&d->bytes) < 0 ||
        pm_rd_read_dataset(rd, PM_S_REGION_BYTES_UNKNOWN, tr, (void **)&d->bytes_unknown) < 0 ||
        pm_rd_read_dataset(rd, PM_S_REGION_READS, tr, (void **)&d->reads) < 0 ||
        pm_rd_read_dataset(rd, PM_S_REGION_TIMER_VISITS, tr, (void **)&d->timer_visits) < 0 ||
        pm_rd_read_dataset(rd, PM_S_REGION_THROTTLED_FROM, tr, (void **)&d->throttled_from) < 0)
        return -1;
    /* absent: every visit was timed (pm_file_rows gives visits) */
    if (pm_rd_link_exists(rd, pm_schema_path(PM_S_REGION_TIMED_VISITS)) &&
        pm_rd_read_dataset(rd, PM_S_REGION_TIMED_VISITS, tr, (void **)&d->timed_visits) < 0)
        return -1;
    d->has_visit_data = pm_rd_has_visit_data(rd);
    return 0;
}


static int pm_load_thread_totals(struct pm_rd *rd, struct pm_file *d)
{
    hsize_t t[1] = {d->T};
    hsize_t te[2] = {d->T, d->E};
    hsize_t tg[2] = {d->T, d->G};

    if (d->stream)
        return pm_rd_open_totals(rd, d);
    if (pm_rd_read_dataset(rd, PM_S_THREAD_WALL_NS, t, (void **)&d->thread_wall_ns) < 0 ||
        pm_rd_read_dataset(rd, PM_S_THREAD_COUNTS, te, (void **)&d->thread_counts) < 0 ||
        pm_rd_read_dataset(rd, PM_S_THREAD_ENABLED_NS, tg, (void **)&d->thread_enabled_ns) < 0 ||
        pm_rd_read_dataset(rd, PM_S_THREAD_RUNNING_NS, tg, (void **)&d->thread_running_ns) < 0 ||
        pm_rd_read_dataset(rd, PM_S_THREAD_FLAGS, t, (void **)&d->thread_flags) < 0 ||
        pm_rd_read_dataset(rd, PM_S_THREAD_READS, t, (void **)&d->thread_reads) < 0 ||
        pm_rd_read_dataset(rd, PM_S_THREAD_READ_COST_NS, t, (void **)&d->thread_read_cost_ns) < 0)
        return -1;
    d->has_read_cost = pm_rd_link_exists(rd, pm_schema_path(PM_S_THREAD_READ_COST_NS));
    return 0;
}

/* /rank is optional: absent, or without counts, means zero rows. */
static int pm_load_rank(struct pm_rd *rd, struct pm_file *d)
{
    hsize_t ne[2] = {PM_ANY, d->E};
    hsize_t ng[2];

    if (!pm_rd_link_exists(rd, pm_schema_path(PM_S_RANKGRP)) ||
        !pm_rd_link_exists(rd, pm_schema_path(PM_S_RANK_COUNTS)))
        return 0;
    if (pm_rd_read_dataset(rd, PM_S_RANK_COUNTS, ne, (void **)&d->rank_counts) < 0)
        return -1;
    d->N = (size_t)ne[0];
    ng[0] = d->N;
    ng[1] = d->G;
    if (pm_rd_read_dataset(rd, PM_S_RANK_ENABLED_NS, ng, (void **)&d->rank_enabled_ns) < 0 ||
        pm_rd_read_dataset(rd, PM_S_RANK_RUNNING_NS, ng, (void **)&d->rank_running_ns) < 0)
        return -1;
    return 0;
}

static int pm_load_messages(struct pm_rd *rd, struct pm_file *d)
{
    if (!pm_rd_link_exists(rd, pm_schema_path(PM_S_MESSAGES)))
        return 0;
    return pm_rd_read_strings(rd, PM_S_MESSAGES, &d->messages, &d->M);
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
            return pm_rd_oom(rd);
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
    if (type >= 0 && H5Tget_class(type) == H5T_INTEGER && pm_rd_attr_single(attr) &&
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
            return pm_rd_oom(rd);
    pm_read_begin("dataset '/region/flags'");
    dset = H5Dopen2(rd->file, pm_schema_path(PM_S_REGION_FLAGS), H5P_DEFAULT);
    if (dset >= 0) {
        H5Aiterate2(dset, H5_INDEX_NAME, H5_ITER_INC, NULL, pm_flag_attr, &scan);
        H5Dclose(dset);
    }
    if (scan.oom)
        return pm_rd_oom(rd);
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

static int pm_load(struct pm_rd *rd, struct pm_file *d, int stream)
{
    if (pm_rd_open(rd) < 0 || pm_load_version(rd, d) < 0 || pm_load_attrs(rd, d) < 0 ||
        pm_rd_load_tables(rd, d, stream) < 0 ||
        (stream ? pm_rd_open_cells(rd, d) : pm_load_cells(rd, d)) < 0 ||
        pm_rd_load_samples(rd, d, stream) < 0 || pm_rd_load_series(rd, d) < 0 ||
        pm_rd_load_node(rd, d) < 0 || pm_rd_load_summary(rd, d) < 0 ||
        pm_load_thread_totals(rd, d) < 0 || pm_load_rank(rd, d) < 0 ||
        pm_load_messages(rd, d) < 0 || pm_fill_paths(rd, d) < 0 || pm_load_flagnames(rd, d) < 0)
        return -1;
    d->chunk_threads = pm_rd_chunk_rows(rd->file);
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
        return pm_rd_fail(&rd, "no file name given");
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
                     &d->topdown_method, &d->cpu_model, &d->throttle, &d->threads_seen};

    for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++)
        free(*strs[i]);
    pm_rd_free_tables(d);
    pm_rd_free_samples(d);
    pm_rd_free_node(d);
    pm_rd_free_summary(d);
    free(d->series_interval);
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
    pm_rd_close_stream(d);
    memset(d, 0, sizeof *d);
}
