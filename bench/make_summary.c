/*
 * make_summary.c — a summary file from a full job file, for the report's
 * scale benchmark and its test (bench/run_summary_scale.sh,
 * tests/report/check_summary_synthetic.py): the summary of a job too large
 * to run here, made from gen_synthetic's files.
 *
 * usage: make_summary FULL.h5 KEPT.h5
 *
 * FULL is a whole job's file. KEPT is a file of the same regions and
 * events holding rank 0's rows only (gen_synthetic with the same shape and
 * 1 rank: its cells are a hash of the thread row, the same as rank 0's in
 * FULL). The report's state over every rank of FULL (one pass over the
 * whole file: report_state.h, the engine the job runs) is written into KEPT
 * as /summary, with the thread rows it names, and KEPT becomes the job's
 * summary file (root attributes detail and ranks). Not how a job makes one
 * (there the ranks' states join up a tree; the tests under tests/mpi check
 * that), but the same state and the same reader.
 */
#include "model/report_model.h"
#include "model/report_state.h"
#include "model/summary_tables.h"

#include <hdf5.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Attribute `name` of obj (replaced if there), one value of `type`. */
static int pm_put_attr(hid_t obj, const char *name, hid_t type, const void *value)
{
    hid_t sp = H5Screate(H5S_SCALAR);
    if (H5Aexists(obj, name) > 0)
        H5Adelete(obj, name);
    hid_t a = H5Acreate2(obj, name, type, sp, H5P_DEFAULT, H5P_DEFAULT);
    int rc = a >= 0 && H5Awrite(a, type, value) >= 0 ? 0 : -1;
    if (a >= 0)
        H5Aclose(a);
    H5Sclose(sp);
    return rc;
}

static int pm_put_str(hid_t obj, const char *name, const char *value)
{
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, strlen(value) + 1);
    int rc = pm_put_attr(obj, name, t, value);
    H5Tclose(t);
    return rc;
}

/* Dataset `name` in grp (replaced if there): `rank` dims of `file_type`,
 * written from `data` of `mem_type`. */
