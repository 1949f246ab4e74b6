/*
 * read_summary.c — a summary file's /summary (schema revision 9,
 * docs/hdf5-schema.md "/summary"): the report's state over every rank of
 * the job, the ranks whose rows the file holds, and the thread rows of the
 * job the statistics name. Small, read whole at open. A full file (and
 * every file before revision 9) reads as no summary.
 */
#include "read_internal.h"

#include <stdlib.h>
#include <string.h>

/* An attribute of /summary (the group's, not the root's). */
static int pm_group_attrs(struct pm_rd *rd, struct pm_file *d)
{
    hid_t grp = H5Gopen2(rd->file, pm_schema_path(PM_S_SUMMARY), H5P_DEFAULT);
    if (grp < 0)
        return pm_rd_fail(rd, "cannot open %s", pm_schema_path(PM_S_SUMMARY));
    struct pm_rd on_group = *rd;
    on_group.root = grp;
    int rc = pm_rd_attr_str(&on_group, pm_schema_name(PM_S_SUMMARY_LAYOUT),
                            &d->summary_layout) < 0 ||
                     pm_rd_attr_int(&on_group, pm_schema_name(PM_S_SUMMARY_THREADS),
                                    H5T_NATIVE_UINT64, &d->summary_threads) < 0
                 ? -1
                 : 0;
    rd->failed = on_group.failed;
    H5Gclose(grp);
    return rc;
}

static int pm_column(struct pm_rd *rd, enum pm_schema_id id, size_t *n, void **out)
{
    hsize_t dims[1] = {PM_ANY};

    if (pm_rd_read_dataset(rd, id, dims, out) < 0)
        return -1;
    if (*n != (size_t)-1 && *n != (size_t)dims[0])
        return pm_rd_fail(rd, "%s has %llu rows, not %zu like the others of its kind",
                          pm_schema_path(id), (unsigned long long)dims[0], *n);
    *n = (size_t)dims[0];
    return 0;
}

int pm_rd_load_summary(struct pm_rd *rd, struct pm_file *d)
{
    char *detail = NULL;

    if (pm_rd_attr_str(rd, pm_schema_name(PM_S_DETAIL), &detail) < 0)
        return -1;
    d->summary = strcmp(detail, "summary") == 0;
    free(detail);
    if (!d->summary)
        return 0;
    if (!pm_rd_link_exists(rd, pm_schema_path(PM_S_SUMMARY)))
        return pm_rd_fail(rd, "a summary file without %s", pm_schema_path(PM_S_SUMMARY));
    size_t nb = (size_t)-1, nk = (size_t)-1, nr = (size_t)-1;
    if (pm_group_attrs(rd, d) < 0 ||
        pm_column(rd, PM_S_SUMMARY_STATE, &nb, (void **)&d->summary_state) < 0 ||
        pm_column(rd, PM_S_SUMMARY_KEPT_RANK, &nk, (void **)&d->kept_rank) < 0 ||
        pm_column(rd, PM_S_SUMMARY_KEPT_ROW, &nk, (void **)&d->kept_row) < 0 ||
        pm_column(rd, PM_S_SUMMARY_REF_ROW, &nr, (void **)&d->ref_row) < 0 ||
        pm_column(rd, PM_S_SUMMARY_REF_RANK, &nr, (void **)&d->ref_rank) < 0 ||
        pm_column(rd, PM_S_SUMMARY_REF_THREAD, &nr, (void **)&d->ref_thread) < 0)
        return -1;
    d->summary_state_len = nb;
    d->nkept = nk;
    d->nrefs = nr;
    for (size_t i = 1; i < nr; i++)
        if (d->ref_row[i] <= d->ref_row[i - 1])
            return pm_rd_fail(rd, "%s is not ascending", pm_schema_path(PM_S_SUMMARY_REF_ROW));
    /* each kept rank's first /threads row (rows come in rank order) */
    if (!(d->kept_first = calloc(nk + 1, sizeof *d->kept_first)))
        return pm_rd_oom(rd);
    for (size_t i = 0; i < nk; i++) {
        if (i > 0 && d->kept_rank[i] <= d->kept_rank[i - 1])
            return pm_rd_fail(rd, "%s is not ascending", pm_schema_path(PM_S_SUMMARY_KEPT_RANK));
        d->kept_first[i] = SIZE_MAX;
    }
    for (size_t t = 0, i = 0; t < d->T; t++) {
        while (i < nk && d->kept_rank[i] < d->tids[t].rank)
            i++;
        if (i >= nk || d->kept_rank[i] != d->tids[t].rank)
            return pm_rd_fail(rd, "/threads row %zu is rank %d, which %s does not list (or the "
                              "rows are not in rank order)", t, (int)d->tids[t].rank,
                              pm_schema_path(PM_S_SUMMARY_KEPT_RANK));
        if (d->kept_first[i] == SIZE_MAX)
            d->kept_first[i] = t;
    }
    return 0;
}

static int pm_cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;

    return (x > y) - (x < y);
}

size_t pm_file_job_row(const struct pm_file *d, size_t t)
{
    if (!d->summary || t >= d->T)
        return t;
    const int32_t *k = bsearch(&d->tids[t].rank, d->kept_rank, d->nkept, sizeof *k, pm_cmp_i32);
    if (!k || d->kept_first[k - d->kept_rank] == SIZE_MAX)
        return t;
    return (size_t)d->kept_row[k - d->kept_rank] + (t - d->kept_first[k - d->kept_rank]);
}

void pm_rd_free_summary(struct pm_file *d)
{
    free(d->summary_layout);
    free(d->summary_state);
    free(d->kept_rank);
    free(d->kept_row);
    free(d->kept_first);
    free(d->ref_row);
    free(d->ref_rank);
    free(d->ref_thread);
}
