/* pm_job_write — one HDF5 file for the whole MPI job, written inside the
 * MPI_Finalize wrapper while MPI still works (runtime/file/pm_writer.h: the
 * contract and the verdicts). The ranks talk through the job's pm_comm
 * (pm_comm.h): no MPI type or call here, whichever MPI the job runs on.
 *
 * 1. Regions: the ranks union their region tables over a tree and rank 0
 *    broadcasts the union (pm_job_tables.c); messages ride along.
 * 2. Rows: every rank builds its own rows (threads, cells, totals) as a
 *    model, packed into one buffer (pm_job_model.c).
 * 3a. Up to PM_JOB_GATHER_MAX in all (nearly every job): the packed rows go
 *    to rank 0, which joins them into the job's file (each rank's rows at
 *    its offset, then the tables), encodes it (perfmark's own encoder, or
 *    the HDF5 library for large datasets) and hands its bytes to the
 *    runtime. Only rank 0 touches the disk, with write(2): a full disk is
 *    one errno there, never a collective HDF5 call that some ranks left
 *    (which hung whole jobs). No rank loads HDF5 for a job of this size
 *    unless rank 0's file has datasets too large for the encoder.
 * 3b. Larger: every rank loads the HDF5 writer (only where it was built
 *    for the job's MPI: its parallel HDF5 takes that MPI's communicator);
 *    rank 0 checks the free
 *    space where the file goes (twice the rows' size), then every rank
 *    writes its slab collectively into one parallel file, and rank 0
 *    reopens it serially for the string tables (parallel HDF5 1.10 cannot
 *    write variable-length strings).
 * Any failure is agreed on by all ranks. The comm is PMPI on a private
 * communicator: perfmark's own messages are never counted as the
 * application's. */
#define _GNU_SOURCE
#include "pm_clock.h"
#include "pm_log.h"
#include "pm_job_model.h"
#include "pm_job_tables.h"
#include "pm_h5out.h"
#include "pm_h5out_samples.h"
#include "pm_h5out_node.h"
#include "pm_h5out_series.h"
#include "pm_store.h"
#include "pm_writer.h"

#include <sys/resource.h>
#include <sys/statvfs.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Where the write's time goes, for the scale benchmark (bench/run_scale.sh):
 * with PERFMARK_JOB_TIMES=FILE set, rank 0 and the last rank append one line
 * each to FILE at the end of the write. Phases, in order: the agreement
 * (events, the region union and its broadcast, the row offsets), this
 * rank's rows, the gather to rank 0 (or the parallel write), rank 0's file
 * built and encoded, and its store. */
enum { PM_T_AGREE, PM_T_ROWS, PM_T_GATHER, PM_T_BUILD, PM_T_STORE, PM_T_N };
static uint64_t pm_t_mark[PM_T_N + 1];
static long pm_t_rss_kb;  /* resident set at the start of the write */
static double pm_t_cpu0;  /* this process's CPU time then */

static double pm_cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static long pm_rss_kb(void)
{
    long pages = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "re");
    if (f && fscanf(f, "%ld %ld", &pages, &resident) != 2)
        resident = 0;
    if (f)
        fclose(f);
    return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

/* Phase k ends now (phases skipped on the way end here too). */
static void pm_t_end(int k)
{
    uint64_t now = pm_mono_ns();
    for (int i = 1; i <= k + 1 && i <= PM_T_N; i++)
        if (!pm_t_mark[i])
            pm_t_mark[i] = now;
}

static void pm_t_report(const struct pm_comm *c, int verdict, uint64_t bytes)
{
    const char *path = getenv("PERFMARK_JOB_TIMES");
    if (!path || !*path || (c->rank != 0 && c->rank != c->size - 1))
        return;
    pm_t_end(PM_T_STORE);
    double s[PM_T_N];
    for (int k = 0; k < PM_T_N; k++)
        s[k] = (double)(pm_t_mark[k + 1] - pm_t_mark[k]) * 1e-9;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    char line[512];
    int n = snprintf(line, sizeof line,
                     "rank %d of %d: verdict %d rows_bytes %llu total_s %.6f cpu_s %.6f agree_s %.6f "
                     "rows_s %.6f gather_s %.6f build_s %.6f store_s %.6f rss_before_kB %ld "
                     "peak_rss_kB %ld\n",
                     c->rank, c->size, verdict, (unsigned long long)bytes,
                     (double)(pm_t_mark[PM_T_N] - pm_t_mark[0]) * 1e-9, pm_cpu_s() - pm_t_cpu0,
                     s[PM_T_AGREE],
                     s[PM_T_ROWS], s[PM_T_GATHER], s[PM_T_BUILD], s[PM_T_STORE], pm_t_rss_kb,
                     ru.ru_maxrss);
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd >= 0 && n > 0) {
        ssize_t w = write(fd, line, (size_t)n);  /* one append: lines never interleave */
        (void)w;
    }
    if (fd >= 0)
        close(fd);
}