static int pm_put_data(hid_t grp, const char *name, hid_t file_type, hid_t mem_type, int rank,
                       const hsize_t *dims, const void *data)
{
    if (H5Lexists(grp, name, H5P_DEFAULT) > 0)
        H5Ldelete(grp, name, H5P_DEFAULT);
    hid_t sp = H5Screate_simple(rank, dims, NULL);
    hid_t ds = H5Dcreate2(grp, name, file_type, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    int empty = dims[0] == 0 || (rank > 1 && dims[1] == 0);
    int rc = ds >= 0 && (empty || H5Dwrite(ds, mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) >= 0)
                 ? 0
                 : -1;
    if (ds >= 0)
        H5Dclose(ds);
    H5Sclose(sp);
    return rc;
}

static int pm_put_array(hid_t grp, const char *name, hid_t type, size_t n, const void *data)
{
    hsize_t dims[1] = {n};
    return pm_put_data(grp, name, type, type, 1, dims, data);
}

/* A table of the finished statistics, its columns' names beside it. */
static int pm_put_table(hid_t grp, const char *name, const struct pm_stable *t, int one)
{
    hsize_t dims[2] = {one ? t->cols : t->rows, t->cols};
    char attr[64];
    snprintf(attr, sizeof attr, "%s_columns", name);
    int rc = t->u ? pm_put_data(grp, name, H5T_STD_U64LE, H5T_NATIVE_UINT64, one ? 1 : 2, dims,
                                t->u)
                  : pm_put_data(grp, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, one ? 1 : 2, dims,
                                t->v);
    return rc || pm_put_str(grp, attr, t->columns);
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: make_summary FULL.h5 KEPT.h5\n");
        return 2;
    }
    struct pm_file d;
    struct pm_report rep;
    char err[512] = "", layout[96];
    void *state = NULL;
    size_t len = 0;
    if (pm_file_open(argv[1], &d, 0, err, sizeof err) != 0) {
        fprintf(stderr, "make_summary: %s\n", err);
        return 1;
    }
    struct pm_rstate *s = pm_rstate_local(&rep, &d, argv[1], 0, err, sizeof err);
    if (!s || pm_rstate_pack(s, &state, &len) != 0 || pm_rstate_finish(s) != 0) {
        fprintf(stderr, "make_summary: %s\n", err[0] ? err : "out of memory");
        return 1;
    }
    pm_rstate_layout_id(layout, sizeof layout);
    struct pm_stable tab[PM_STAB_N];
    if (pm_summary_tables(&rep, tab) != 0) {
        fprintf(stderr, "make_summary: out of memory\n");
        return 1;
    }
    uint64_t *rows = calloc(pm_report_refs_cap(&rep), sizeof *rows);
    size_t n = rows ? pm_report_refs(&rep, rows) : 0;
    int32_t *rk = calloc(n + 1, sizeof *rk), *th = calloc(n + 1, sizeof *th);
    if (!rows || !rk || !th)
        return 1;
    for (size_t i = 0; i < n; i++) {
        rk[i] = rows[i] < d.T ? d.tids[rows[i]].rank : -1;
        th[i] = rows[i] < d.T ? d.tids[rows[i]].thread : -1;
    }
    int32_t kept = 0, ranks = (int32_t)rep.xr.nranks, minus1 = -1;
    uint64_t kept_row = 0, threads = d.T;

    hid_t f = H5Fopen(argv[2], H5F_ACC_RDWR, H5P_DEFAULT);
    hid_t g = f < 0 ? -1
              : H5Lexists(f, "summary", H5P_DEFAULT) > 0
                  ? H5Gopen2(f, "summary", H5P_DEFAULT)
                  : H5Gcreate2(f, "summary", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    int rc = g < 0 || pm_put_str(f, "detail", "summary") || pm_put_attr(f, "ranks", H5T_STD_I32LE,
                                                                          &ranks) ||
             pm_put_attr(f, "rank", H5T_STD_I32LE, &minus1) || pm_put_str(g, "layout", layout) ||
             pm_put_attr(g, "threads", H5T_STD_U64LE, &threads) ||
             pm_put_array(g, "state", H5T_STD_U8LE, len, state) ||
             pm_put_array(g, "kept_rank", H5T_STD_I32LE, 1, &kept) ||
             pm_put_array(g, "kept_row", H5T_STD_U64LE, 1, &kept_row) ||
             pm_put_array(g, "ref_row", H5T_STD_U64LE, n, rows) ||
             pm_put_array(g, "ref_rank", H5T_STD_I32LE, n, rk) ||
             pm_put_array(g, "ref_thread", H5T_STD_I32LE, n, th) ||
             pm_put_table(g, "region_stat", &tab[PM_STAB_REGION], 0) ||
             pm_put_table(g, "region_more", &tab[PM_STAB_MORE], 0) ||
             pm_put_table(g, "mpi_stat", &tab[PM_STAB_MPI], 0) ||
             pm_put_table(g, "run_stat", &tab[PM_STAB_RUN], 1) ||
             pm_put_table(g, "rank_share", &tab[PM_STAB_SHARE], 0) ||
             pm_put_table(g, "topdown", &tab[PM_STAB_TOPDOWN], 0) ||
             pm_put_table(g, "topdown_slots", &tab[PM_STAB_TD_SLOTS], 0) ||
             pm_put_table(g, "region_count", &tab[PM_STAB_COUNT], 0) ||
             pm_put_table(g, "run_count", &tab[PM_STAB_RUN_COUNT], 1);
    if (g >= 0)
        H5Gclose(g);
    if (f >= 0)
        H5Fclose(f);
    if (rc) {
        fprintf(stderr, "make_summary: cannot write /summary into %s\n", argv[2]);
        return 1;
    }
    printf("make_summary: %zu ranks, %zu thread rows, state %zu bytes, %zu thread references\n",
           rep.xr.nranks, d.T, len, n);
    free(rows), free(rk), free(th), free(state);
    pm_summary_tables_free(tab);
    pm_rstate_free(s);
    pm_report_free(&rep);
    pm_file_free(&d);
    return 0;
}
