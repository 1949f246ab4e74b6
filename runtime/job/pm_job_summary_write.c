/* pm_job_summary_write — a summary file for the job (pm_job_model.h, 3c;
 * docs/design.md, "Summary files").
 *
 * 1. Each rank writes its own rows with the job's tables to a file of its
 *    own (the report's engine reads files) in TMPDIR, and the engine in the
 *    HDF5 writer library of the job's MPI (pm_job_summary.h) makes the
 *    statistics over every rank up a binomial tree: rank 0 gets them, with
 *    the ranks to keep and the thread rows the statistics name.
 * 2. The kept ranks' rows go to rank 0 as in the gathered path, placed
 *    among the kept ranks only, and rank 0 writes them with /summary.
 * No rank holds more than its own rows and one state a round; rank 0 holds
 * the kept ranks' rows (PERFMARK_SUMMARY_KEEP bytes at most). */
#define _GNU_SOURCE
#include "pm_job_model.h"
#include "pm_log.h"
#include "pm_store.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* This rank's rows with the job's tables, as a file at `path` (its own
 * thread row 0 and sparse rows from 0). */
static int pm_own_file(const struct pm_output *o, int32_t *const *map, struct pm_tables *tables,
                       const struct pm_slab *job, const char *path, char *why, size_t whylen)
{
    struct pm_slab own = *job;
    pm_slab_local_sparse(&own, o, job->samples);
    void *pack = NULL, *image = NULL;
    size_t len = 0, imglen = 0;
    int rc = pm_rows_packed(o, map, &own, &pack, &len, why, whylen);
    if (rc == 0)
        rc = pm_job_file(o, tables, &pack, &len, 1, &image, &imglen, why, whylen);
    free(pack);
    if (rc != 0)
        return -1;
    rc = pm_store_new(path, image, imglen);
    if (rc != 0)
        snprintf(why, whylen, "cannot write %s: %s", path, strerror(errno));
    free(image);
    return rc;
}

static int pm_in_list(const int32_t *list, size_t n, int32_t v, size_t *at)
{
    for (size_t i = 0; i < n; i++)
        if (list[i] == v) {
            *at = i;
            return 1;
        }
    return 0;
}

/* "0, 3, 17" (the first few, then how many more). */
static void pm_rank_list(const int32_t *r, size_t n, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < n && i < 8 && used < len; i++) {
        int k = snprintf(buf + used, len - used, "%s%d", i ? ", " : "", (int)r[i]);
        used += k > 0 ? (size_t)k : 0;
    }
    if (n > 8 && used < len)
        snprintf(buf + used, len - used, " and %zu more", n - 8);
}

