/*
 * gen_synthetic.c — write a synthetic perfmark job file (schema 1,
 * docs/hdf5-schema.md) of any size, for the report scale benchmark
 * (bench/run_report_scale.sh) and its CTest smoke test.
 *
 * usage: gen_synthetic OUT.h5 RANKS THREADS_PER_RANK REGIONS EVENTS(1..8)
 *
 * The layout is the MPI job writer's (runtime/pm_h5out.c): one file, rank
 * = -1, every rank's threads as /threads rows in rank order, datasets over
 * 65,536 elements chunked (last dimensions first), shuffled and deflated at
 * level 4. The numbers are deterministic (a hash of the cell) and
 * consistent: a parent's wall time exceeds the sum of its children's, every
 * 97th cell is MULTIPLEXED (running = enabled / 2), every 101st thread skips
 * the deepest regions. Rows are written in slabs of threads, so the
 * generator's memory does not grow with the number of ranks.
 */
#include <hdf5.h>

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PM_GEN_CHUNK 65536 /* = PM_CHUNK_THRESHOLD of runtime/pm_h5out.c */
#define PM_GEN_SLAB 256    /* thread rows written at a time */

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

static hid_t pm_dataset(hid_t loc, const char *name, hid_t type, int ndims, const hsize_t *dims)
{
    hid_t space = H5Screate_simple(ndims, dims, NULL);
    hid_t dcpl = pm_plist(ndims, dims);
    hid_t ds = H5Dcreate2(loc, name, type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);

    H5Pclose(dcpl);
    H5Sclose(space);
    return ds;
}

/* Write rows [t0, t0 + n) of a [T, ...] dataset. */
static int pm_slab(hid_t ds, hid_t memtype, int ndims, const hsize_t *dims, size_t t0, size_t n,
                   const void *buf)
{
    hsize_t start[3] = {t0, 0, 0}, count[3];
    hid_t fs = H5Dget_space(ds), ms;
    herr_t rc;

    for (int i = 0; i < ndims; i++)
        count[i] = i == 0 ? n : dims[i];
    ms = H5Screate_simple(ndims, count, NULL);
    H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL);
    rc = H5Dwrite(ds, memtype, ms, fs, H5P_DEFAULT, buf);
    H5Sclose(ms);
    H5Sclose(fs);
    return rc < 0 ? -1 : 0;
}

static void pm_attr_str(hid_t loc, const char *name, const char *value)
{
    hid_t type = H5Tcopy(H5T_C_S1), space = H5Screate(H5S_SCALAR), a;

    H5Tset_size(type, H5T_VARIABLE);
    H5Tset_cset(type, H5T_CSET_UTF8);
    a = H5Acreate2(loc, name, type, space, H5P_DEFAULT, H5P_DEFAULT);
    H5Awrite(a, type, &value);
    H5Aclose(a);
    H5Sclose(space);
    H5Tclose(type);
}

static void pm_attr_int(hid_t loc, const char *name, hid_t type, const void *value)
{
    hid_t space = H5Screate(H5S_SCALAR);
    hid_t a = H5Acreate2(loc, name, type, space, H5P_DEFAULT, H5P_DEFAULT);

    H5Awrite(a, type, value);
    H5Aclose(a);
    H5Sclose(space);
}

static hid_t pm_vstr(void)
{
    hid_t t = H5Tcopy(H5T_C_S1);

    H5Tset_size(t, H5T_VARIABLE);
    H5Tset_cset(t, H5T_CSET_UTF8);
    return t;
}

