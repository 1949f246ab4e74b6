/*
 * gen_synthetic.c — write a synthetic perfmark job file (schema 1,
 * docs/hdf5-schema.md) of any size, for the report scale benchmark
 * (bench/run_report_scale.sh) and its CTest smoke test.
 *
 * usage: gen_synthetic OUT.h5 RANKS THREADS_PER_RANK REGIONS EVENTS(1..8)
 *
 * The layout is the MPI job writer's (runtime/file/pm_h5out.c): one file, rank
 * = -1, every rank's threads as /threads rows in rank order, datasets over
 * 65,536 elements chunked (last dimensions first), shuffled and deflated at
 * level 4. Like the writer, it takes every path, attribute and member name,
 * shape and number type from the schema table (schema/pm_schema.def). It
 * writes an older subset of the table: no /rank, nothing of revision 4 or
 * later, of revision 3 only /region/windows and the root attributes
 * topdown_method, topdown_levels, openmp and cpu_model. The numbers are
 * deterministic (a hash of the cell) and consistent: a parent's wall time
 * exceeds the sum of its children's, every 97th cell is MULTIPLEXED
 * (running = enabled / 2), every 101st thread skips the deepest regions.
 * Rows are written in slabs of threads, so the generator's memory does not
 * grow with the number of ranks.
 */
#include <hdf5.h>

#include "pm_schema_h5.h"

#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PM_GEN_CHUNK 65536 /* = PM_CHUNK_THRESHOLD of runtime/file/pm_h5out.c */
#define PM_GEN_SLAB 256    /* thread rows written at a time */
#define PM_GEN_GROUPS 1    /* G: one kernel counter group (the kernel_groups attribute) */
#define PM_GEN_STR64 PM_SCHEMA_STR64

static const char *const pm_gen_events[8][2] = {
    {"cycles", "perf::PERF_COUNT_HW_CPU_CYCLES:u"},
    {"instructions", "perf::PERF_COUNT_HW_INSTRUCTIONS:u"},
    {"task-clock", "perf::PERF_COUNT_SW_TASK_CLOCK"},
    {"page-faults", "perf::PERF_COUNT_SW_PAGE_FAULTS"},
    {"context-switches", "perf::PERF_COUNT_SW_CONTEXT_SWITCHES"},
    {"cpu-migrations", "perf::PERF_COUNT_SW_CPU_MIGRATIONS"},
    {"minor-faults", "perf::PERF_COUNT_SW_PAGE_FAULTS_MIN"},
    {"major-faults", "perf::PERF_COUNT_SW_PAGE_FAULTS_MAJ"},
};
static const uint32_t pm_gen_type[8] = {0, 0, 1, 1, 1, 1, 1, 1};
static const uint64_t pm_gen_config[8] = {0, 1, 1, 2, 3, 4, 5, 6};