/* A summary beside the job's file (PERFMARK_SUMMARY_OUTPUT): stored like
 * any output, at `path` (ctx) or, if it cannot go there, a fallback. */
static int pm_publish_path(const void *image, size_t len, void *ctx)
{
    struct pm_store_result r;
    return pm_store_bytes((const char *)ctx, image, len, NULL, &r);
}

/* Every rank must have measured the same events to share datasets. */
static uint64_t pm_events_fingerprint(const struct pm_eventset *set)
{
    uint64_t h = 1469598103934665603ull ^ (uint64_t)set->n ^ (uint64_t)set->ngroups << 8;
    for (int i = 0; i < set->n; i++) {
        const struct pm_event *e = &set->ev[i];
        for (const unsigned char *s = (const unsigned char *)e->name; *s; s++)
            h = (h ^ *s) * 1099511628211ull;
        h = (h ^ e->attr.config ^ (uint64_t)e->attr.type << 40 ^ (uint64_t)e->group << 56) *
            1099511628211ull;
    }
    return h;
}

/* ... and sampled the same events with the same periods. */
static uint64_t pm_samples_fingerprint(const struct pm_sample_spec *spec, uint64_t h)
{
    for (int i = 0; spec && i < spec->n; i++) {
        for (const unsigned char *s = (const unsigned char *)spec->ev[i].name; *s; s++)
            h = (h ^ *s) * 1099511628211ull;
        h = (h ^ spec->ev[i].period) * 1099511628211ull;
    }
    return h ^ (uint64_t)(spec ? spec->n : 0) << 48;
}

static int pm_same_events(const struct pm_comm *c, const struct pm_output *o)
{
    uint64_t h = pm_samples_fingerprint(o->sample, pm_events_fingerprint(o->set));
    uint64_t mine[2] = {h, ~h}, low[2] = {0, 0};
    if (c->allreduce(c, mine, low, 2, PM_COMM_MIN) != 0)
        return 0;
    return low[0] == ~low[1];  /* min(h) == max(h) */
}

int pm_gather_images(const struct pm_comm *c, void *mine, size_t mylen, void **images,
                            size_t *lens)
{
    int rank = c->rank, size = c->size;
    uint64_t *all = rank == 0 ? calloc((size_t)size, sizeof *all) : NULL;
    int ok = rank != 0 || all;
    if (!pm_comm_all_ok(c, ok) || c->gather_u64(c, mylen, all) != 0) {
        free(all);
        return -1;
    }
    char *buf = NULL;
    if (rank == 0) {
        uint64_t total = 0;
        for (int r = 0; r < size; r++)
            total += lens[r] = (size_t)all[r];
        buf = total < INT32_MAX ? malloc(total ? total : 1) : NULL;
        ok = buf != NULL;
    }
    int rc = -1;
    if (pm_comm_all_ok(c, ok) && c->gather_bytes(c, mine, mylen, buf, lens) == 0) {
        rc = 0;
        for (size_t r = 0, at = 0; rank == 0 && r < (size_t)size; at += lens[r], r++)
            images[r] = buf + at;
    }
    if (rc != 0)
        free(buf);  /* on success the caller frees images[0]'s block: buf */
    free(all);
    return rc;
}

int pm_job_file(const struct pm_output *o, struct pm_tables *t, void **packs,
                       const size_t *lens, int nranks, void **image, size_t *len, char *err,
                       size_t errlen)
{
    struct pm_h5model job;
    int rc = pm_job_model(o, t, packs, lens, nranks, &job, err, errlen);
    if (rc == 0)
        rc = pm_h5out_encode(&job, 0, pm_writer_large_image, image, len, err, errlen);
    pm_h5model_free(&job);
    return rc;
}

/* Rank 0 checks that twice the rows' size is free where the parallel file
 * goes: ENOSPC inside collective parallel HDF5 calls can leave ranks
 * waiting for each other. */
static int pm_room_for(const char *want, uint64_t bytes)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", want);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = '\0';
    struct statvfs st;
    if (statvfs(slash ? (dir[0] ? dir : "/") : ".", &st) != 0)
        return 0;
    return (uint64_t)st.f_bavail * st.f_frsize >= 2 * bytes + ((uint64_t)1 << 20);
}

/* The job writer (pm_writer.h, pm_writer_job_fn). */
static int pm_job_write_open(const struct pm_comm *comm, const struct pm_output *o,
                             const char *want, char *tmp, size_t tmplen,
                             pm_writer_publish_fn publish, void *ctx, uint64_t *bytes,
                             char *err, size_t errlen);