static void pm_root(hid_t f, const struct pm_gen *g)
{
    char measured[512] = "";
    int32_t one = 1, minus = -1, ranks = (int32_t)g->ranks, zero = 0;
    int64_t pid = 4242;
    uint64_t dur = 10000000000ULL;
    uint8_t partial = 0;

    for (size_t e = 0; e < g->E; e++) {
        strcat(measured, e ? "," : "");
        strcat(measured, pm_gen_events[e][0]);
    }
    pm_attr_int(f, "schema_version", H5T_STD_I32LE, &one);
    pm_attr_str(f, "perfmark_version", "synthetic");
    pm_attr_str(f, "command", "gen_synthetic");
    pm_attr_str(f, "host", "gen");
    pm_attr_int(f, "pid", H5T_STD_I64LE, &pid);
    pm_attr_str(f, "start_time", "2026-01-01T00:00:00Z");
    pm_attr_int(f, "duration_ns", H5T_STD_U64LE, &dur);
    pm_attr_str(f, "clock", "monotonic");
    pm_attr_str(f, "events_requested", "custom");
    pm_attr_str(f, "events_measured", measured);
    pm_attr_str(f, "event_group", "custom");
    pm_attr_str(f, "fallback", "");
    pm_attr_int(f, "kernel_groups", H5T_STD_I32LE, &one);
    pm_attr_int(f, "bind_cpu", H5T_STD_I32LE, &minus);
    pm_attr_str(f, "topdown_method", "");
    pm_attr_int(f, "topdown_levels", H5T_STD_I32LE, &zero);
    pm_attr_str(f, "openmp", "");
    pm_attr_str(f, "cpu_model", "");
    pm_attr_int(f, "partial", H5T_STD_U8LE, &partial);
    pm_attr_int(f, "rank", H5T_STD_I32LE, &minus);
    pm_attr_int(f, "ranks", H5T_STD_I32LE, &ranks);
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
    char host[64];
    int32_t cpu_first, cpu_last;
    uint8_t exited;
    int32_t open_at_end;
};