static uint64_t pm_hash(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

struct pm_gen {
    size_t ranks, tpr, T, R, E;
    int32_t *parent, *depth;
    uint64_t *subtree; /* regions in each subtree, itself included */
};

/* The cell (t, r): visits, wall, flags; counts and times follow from them. */
static void pm_gen_cell(const struct pm_gen *g, size_t t, size_t r, uint64_t *visits,
                        uint64_t *wall, uint32_t *flags)
{
    uint64_t h = pm_hash(t * 1000003u + r);

    *visits = 0;
    *wall = 0;
    *flags = 0;
    if (t % 101 == 100 && g->depth[r] >= 3)
        return; /* a thread that never reaches the deep regions */
    *visits = 1 + h % 5;
    /* above the children's sum: every child has a smaller subtree */
    *wall = g->subtree[r] * 1000 * (20 + h % 7);
    if ((t * g->R + r) % 97 == 0)
        *flags = 0x01; /* MULTIPLEXED */
}

static hid_t pm_plist(int ndims, const hsize_t *dims)
{
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    hsize_t total = 1, chunk[3], budget = PM_GEN_CHUNK;

    for (int i = 0; i < ndims; i++)
        total *= dims[i];
    if (total <= PM_GEN_CHUNK)
        return dcpl;
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

/* The HDF5 type of a number row of the table (-1 for the others). */
static hid_t pm_native(enum pm_schema_id id) { return pm_schema_native(pm_schema[id].type); }

/* STR: variable-length UTF-8. */
static hid_t pm_vstr(void)
{
    hid_t t = H5Tcopy(H5T_C_S1);

    H5Tset_size(t, H5T_VARIABLE);
    H5Tset_cset(t, H5T_CSET_UTF8);
    return t;
}

/* STR64: 64 bytes, NUL-padded. */
static hid_t pm_str64(void)
{
    hid_t t = H5Tcopy(H5T_C_S1);

    H5Tset_size(t, PM_GEN_STR64);
    H5Tset_strpad(t, H5T_STR_NULLPAD);
    return t;
}

/* The shape of dataset `id`: its DIMS column (pm_schema.def) in this file's
 * sizes. Returns the number of dimensions, or -1 for a dimension the
 * generator has no size for (N: it writes no /rank rows). */
static int pm_shape(const struct pm_gen *g, enum pm_schema_id id, hsize_t dims[3])
{
    int n = 0;

    for (const char *d = pm_schema_dims(id); *d; d++) {
        if (*d == ',')
            continue;
        if (n == 3)
            return -1;
        switch (*d) {
        case 'T': dims[n++] = g->T; break;
        case 'R': dims[n++] = g->R; break;
        case 'E': dims[n++] = g->E; break;
        case 'G': dims[n++] = PM_GEN_GROUPS; break;
        case 'M': dims[n++] = 0; break; /* no messages */
        default: return -1;
        }
    }
    return n;
}

/* Dataset `id` of the table under `loc` (its group), of type `type`; its
 * shape goes to dims. */
static hid_t pm_dataset_type(hid_t loc, const struct pm_gen *g, enum pm_schema_id id, hid_t type,
                             hsize_t dims[3])
{
    int ndims = pm_shape(g, id, dims);
    hid_t space, dcpl, ds;

    if (ndims != pm_schema_ndims(id) || type < 0)
        return -1;
    space = H5Screate_simple(ndims, dims, NULL);
    dcpl = pm_plist(ndims, dims);
    ds = H5Dcreate2(loc, pm_schema_name(id), type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    H5Pclose(dcpl);
    H5Sclose(space);
    return ds;
}

/* A number dataset: its type from the table too. */
static hid_t pm_dataset(hid_t loc, const struct pm_gen *g, enum pm_schema_id id, hsize_t dims[3])
{
    return pm_dataset_type(loc, g, id, pm_native(id), dims);
}

static hid_t pm_group(hid_t loc, enum pm_schema_id id)
{
    return H5Gcreate2(loc, pm_schema_name(id), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
}

/* Write rows [t0, t0 + n) of a [T, ...] dataset. */
static int pm_slab(hid_t ds, hid_t memtype, size_t t0, size_t n, const void *buf)
{
    hsize_t start[3] = {t0, 0, 0}, count[3];
    hid_t fs = H5Dget_space(ds), ms;
    int ndims = fs < 0 ? -1 : H5Sget_simple_extent_ndims(fs);
    herr_t rc;

    if (ndims < 1 || ndims > 3) {
        if (fs >= 0)
            H5Sclose(fs);
        return -1;
    }
    H5Sget_simple_extent_dims(fs, count, NULL);
    count[0] = n;
    ms = H5Screate_simple(ndims, count, NULL);
    H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL);
    rc = H5Dwrite(ds, memtype, ms, fs, H5P_DEFAULT, buf);
    H5Sclose(ms);
    H5Sclose(fs);
    return rc < 0 ? -1 : 0;
}

static void pm_attr_write(hid_t loc, const char *name, hid_t type, const void *value)
{
    hid_t space = H5Screate(H5S_SCALAR);
    hid_t a = H5Acreate2(loc, name, type, space, H5P_DEFAULT, H5P_DEFAULT);

    H5Awrite(a, type, value);
    H5Aclose(a);
    H5Sclose(space);
}

/* Attribute `id` of the table (a string row). */
static void pm_attr_string(hid_t loc, enum pm_schema_id id, const char *value)
{
    hid_t type = pm_vstr();

    pm_attr_write(loc, pm_schema_name(id), type, &value);
    H5Tclose(type);
}

/* Attribute `id` of the table (a number row: the table gives its type). */
static void pm_attr_scalar(hid_t loc, enum pm_schema_id id, const void *value)
{
    pm_attr_write(loc, pm_schema_name(id), pm_native(id), value);
}

static void pm_root(hid_t f, const struct pm_gen *g)
{
    char measured[512] = "";
    int32_t one = 1, minus = -1, ranks = (int32_t)g->ranks, zero = 0;
    int32_t groups = PM_GEN_GROUPS;
    int64_t pid = 4242;
    uint64_t dur = 10000000000ULL;
    uint8_t partial = 0;

    for (size_t e = 0; e < g->E; e++) {
        strcat(measured, e ? "," : "");
        strcat(measured, pm_gen_events[e][0]);
    }
    pm_attr_scalar(f, PM_S_SCHEMA_VERSION, &one);
    pm_attr_string(f, PM_S_PERFMARK_VERSION, "synthetic");
    pm_attr_string(f, PM_S_COMMAND, "gen_synthetic");
    pm_attr_string(f, PM_S_HOST, "gen");
    pm_attr_scalar(f, PM_S_PID, &pid);
    pm_attr_string(f, PM_S_START_TIME, "2026-01-01T00:00:00Z");
    pm_attr_scalar(f, PM_S_DURATION_NS, &dur);
    pm_attr_string(f, PM_S_CLOCK, "monotonic");
    pm_attr_string(f, PM_S_EVENTS_REQUESTED, "custom");
    pm_attr_string(f, PM_S_EVENTS_MEASURED, measured);
    pm_attr_string(f, PM_S_EVENT_GROUP, "custom");
    pm_attr_string(f, PM_S_FALLBACK, "");
    pm_attr_scalar(f, PM_S_KERNEL_GROUPS, &groups);
    pm_attr_scalar(f, PM_S_BIND_CPU, &minus);
    pm_attr_string(f, PM_S_TOPDOWN_METHOD, "");
    pm_attr_scalar(f, PM_S_TOPDOWN_LEVELS, &zero);
    pm_attr_string(f, PM_S_OPENMP, "");
    pm_attr_string(f, PM_S_CPU_MODEL, "");
    pm_attr_scalar(f, PM_S_PARTIAL, &partial);
    pm_attr_scalar(f, PM_S_RANK, &minus);
    pm_attr_scalar(f, PM_S_RANKS, &ranks);
}

/* ---- compound tables ---------------------------------------------------- */

/* A compound row type as data: each field's name and type from its table
 * row, its place from the C struct (as runtime/file/pm_h5out.c does). */
struct pm_field {
    enum pm_schema_id id;
    size_t offset, size;
};

#define PM_FIELD(row, member, id) \
    {PM_S_##id, offsetof(struct row, member), sizeof(((struct row *)0)->member)}
#define PM_NFIELDS(f) (sizeof(f) / sizeof *(f))

static hid_t pm_compound(const struct pm_field *fields, size_t nfields, size_t row_size)
{
    hid_t t = H5Tcreate(H5T_COMPOUND, row_size);

    for (size_t i = 0; i < nfields; i++) {
        enum pm_schema_type type = pm_schema[fields[i].id].type;
        hid_t ft;

        if (fields[i].size != pm_schema_type_size(type)) { /* a row struct out of step with the table */
            fprintf(stderr, "gen_synthetic: field %s does not match the schema table\n",
                    pm_schema_path(fields[i].id));
            H5Tclose(t);
            return -1;
        }
        ft = type == PM_ST_STR     ? pm_vstr()
             : type == PM_ST_STR64 ? pm_str64()
                                   : H5Tcopy(pm_native(fields[i].id));
        H5Tinsert(t, pm_schema_name(fields[i].id), fields[i].offset, ft);
        H5Tclose(ft);
    }
    return t;
}

struct pm_gen_event {
    const char *name, *pfm_name;
    int32_t group;
    uint32_t type;
    uint64_t config, config1, config2;
    uint8_t exclude_user, exclude_kernel;
};

struct pm_gen_region {
    char *name;
    int32_t parent, depth;
    const char *kind;
    char *path;
};

struct pm_gen_thread {
    int32_t rank, thread;
    int64_t pid, tid;
    char host[PM_GEN_STR64];
    int32_t cpu_first, cpu_last;
    uint8_t exited;
    int32_t open_at_end;
};

static int pm_tables(hid_t f, const struct pm_gen *g)
{
    static const struct pm_field event_fields[] = {
        PM_FIELD(pm_gen_event, name, EVENTS_NAME),
        PM_FIELD(pm_gen_event, pfm_name, EVENTS_PFM_NAME),
        PM_FIELD(pm_gen_event, group, EVENTS_GROUP),
        PM_FIELD(pm_gen_event, type, EVENTS_TYPE),
        PM_FIELD(pm_gen_event, config, EVENTS_CONFIG),
        PM_FIELD(pm_gen_event, config1, EVENTS_CONFIG1),
        PM_FIELD(pm_gen_event, config2, EVENTS_CONFIG2),
        PM_FIELD(pm_gen_event, exclude_user, EVENTS_EXCLUDE_USER),
        PM_FIELD(pm_gen_event, exclude_kernel, EVENTS_EXCLUDE_KERNEL),
    };
    static const struct pm_field region_fields[] = {
        PM_FIELD(pm_gen_region, name, REGIONS_NAME),
        PM_FIELD(pm_gen_region, parent, REGIONS_PARENT),
        PM_FIELD(pm_gen_region, depth, REGIONS_DEPTH),
        PM_FIELD(pm_gen_region, kind, REGIONS_KIND),
        PM_FIELD(pm_gen_region, path, REGIONS_PATH),
    };
    /* the revision-1 fields of /threads */
    static const struct pm_field thread_fields[] = {
        PM_FIELD(pm_gen_thread, rank, THREADS_RANK),
        PM_FIELD(pm_gen_thread, thread, THREADS_THREAD),
        PM_FIELD(pm_gen_thread, pid, THREADS_PID),
        PM_FIELD(pm_gen_thread, tid, THREADS_TID),
        PM_FIELD(pm_gen_thread, host, THREADS_HOST),
        PM_FIELD(pm_gen_thread, cpu_first, THREADS_CPU_FIRST),
        PM_FIELD(pm_gen_thread, cpu_last, THREADS_CPU_LAST),
        PM_FIELD(pm_gen_thread, exited, THREADS_EXITED),
        PM_FIELD(pm_gen_thread, open_at_end, THREADS_OPEN_AT_END),
    };
    hid_t ty, ds;
    hsize_t dims[3];
    struct pm_gen_event ev[8];
    struct pm_gen_region *rg = calloc(g->R, sizeof *rg);
    int rc = 0;

    if (!rg)
        return -1;
    ty = pm_compound(event_fields, PM_NFIELDS(event_fields), sizeof ev[0]);
    for (size_t e = 0; e < g->E; e++) {
        memset(&ev[e], 0, sizeof ev[e]);
        ev[e].name = pm_gen_events[e][0];
        ev[e].pfm_name = pm_gen_events[e][1];
        ev[e].type = pm_gen_type[e];
        ev[e].config = pm_gen_config[e];
        ev[e].exclude_kernel = e < 2;
    }
    ds = pm_dataset_type(f, g, PM_S_EVENTS, ty, dims);
    rc |= ds < 0 || H5Dwrite(ds, ty, H5S_ALL, H5S_ALL, H5P_DEFAULT, ev) < 0;
    H5Dclose(ds);
    H5Tclose(ty);

    ty = pm_compound(region_fields, PM_NFIELDS(region_fields), sizeof rg[0]);
    for (size_t r = 0; r < g->R; r++) {
        size_t len;

        rg[r].name = malloc(32);
        /* every tenth region an MPI call, so the MPI tables have work */
        if (r % 10 == 9)
            snprintf(rg[r].name, 32, "MPI_Allreduce");
        else
            snprintf(rg[r].name, 32, "region_%zu", r);
        rg[r].parent = g->parent[r];
        rg[r].depth = g->depth[r];
        rg[r].kind = r % 10 == 9 ? "mpi" : "user";
        len = strlen(rg[r].name) + (r ? strlen(rg[g->parent[r]].path) + 2 : 1);
        rg[r].path = malloc(len);
        if (r)
            snprintf(rg[r].path, len, "%s/%s", rg[g->parent[r]].path, rg[r].name);
        else
            snprintf(rg[r].path, len, "%s", rg[r].name);
    }
    ds = pm_dataset_type(f, g, PM_S_REGIONS, ty, dims);
    rc |= ds < 0 || H5Dwrite(ds, ty, H5S_ALL, H5S_ALL, H5P_DEFAULT, rg) < 0;
    H5Dclose(ds);
    H5Tclose(ty);
    for (size_t r = 0; r < g->R; r++) {
        free(rg[r].name);
        free(rg[r].path);
    }
    free(rg);

    ty = pm_compound(thread_fields, PM_NFIELDS(thread_fields), sizeof(struct pm_gen_thread));
    ds = pm_dataset_type(f, g, PM_S_THREADS, ty, dims);
    rc |= ds < 0;
    for (size_t t0 = 0; t0 < g->T && rc == 0; t0 += PM_GEN_SLAB) {
        size_t k = g->T - t0 < PM_GEN_SLAB ? g->T - t0 : PM_GEN_SLAB;
        struct pm_gen_thread th[PM_GEN_SLAB];

        memset(th, 0, sizeof th);
        for (size_t i = 0; i < k; i++) {
            size_t t = t0 + i;

            th[i].rank = (int32_t)(t / g->tpr);
            th[i].thread = (int32_t)(t % g->tpr);
            th[i].pid = 10000 + th[i].rank;
            th[i].tid = 100000 + (int64_t)t;
            snprintf(th[i].host, sizeof th[i].host, "node%zu", t / g->tpr / 32);
            th[i].cpu_first = th[i].cpu_last = th[i].thread;
        }
        rc |= pm_slab(ds, ty, t0, k, th);
    }
    H5Dclose(ds);
    H5Tclose(ty);
    return rc ? -1 : 0;
}

/* The cell arrays /region/... written, in the order they are created. */
enum { PM_C_VISITS, PM_C_WALL, PM_C_BYTES, PM_C_BYTES_UNKNOWN, PM_C_WINDOWS, PM_C_FLAGS,
       PM_C_COUNTS, PM_C_ENABLED, PM_C_RUNNING, PM_NCELL };
static const enum pm_schema_id pm_cell_ids[PM_NCELL] = {
    PM_S_REGION_VISITS, PM_S_REGION_WALL_NS, PM_S_REGION_BYTES, PM_S_REGION_BYTES_UNKNOWN,
    PM_S_REGION_WINDOWS, PM_S_REGION_FLAGS, PM_S_REGION_COUNTS, PM_S_REGION_ENABLED_NS,
    PM_S_REGION_RUNNING_NS};
/* The thread totals /thread/... written, in the order they are created. */
enum { PM_T_WALL, PM_T_COUNTS, PM_T_ENABLED, PM_T_RUNNING, PM_T_FLAGS, PM_NTOTAL };
static const enum pm_schema_id pm_total_ids[PM_NTOTAL] = {
    PM_S_THREAD_WALL_NS, PM_S_THREAD_COUNTS, PM_S_THREAD_ENABLED_NS, PM_S_THREAD_RUNNING_NS,
    PM_S_THREAD_FLAGS};

static int pm_cells(hid_t f, const struct pm_gen *g)
{
    hid_t grp = pm_group(f, PM_S_REGION);
    hid_t thr = pm_group(f, PM_S_THREAD);
    hid_t cell[PM_NCELL], total[PM_NTOTAL];
    hsize_t dims[3];
    size_t rows = PM_GEN_SLAB, cells = rows * g->R;
    uint64_t *a[5], *c = malloc(cells * g->E * sizeof *c), *e1 = malloc(cells * sizeof *e1);
    uint64_t *r1 = malloc(cells * sizeof *r1), *tw = malloc(rows * sizeof *tw);
    uint64_t *tc = malloc(rows * g->E * sizeof *tc), *te1 = malloc(rows * sizeof *te1);
    uint32_t *fl = malloc(cells * sizeof *fl), *tf = calloc(rows, sizeof *tf);
    /* the flag attributes of /region/flags (its "@*" row): name = bit 1 << b */
    static const char *const fname[] = {"MULTIPLEXED", "NOT_COUNTED", "LOST_GENERATION",
                                        "MIGRATED", "UNBALANCED", "SHORT", "PARTIAL"};
    int rc = 0;

    for (int i = 0; i < PM_NCELL; i++) {
        cell[i] = pm_dataset(grp, g, pm_cell_ids[i], dims);
        rc |= cell[i] < 0;
        if (i == PM_C_FLAGS && cell[i] >= 0)
            for (uint32_t b = 0; b < 7; b++) {
                uint32_t bit = 1u << b;
                pm_attr_write(cell[i], fname[b], pm_native(PM_S_REGION_FLAG_NAME), &bit);
            }
    }
    for (int i = 0; i < PM_NTOTAL; i++) {
        total[i] = pm_dataset(thr, g, pm_total_ids[i], dims);
        rc |= total[i] < 0;
    }
    for (int i = 0; i < 5; i++) {
        a[i] = malloc(cells * sizeof *a[i]);
        if (!a[i])
            return -1;
    }
    if (rc || !c || !e1 || !r1 || !tw || !tc || !te1 || !fl || !tf)
        return -1;
    for (size_t t0 = 0; t0 < g->T && rc == 0; t0 += rows) {
        size_t k = g->T - t0 < rows ? g->T - t0 : rows;

        for (size_t i = 0; i < k; i++) {
            size_t t = t0 + i;

            tw[i] = 0;
            for (size_t e = 0; e < g->E; e++)
                tc[i * g->E + e] = 0;
            for (size_t r = 0; r < g->R; r++) {
                size_t x = i * g->R + r;
                uint64_t v, w;
                uint32_t fg;

                pm_gen_cell(g, t, r, &v, &w, &fg);
                a[0][x] = v;
                a[1][x] = w;
                a[2][x] = r % 10 == 9 ? v * 4096 : 0;
                a[3][x] = 0;
                a[4][x] = v * (1 + 2 * (g->subtree[r] > 1));
                fl[x] = fg;
                e1[x] = w;
                r1[x] = fg ? w / 2 : w;
                for (size_t e = 0; e < g->E; e++) {
                    /* what was counted: half the time when multiplexed */
                    uint64_t full = v ? w / 1000 * (e + 1) + pm_hash(t ^ (r << 20) ^ (e << 40)) % 97
                                      : 0;
                    c[x * g->E + e] = e == 2 ? r1[x] : (fg ? full / 2 : full);
                }
                if (r == 0) {
                    tw[i] = w + 1000000;
                    for (size_t e = 0; e < g->E; e++)
                        tc[i * g->E + e] = c[x * g->E + e] * 2;
                }
            }
            te1[i] = tw[i];
        }
        /* PM_GEN_GROUPS = 1: enabled and running hold one word per cell */
        const void *cell_data[PM_NCELL] = {a[0], a[1], a[2], a[3], a[4], fl, c, e1, r1};
        const void *total_data[PM_NTOTAL] = {tw, tc, te1, te1, tf};

        for (int j = 0; j < PM_NCELL; j++)
            rc |= pm_slab(cell[j], pm_native(pm_cell_ids[j]), t0, k, cell_data[j]);
        for (int j = 0; j < PM_NTOTAL; j++)
            rc |= pm_slab(total[j], pm_native(pm_total_ids[j]), t0, k, total_data[j]);
    }
    for (int j = 0; j < 5; j++)
        free(a[j]);
    for (int j = 0; j < PM_NCELL; j++)
        H5Dclose(cell[j]);
    for (int j = 0; j < PM_NTOTAL; j++)
        H5Dclose(total[j]);
    H5Gclose(grp);
    H5Gclose(thr);
    free(c);
    free(e1);
    free(r1);
    free(tw);
    free(tc);
    free(te1);
    free(fl);
    free(tf);
    return rc;
}

/* An empty /messages (the job writer writes one, possibly of zero rows). */
static int pm_messages(hid_t f, const struct pm_gen *g)
{
    hid_t s = pm_vstr();
    hsize_t dims[3];
    hid_t ds = pm_dataset_type(f, g, PM_S_MESSAGES, s, dims);

    H5Dclose(ds);
    H5Tclose(s);
    return ds < 0 ? -1 : 0;
}

static size_t pm_arg(const char *s, size_t lo, size_t hi, const char *what)
{
    char *end;
    unsigned long long v = strtoull(s, &end, 10);

    if (*end || v < lo || v > hi) {
        fprintf(stderr, "gen_synthetic: %s must be %zu..%zu, not '%s'\n", what, lo, hi, s);
        exit(2);
    }
    return (size_t)v;
}

int main(int argc, char **argv)
{
    struct pm_gen g;
    hid_t f;
    int rc;

    if (argc != 6) {
        fprintf(stderr, "usage: gen_synthetic OUT.h5 RANKS THREADS_PER_RANK REGIONS EVENTS\n");
        return 2;
    }
    g.ranks = pm_arg(argv[2], 1, 1 << 20, "RANKS");
    g.tpr = pm_arg(argv[3], 1, 4096, "THREADS_PER_RANK");
    g.R = pm_arg(argv[4], 1, 100000, "REGIONS");
    g.E = pm_arg(argv[5], 1, 8, "EVENTS");
    g.T = g.ranks * g.tpr;
    g.parent = malloc(g.R * sizeof *g.parent);
    g.depth = malloc(g.R * sizeof *g.depth);
    g.subtree = malloc(g.R * sizeof *g.subtree);
    if (!g.parent || !g.depth || !g.subtree)
        return 1;
    /* a ternary tree: row r's parent is (r - 1) / 3, parents first */
    for (size_t r = 0; r < g.R; r++) {
        g.parent[r] = r ? (int32_t)((r - 1) / 3) : -1;
        g.depth[r] = r ? g.depth[g.parent[r]] + 1 : 0;
        g.subtree[r] = 1;
    }
    for (size_t r = g.R; r-- > 1;)
        g.subtree[g.parent[r]] += g.subtree[r];
    f = H5Fcreate(argv[1], H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    if (f < 0) {
        fprintf(stderr, "gen_synthetic: cannot create %s\n", argv[1]);
        return 1;
    }
    pm_root(f, &g);
    rc = pm_tables(f, &g);
    rc |= pm_cells(f, &g);
    rc |= pm_messages(f, &g);
    if (H5Fclose(f) < 0 || rc != 0) {
        fprintf(stderr, "gen_synthetic: writing %s failed\n", argv[1]);
        return 1;
    }
    free(g.parent);
    free(g.depth);
    free(g.subtree);
    return 0;
}