int pm_job_write(struct pm_comm *comm, const struct pm_output *o, const char *want, char *tmp,
                 size_t tmplen, pm_writer_publish_fn publish, void *ctx, char *err, size_t errlen)
{
    if (comm->open(comm) != 0) {
        snprintf(err, errlen, "MPI cannot be used for the job's file (not initialised, or "
                 "finalised, or MPI_COMM_WORLD cannot be duplicated)");
        return -1;
    }
    memset(pm_t_mark, 0, sizeof pm_t_mark);
    pm_t_mark[0] = pm_mono_ns();
    pm_t_rss_kb = getenv("PERFMARK_JOB_TIMES") ? pm_rss_kb() : 0;
    pm_t_cpu0 = pm_cpu_s();
    uint64_t bytes = 0;
    int verdict = pm_job_write_open(comm, o, want, tmp, tmplen, publish, ctx, &bytes, err,
                                    errlen);
    pm_t_report(comm, verdict, bytes);
    comm->close(comm);
    return verdict;
}

static int pm_job_write_open(const struct pm_comm *comm, const struct pm_output *o,
                             const char *want, char *tmp, size_t tmplen,
                             pm_writer_publish_fn publish, void *ctx, uint64_t *bytes,
                             char *err, size_t errlen)
{
    int rank = comm->rank, size = comm->size;

    struct pm_merged m;
    struct pm_tables tables = {0};
    struct pm_sample_rows samples = {0};
    void *mine = NULL, **images = NULL, *job = NULL;
    size_t mylen = 0, *lens = NULL, joblen = 0;
    int ok = pm_merge(&m, o) == 0 && pm_sample_rows_build(o, m.map, &samples) == 0;
    if (ok) {
        pm_local_tables(&m, rank, &tables.regions, &tables.log);
        pm_local_modules(&samples, &tables.modules);
    }
    tables.regions.failed |= !ok;  /* travels up the tree to rank 0 */
    int verdict = -1;

    if (!pm_comm_all_ok(comm, pm_same_events(comm, o))) {
        snprintf(err, errlen, "the ranks measured or sampled different event sets (nodes of "
                 "different kinds?): they cannot share one file");
        goto out;
    }
    int reduced = pm_tree_reduce(comm, &tables);
    /* Every rank takes part in each collective below, whatever happened
     * locally, so that a failure on one rank cannot leave others waiting. */
    int have_union = pm_bcast_union(comm, &tables,
                                    reduced == 0 && !tables.regions.failed &&
                                        !tables.modules.failed) == 0;
    int mapped = have_union && ok && pm_remap(&m, &tables.regions, o, &samples) == 0 &&
                 pm_remap_modules(&tables.modules, &samples) == 0;
    if (!pm_comm_all_ok(comm, mapped)) {
        snprintf(err, errlen, "merging the region tables of all ranks failed (out of memory?)");
        goto out;
    }

    /* Where this rank's rows go among all ranks': thread rows, its /rank
     * row, its sample hits, chains and frames, its interval rows. */
    uint64_t counts[PM_K_N], before[PM_K_N] = {0}, total[PM_K_N] = {0};
    pm_slab_counts(o, &samples, counts);
    if (!pm_comm_all_ok(comm, comm->exscan_sum(comm, counts, before, PM_K_N) == 0 &&
                                  comm->allreduce(comm, counts, total, PM_K_N, PM_COMM_SUM) == 0)) {
        snprintf(err, errlen, "placing the ranks' rows in the job file failed");
        goto out;
    }
    struct pm_slab slab;
    pm_slab_place(&slab, before, total, (uint64_t)tables.regions.n, &samples);

    pm_t_end(PM_T_AGREE);
    /* 2. this rank's rows, and how big the job's rows are in all */
    char why[256] = "";
    int built = pm_rows_packed(o, m.map, &slab, &mine, &mylen, why, sizeof why) == 0;
    uint64_t rows_bytes = built ? mylen : 0, all_bytes = 0;
    if (!pm_comm_all_ok(comm, built) ||
        comm->allreduce(comm, &rows_bytes, &all_bytes, 1, PM_COMM_SUM) != 0) {
        snprintf(err, errlen, "building the rows of the job file failed (%s)",
                 why[0] ? why : "on another rank");
        goto out;
    }
    pm_t_end(PM_T_ROWS);
    *bytes = all_bytes;

    if (o->summary_output && o->job_detail != PM_DETAIL_SUMMARY) {
        /* a summary beside the full file (PERFMARK_SUMMARY_OUTPUT): the
         * same job's two files, to compare; a failure is said, the full
         * file is written all the same */
        char why[512] = "";
        int v = pm_job_write_summary(comm, o, m.map, &tables, &slab, counts, rows_bytes,
                                     all_bytes, o->summary_output, pm_publish_path,
                                     (void *)o->summary_output, why, sizeof why);
        if (rank == 0 && v != 1 && v != PM_JOB_FULL)
            pm_msg(PM_MSG_ONCE, "PERFMARK_SUMMARY_OUTPUT: no summary at %s (%s)",
                   o->summary_output, why[0] ? why : "another rank failed");
    }
    if (o->job_detail == PM_DETAIL_SUMMARY ||
        (o->job_detail == PM_DETAIL_AUTO && all_bytes > o->summary_above)) {
        /* 3c. a summary (pm_job_summary_write.c): every rank decides alike */
        verdict = pm_job_write_summary(comm, o, m.map, &tables, &slab, counts, rows_bytes,
                                       all_bytes, NULL, publish, ctx, err, errlen);
        if (verdict != PM_JOB_FULL)
            goto out;
        verdict = -1;
    }

    if (all_bytes <= o->job_gather_max) {
        /* 3a. in memory on rank 0 */
        if (rank == 0) {
            images = calloc((size_t)size, sizeof *images);
            lens = calloc((size_t)size, sizeof *lens);
        }
        if (!pm_comm_all_ok(comm, rank != 0 || (images && lens)) ||
            pm_gather_images(comm, mine, mylen, images, lens) != 0) {
            snprintf(err, errlen, "gathering the rows of the job file on rank 0 failed");
            goto out;
        }
        pm_t_end(PM_T_GATHER);
        int built_job = rank != 0 || pm_job_file(o, &tables, images, lens, size, &job, &joblen,
                                                 err, errlen) == 0;
        if (!pm_comm_all_ok(comm, built_job)) {
            if (rank != 0)
                snprintf(err, errlen, "rank 0 could not build the job's file");
            goto out;
        }
        pm_t_end(PM_T_BUILD);
        int stored = rank != 0 || publish(job, joblen, ctx) == 0;
        verdict = pm_comm_all_ok(comm, stored) ? (rank == 0 ? 1 : 0) : -2;
        goto out;
    }

    /* 3b. collectively, where rank 0 sees room for it */
    char lib_err[512] = "";
    const struct pm_writer_entry *w = pm_writer_lib_for(comm->abi, lib_err, sizeof lib_err);
    if (!pm_comm_all_ok(comm, w != NULL)) {
        snprintf(err, errlen, "%s", w ? "another rank cannot load the HDF5 writer" : lib_err);
        goto out;
    }
    int room = rank != 0 || pm_room_for(want, all_bytes);
    if (!pm_comm_all_ok(comm, room)) {
        snprintf(err, errlen, "not enough free space for the job's file beside %s", want);
        goto out;
    }
    /* Same temporary name everywhere: rank 0's pid. */
    uint64_t pid = (uint64_t)getpid();
    if (comm->bcast(comm, &pid, sizeof pid) != 0)
        pid = 0;  /* the agreement below fails the write */
    snprintf(tmp, tmplen, "%s.tmp-%llu", want, (unsigned long long)pid);
    if (rank == 0)
        unlink(tmp);  /* a leftover of an earlier job with the same pid */
    comm->barrier(comm);
    struct pm_h5model rows;
    int wrote = pm_rows_model(o, m.map, &slab, &rows) == 0;
    wrote = pm_comm_all_ok(comm, wrote && pid != 0) &&
            w->rows_parallel(comm->mpi_comm, tmp, &rows) == 0;
    pm_h5model_free(&rows);
    pm_t_end(PM_T_GATHER);
    if (!wrote) {
        snprintf(err, errlen, "writing the job file %s in parallel failed", tmp);
        if (rank == 0)
            unlink(tmp);
        goto out;
    }
    int tables_ok = 1;
    if (rank == 0) {
        struct pm_h5model t;
        pm_h5model_init(&t);
        tables_ok = pm_tables_model(o, &tables, &t) == 0 && w->add_tables(tmp, &t) == 0;
        pm_h5model_free(&t);
    }
    pm_t_end(PM_T_BUILD);
    uint64_t tables_said = (uint64_t)tables_ok;
    if (comm->bcast(comm, &tables_said, sizeof tables_said) != 0 || !tables_said) {
        snprintf(err, errlen, "writing the tables of the job file %s failed", tmp);
        if (rank == 0)
            unlink(tmp);
        goto out;
    }
    verdict = rank == 0 ? 2 : 0;
out:
    if (images)
        free(images[0]);  /* the one block every rank's rows were gathered into */
    free(images), free(lens), free(mine), free(job);
    pm_union_free(&tables.regions);
    pm_union_free(&tables.modules);
    pm_joblog_free(&tables.log);
    pm_sample_rows_free(&samples);
    pm_merge_free(&m, o->nthreads);
    return verdict;
}