static void pm_tables(hid_t f, const struct pm_gen *g)
{
    hid_t s = pm_vstr(), h64 = H5Tcopy(H5T_C_S1), ty, ds;
    hsize_t n;
    struct pm_gen_event ev[8];
    struct pm_gen_region *rg = calloc(g->R, sizeof *rg);

    ty = H5Tcreate(H5T_COMPOUND, sizeof ev[0]);
    H5Tinsert(ty, "name", HOFFSET(struct pm_gen_event, name), s);
    H5Tinsert(ty, "pfm_name", HOFFSET(struct pm_gen_event, pfm_name), s);
    H5Tinsert(ty, "group", HOFFSET(struct pm_gen_event, group), H5T_STD_I32LE);
    H5Tinsert(ty, "type", HOFFSET(struct pm_gen_event, type), H5T_STD_U32LE);
    H5Tinsert(ty, "config", HOFFSET(struct pm_gen_event, config), H5T_STD_U64LE);
    H5Tinsert(ty, "config1", HOFFSET(struct pm_gen_event, config1), H5T_STD_U64LE);
    H5Tinsert(ty, "config2", HOFFSET(struct pm_gen_event, config2), H5T_STD_U64LE);
    H5Tinsert(ty, "exclude_user", HOFFSET(struct pm_gen_event, exclude_user), H5T_STD_U8LE);
    H5Tinsert(ty, "exclude_kernel", HOFFSET(struct pm_gen_event, exclude_kernel), H5T_STD_U8LE);
    for (size_t e = 0; e < g->E; e++) {
        memset(&ev[e], 0, sizeof ev[e]);
        ev[e].name = pm_gen_events[e][0];
        ev[e].pfm_name = pm_gen_events[e][1];
        ev[e].type = pm_gen_type[e];
        ev[e].config = pm_gen_config[e];
        ev[e].exclude_kernel = e < 2;
    }
    n = g->E;
    ds = pm_dataset(f, "events", ty, 1, &n);
    H5Dwrite(ds, ty, H5S_ALL, H5S_ALL, H5P_DEFAULT, ev);
    H5Dclose(ds);
    H5Tclose(ty);

    ty = H5Tcreate(H5T_COMPOUND, sizeof rg[0]);
    H5Tinsert(ty, "name", HOFFSET(struct pm_gen_region, name), s);
    H5Tinsert(ty, "parent", HOFFSET(struct pm_gen_region, parent), H5T_STD_I32LE);
    H5Tinsert(ty, "depth", HOFFSET(struct pm_gen_region, depth), H5T_STD_I32LE);
    H5Tinsert(ty, "kind", HOFFSET(struct pm_gen_region, kind), s);
    H5Tinsert(ty, "path", HOFFSET(struct pm_gen_region, path), s);
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
    n = g->R;
    ds = pm_dataset(f, "regions", ty, 1, &n);
    H5Dwrite(ds, ty, H5S_ALL, H5S_ALL, H5P_DEFAULT, rg);
    H5Dclose(ds);
    H5Tclose(ty);
    for (size_t r = 0; r < g->R; r++) {
        free(rg[r].name);
        free(rg[r].path);
    }
    free(rg);

    H5Tset_size(h64, 64);
    H5Tset_strpad(h64, H5T_STR_NULLPAD);
    ty = H5Tcreate(H5T_COMPOUND, sizeof(struct pm_gen_thread));
    H5Tinsert(ty, "rank", HOFFSET(struct pm_gen_thread, rank), H5T_STD_I32LE);
    H5Tinsert(ty, "thread", HOFFSET(struct pm_gen_thread, thread), H5T_STD_I32LE);
    H5Tinsert(ty, "pid", HOFFSET(struct pm_gen_thread, pid), H5T_STD_I64LE);
    H5Tinsert(ty, "tid", HOFFSET(struct pm_gen_thread, tid), H5T_STD_I64LE);
    H5Tinsert(ty, "host", HOFFSET(struct pm_gen_thread, host), h64);
    H5Tinsert(ty, "cpu_first", HOFFSET(struct pm_gen_thread, cpu_first), H5T_STD_I32LE);
    H5Tinsert(ty, "cpu_last", HOFFSET(struct pm_gen_thread, cpu_last), H5T_STD_I32LE);
    H5Tinsert(ty, "exited", HOFFSET(struct pm_gen_thread, exited), H5T_STD_U8LE);
    H5Tinsert(ty, "open_at_end", HOFFSET(struct pm_gen_thread, open_at_end), H5T_STD_I32LE);
    n = g->T;
    ds = pm_dataset(f, "threads", ty, 1, &n);
    for (size_t t0 = 0; t0 < g->T; t0 += PM_GEN_SLAB) {
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
        pm_slab(ds, ty, 1, &n, t0, k, th);
    }
    H5Dclose(ds);
    H5Tclose(ty);
    H5Tclose(h64);
    H5Tclose(s);
}