int pm_job_write_summary(const struct pm_comm *comm, const struct pm_output *o,
                         int32_t *const *map, struct pm_tables *tables,
                         const struct pm_slab *job, const uint64_t *counts, uint64_t rows_bytes,
                         uint64_t all_bytes, const char *beside, pm_writer_publish_fn publish,
                         void *ctx, char *err, size_t errlen)
{
    int rank = comm->rank, size = comm->size, verdict = -1;
    char why[512] = "";
    const struct pm_writer_entry *w = pm_writer_lib_for(comm->abi, why, sizeof why);
    if (w && !w->summary)
        snprintf(why, sizeof why, "the HDF5 writer library was built without the report's engine");
    if (!pm_comm_all_ok(comm, w && w->summary)) {
        if (rank == 0)
            pm_msg(PM_MSG_ONCE, "no summary file for this job (%s): writing every rank's rows",
                   why[0] ? why : "another rank cannot load the HDF5 writer");
        return PM_JOB_FULL;
    }

    /* 1. the statistics over every rank */
    const char *dir = getenv("TMPDIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/perfmark-summary-%ld-%d.h5", dir && *dir ? dir : "/tmp",
             (long)getpid(), rank);
    int own = pm_own_file(o, map, tables, job, path, why, sizeof why) == 0;
    struct pm_summary sum = {0};
    int made = pm_comm_all_ok(comm, own);
    if (made)
        made = w->summary(comm, path, job->thread_offset, rows_bytes, o->summary_keep, &sum, why,
                          sizeof why) == 0;
    if (own)
        unlink(path);
    if (!made) {
        /* every rank knows: the summary's last step agreed, or own did */
        if (rank == 0)
            pm_msg(PM_MSG_ONCE, "no summary file for this job (%s): writing every rank's rows",
                   why[0] ? why : "another rank could not make its part");
        pm_summary_free(&sum);
        return PM_JOB_FULL;
    }

    /* 2. the kept ranks' rows, placed among the kept ranks only */
    size_t at = 0;
    int kept = pm_in_list(sum.kept, sum.nkept, rank, &at);
    uint64_t mine_counts[PM_K_N], before[PM_K_N] = {0}, total[PM_K_N] = {0};
    for (int k = 0; k < PM_K_N; k++)
        mine_counts[k] = kept ? counts[k] : 0;
    uint64_t *row_in = calloc(sum.nkept + 1, sizeof *row_in);
    uint64_t *kept_row = calloc(sum.nkept + 1, sizeof *kept_row);
    void *mine = NULL, **images = NULL, *file = NULL;
    size_t mylen = 0, *lens = NULL, filelen = 0;
    if (row_in && kept)
        row_in[at] = job->thread_offset;
    if (!pm_comm_all_ok(comm, row_in && kept_row) ||
        comm->exscan_sum(comm, mine_counts, before, PM_K_N) != 0 ||
        comm->allreduce(comm, mine_counts, total, PM_K_N, PM_COMM_SUM) != 0 ||
        comm->allreduce(comm, row_in, kept_row, (int)sum.nkept, PM_COMM_SUM) != 0) {
        snprintf(err, errlen, "placing the kept ranks' rows in the summary file failed");
        goto out;
    }
    struct pm_slab slab;
    pm_slab_place(&slab, before, total, job->regions, job->samples);
    int built = !kept || pm_rows_packed(o, map, &slab, &mine, &mylen, why, sizeof why) == 0;
    if (rank == 0) {
        images = calloc((size_t)size, sizeof *images);
        lens = calloc((size_t)size, sizeof *lens);
    }
    if (!pm_comm_all_ok(comm, built && (rank != 0 || (images && lens))) ||
        pm_gather_images(comm, mine, mylen, images, lens) != 0) {
        snprintf(err, errlen, "gathering the kept ranks' rows on rank 0 failed%s%s",
                 why[0] ? ": " : "", why);
        goto out;
    }
    int stored = 1;
    if (rank == 0) {
        /* the packs of the kept ranks, in rank order (the others sent none) */
        size_t n = 0;
        for (int r = 0; r < size; r++)
            if (lens[r] > 0) {
                images[n] = images[r];
                lens[n++] = lens[r];
            }
        uint64_t *ref_row = calloc(sum.nrefs + 1, sizeof *ref_row);
        int32_t *ref_rank = calloc(sum.nrefs + 1, sizeof *ref_rank);
        int32_t *ref_thread = calloc(sum.nrefs + 1, sizeof *ref_thread);
        for (size_t i = 0; ref_row && ref_rank && ref_thread && i < sum.nrefs; i++) {
            ref_row[i] = sum.refs[i].row;
            ref_rank[i] = sum.refs[i].rank;
            ref_thread[i] = sum.refs[i].thread;
        }
        struct pm_h5summary hs = {sum.layout, job->thread_total, sum.state, sum.state_len,
                                  sum.kept, kept_row, sum.nkept, ref_row, ref_rank,
                                  ref_thread, sum.nrefs, {{0}}};
        _Static_assert(PM_H5SUMMARY_TABLES == PM_SUMMARY_TABLES, "a summary table not written");
        for (int i = 0; i < PM_SUMMARY_TABLES; i++)
            hs.tab[i] = (struct pm_h5table){sum.tab[i].v, sum.tab[i].u, sum.tab[i].rows,
                                            sum.tab[i].cols, sum.tab[i].columns};
        struct pm_output ko = *o;
        ko.summary = &hs;
        stored = ref_row && ref_rank && ref_thread && n == sum.nkept &&
                 pm_job_file(&ko, tables, images, lens, (int)n, &file, &filelen, err,
                             errlen) == 0 &&
                 publish(file, filelen, ctx) == 0;
        free(ref_row), free(ref_rank), free(ref_thread);
        if (stored) {
            char list[128];
            pm_rank_list(sum.kept, sum.nkept, list, sizeof list);
            if (beside)
                pm_msg(PM_MSG_ONCE, "PERFMARK_SUMMARY_OUTPUT: wrote the summary file %s too: "
                       "statistics across all %d ranks for every region, full rows of %zu of "
                       "them (%s)", beside, size, sum.nkept, list);
            else if (o->job_detail == PM_DETAIL_SUMMARY)
                pm_msg(PM_MSG_ONCE, "summary file (PERFMARK_DETAIL=summary): statistics across "
                       "all %d ranks for every region, full rows of %zu of them (%s)", size,
                       sum.nkept, list);
            else
                pm_msg(PM_MSG_ONCE, "the job's full file would hold %.0f MiB of rows, above "
                       "PERFMARK_SUMMARY_ABOVE (%.0f MiB): wrote a summary file instead, with "
                       "statistics across all %d ranks for every region and full rows of %zu "
                       "of them (%s); PERFMARK_DETAIL=full keeps every rank's rows",
                       (double)all_bytes / 1048576.0, (double)o->summary_above / 1048576.0,
                       size, sum.nkept, list);
        }
    }
    verdict = pm_comm_all_ok(comm, stored) ? (rank == 0 ? 1 : 0) : -2;
out:
    if (images)
        free(images[0]);
    free(images), free(lens), free(mine), free(file), free(row_in), free(kept_row);
    pm_summary_free(&sum);
    return verdict;
}