static int pm_cells(hid_t f, const struct pm_gen *g)
{
    hid_t grp = H5Gcreate2(f, "region", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    hid_t thr = H5Gcreate2(f, "thread", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    hsize_t d2[2] = {g->T, g->R}, d3[3] = {g->T, g->R, g->E}, dg[3] = {g->T, g->R, 1};
    hsize_t t1[1] = {g->T}, te[2] = {g->T, g->E}, tg[2] = {g->T, 1};
    const char *u64names[] = {"visits", "wall_ns", "bytes", "bytes_unknown", "windows"};
    hid_t u64[5], flags, counts, en, run, twall, tcounts, ten, trun, tflags;
    size_t rows = PM_GEN_SLAB, cells = rows * g->R;
    uint64_t *a[5], *c = malloc(cells * g->E * sizeof *c), *e1 = malloc(cells * sizeof *e1);
    uint64_t *r1 = malloc(cells * sizeof *r1), *tw = malloc(rows * sizeof *tw);
    uint64_t *tc = malloc(rows * g->E * sizeof *tc), *te1 = malloc(rows * sizeof *te1);
    uint32_t *fl = malloc(cells * sizeof *fl), *tf = calloc(rows, sizeof *tf);
    static const char *const fname[] = {"MULTIPLEXED", "NOT_COUNTED", "LOST_GENERATION",
                                        "MIGRATED", "UNBALANCED", "SHORT", "PARTIAL"};
    int rc = 0;

    for (int i = 0; i < 5; i++) {
        a[i] = malloc(cells * sizeof *a[i]);
        u64[i] = pm_dataset(grp, u64names[i], H5T_STD_U64LE, 2, d2);
        if (!a[i])
            return -1;
    }
    if (!c || !e1 || !r1 || !tw || !tc || !te1 || !fl || !tf)
        return -1;
    flags = pm_dataset(grp, "flags", H5T_STD_U32LE, 2, d2);
    for (uint32_t b = 0; b < 7; b++) {
        uint32_t bit = 1u << b;
        pm_attr_int(flags, fname[b], H5T_STD_U32LE, &bit);
    }
    counts = pm_dataset(grp, "counts", H5T_STD_U64LE, 3, d3);
    en = pm_dataset(grp, "enabled_ns", H5T_STD_U64LE, 3, dg);
    run = pm_dataset(grp, "running_ns", H5T_STD_U64LE, 3, dg);
    twall = pm_dataset(thr, "wall_ns", H5T_STD_U64LE, 1, t1);
    tcounts = pm_dataset(thr, "counts", H5T_STD_U64LE, 2, te);
    ten = pm_dataset(thr, "enabled_ns", H5T_STD_U64LE, 2, tg);
    trun = pm_dataset(thr, "running_ns", H5T_STD_U64LE, 2, tg);
    tflags = pm_dataset(thr, "flags", H5T_STD_U32LE, 1, t1);
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
        for (int j = 0; j < 5; j++)
            rc |= pm_slab(u64[j], H5T_NATIVE_UINT64, 2, d2, t0, k, a[j]);
        rc |= pm_slab(flags, H5T_NATIVE_UINT32, 2, d2, t0, k, fl);
        rc |= pm_slab(counts, H5T_NATIVE_UINT64, 3, d3, t0, k, c);
        rc |= pm_slab(en, H5T_NATIVE_UINT64, 3, dg, t0, k, e1);
        rc |= pm_slab(run, H5T_NATIVE_UINT64, 3, dg, t0, k, r1);
        rc |= pm_slab(twall, H5T_NATIVE_UINT64, 1, t1, t0, k, tw);
        rc |= pm_slab(tcounts, H5T_NATIVE_UINT64, 2, te, t0, k, tc);
        rc |= pm_slab(ten, H5T_NATIVE_UINT64, 2, tg, t0, k, te1);
        rc |= pm_slab(trun, H5T_NATIVE_UINT64, 2, tg, t0, k, te1);
        rc |= pm_slab(tflags, H5T_NATIVE_UINT32, 1, t1, t0, k, tf);
    }
    for (int j = 0; j < 5; j++) {
        H5Dclose(u64[j]);
        free(a[j]);
    }
    H5Dclose(flags);
    H5Dclose(counts);
    H5Dclose(en);
    H5Dclose(run);
    H5Dclose(twall);
    H5Dclose(tcounts);
    H5Dclose(ten);
    H5Dclose(trun);
    H5Dclose(tflags);
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
static void pm_messages(hid_t f)
{
    hid_t s = pm_vstr();
    hsize_t n = 0;
    hid_t ds = pm_dataset(f, "messages", s, 1, &n);

    H5Dclose(ds);
    H5Tclose(s);
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
    pm_tables(f, &g);
    rc = pm_cells(f, &g);
    pm_messages(f);
    if (H5Fclose(f) < 0 || rc != 0) {
        fprintf(stderr, "gen_synthetic: writing %s failed\n", argv[1]);
        return 1;
    }
    free(g.parent);
    free(g.depth);
    free(g.subtree);
    return 0;
}
