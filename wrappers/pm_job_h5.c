/* The job's file on the HDF5 side (mpi_job_writer.c decides which way and
 * when): rank 0's in-memory file from every rank's rows file (3a), or the
 * ranks' collective parallel file and rank 0's serial string tables (3b). */
#define _GNU_SOURCE
#include "pm_job_h5.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- writing ---------------------------------------------------------------------- */

/* Rows of every rank into one parallel file. */
int pm_write_rows(MPI_Comm comm, const char *tmp, const struct pm_output *o,
                  int32_t *const *map, const struct pm_slab *base)
{
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_fapl_mpio(fapl, comm, MPI_INFO_NULL);
    hid_t file = H5Fcreate(tmp, H5F_ACC_EXCL, H5P_DEFAULT, fapl);
    H5Pclose(fapl);
    if (!pm_all_ok(comm, file >= 0)) {
        if (file >= 0)
            H5Fclose(file);
        return -1;
    }
    hid_t dxpl = H5Pcreate(H5P_DATASET_XFER);
    H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE);
    struct pm_slab slab = *base;
    slab.dxpl = dxpl;
    int rc = pm_h5out_rows(file, o, map, &slab);
    rc |= H5Fclose(file) < 0;
    H5Pclose(dxpl);
    return pm_all_ok(comm, rc == 0) ? 0 : -1;
}

/* The string tables and attributes of the job's file: regions, objects,
 * messages (the union's module keys are cut up: call once, at the end). */
static int pm_h5_job_tables(hid_t file, const struct pm_output *o, struct pm_tables *t)
{
    struct pm_union *u = &t->regions;
    struct pm_region_desc *desc = calloc((size_t)u->n + 1, sizeof *desc);
    struct pm_module_desc *mods = pm_module_descs(&t->modules);
    size_t nlines = 0;
    char **lines = pm_joblog_lines(&t->log, o->ranks, &nlines);
    int rc = -1;
    if (desc && mods && lines) {
        for (int32_t i = 0; i < u->n; i++)
            desc[i] = (struct pm_region_desc){u->name[i], u->parent[i], u->depth[i],
                                              u->kind[i]};
        struct pm_output job = *o;
        job.rank = -1;  /* the file holds every rank */
        rc = pm_h5out_tables(file, &job, desc, u->n, (const char *const *)lines, nlines, mods,
                             t->modules.n);
    }
    for (size_t i = 0; lines && i < nlines; i++)
        free(lines[i]);
    free(lines), free(desc), free(mods);
    return rc;
}

/* Rank 0 adds the string tables and attributes serially. */
int pm_write_tables(const char *tmp, const struct pm_output *o, struct pm_tables *t)
{
    hid_t file = H5Fopen(tmp, H5F_ACC_RDWR, H5P_DEFAULT);
    int rc = file >= 0 ? pm_h5_job_tables(file, o, t) : -1;
    if (file >= 0 && H5Fclose(file) < 0)
        rc = -1;
    return rc;
}

/* ---- the job's file in memory on rank 0 (3a) -------------------------------------- */

/* This rank's rows as a file in memory: /threads and the datasets of the
 * region, thread and rank groups, for its own threads, row 0 first. */
int pm_rows_image(const struct pm_output *o, int32_t *const *map, const struct pm_slab *job,
                  void **image, size_t *len, char *err, size_t errlen)
{
    hid_t file = pm_h5out_mem_create(err, errlen);
    if (file < 0)
        return -1;
    /* Placed from row 0 here, numbered as in the job's file. */
    struct pm_slab slab = *job;
    pm_slab_local_sparse(&slab, o, job->samples);
    slab.thread_offset = 0;
    slab.thread_total = (hsize_t)o->nthreads;
    slab.rank_offset = 0;
    slab.rank_total = o->totals ? 1 : 0;
    slab.dxpl = H5P_DEFAULT;
    slab.thread_base = job->thread_base;
    memcpy(slab.sparse_base, job->sparse_base, sizeof slab.sparse_base);
    if (pm_h5out_rows(file, o, map, &slab) != 0) {
        H5Fclose(file);
        snprintf(err, errlen, "HDF5 could not build this rank's rows (out of memory?)");
        return -1;
    }
    return pm_h5out_mem_take(file, image, len, err, errlen);
}

static hid_t pm_open_image(void *image, size_t len)
{
    static unsigned serial;
    char name[64];
    snprintf(name, sizeof name, "perfmark-rows-%ld-%u", (long)getpid(), serial++);
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_fapl_core(fapl, PM_H5_MEM_INCREMENT, 0);
    H5Pset_file_image(fapl, image, len);
    hid_t file = H5Fopen(name, H5F_ACC_RDONLY, fapl);
    H5Pclose(fapl);
    return file;
}

/* The row datasets of one rows file, as H5Ovisit finds them. */
struct pm_rowsets {
    char **path;
    size_t n, cap;
    int failed;
};

static herr_t pm_rowsets_add(hid_t obj, const char *name, const H5O_info_t *info, void *arg)
{
    (void)obj;
    struct pm_rowsets *s = arg;
    if (info->type != H5O_TYPE_DATASET)
        return 0;
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 32;
        char **grown = realloc(s->path, cap * sizeof *grown);
        if (!grown) {
            s->failed = 1;
            return -1;
        }
        s->path = grown;
        s->cap = cap;
    }
    if (!(s->path[s->n] = strdup(name))) {
        s->failed = 1;
        return -1;
    }
    s->n++;
    return 0;
}

static void pm_rowsets_free(struct pm_rowsets *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->path[i]);
    free(s->path);
}

/* Copy the attributes of `from` onto `to` (the flag names of /region/flags). */
static herr_t pm_copy_attr(hid_t from, const char *name, const H5A_info_t *info, void *to)
{
    (void)info;
    hid_t a = H5Aopen(from, name, H5P_DEFAULT);
    hid_t t = a >= 0 ? H5Aget_type(a) : -1, sp = a >= 0 ? H5Aget_space(a) : -1;
    size_t size = t >= 0 ? H5Tget_size(t) : 0;
    hssize_t n = sp >= 0 ? H5Sget_simple_extent_npoints(sp) : -1;
    void *buf = size && n > 0 ? calloc((size_t)n, size) : NULL;
    herr_t rc = -1;
    if (buf && H5Aread(a, t, buf) >= 0) {
        hid_t b = H5Acreate2(*(hid_t *)to, name, t, sp, H5P_DEFAULT, H5P_DEFAULT);
        rc = b >= 0 && H5Awrite(b, t, buf) >= 0 ? 0 : -1;
        if (b >= 0)
            H5Aclose(b);
    }
    free(buf);
    if (sp >= 0)
        H5Sclose(sp);
    if (t >= 0)
        H5Tclose(t);
    if (a >= 0)
        H5Aclose(a);
    return rc;
}

/* Dataset `path` of every rows file, one after the other in rank order, into
 * `job` (created there with the summed first dimension). Each rank's dataset
 * is opened once: H5Dopen2 was the largest part of building the job's file. */
static int pm_merge_rowset(hid_t job, const hid_t *rows, int nranks, const char *path)
{
    hsize_t total = 0, dims[3] = {0, 0, 0};
    int ndims = -1, rc = 0, first = -1;  /* first: the rank whose attributes are copied */
    hid_t type = -1;
    hid_t *ds = malloc((size_t)nranks * sizeof *ds);
    hsize_t(*d)[3] = malloc((size_t)nranks * sizeof *d);
    if (!ds || !d) {
        free(ds), free(d);
        return -1;
    }
    for (int r = 0; r < nranks; r++)
        ds[r] = -1;
    for (int r = 0; r < nranks && rc == 0; r++) {
        ds[r] = H5Dopen2(rows[r], path, H5P_DEFAULT);
        hid_t sp = ds[r] >= 0 ? H5Dget_space(ds[r]) : -1;
        int nd = sp >= 0 ? H5Sget_simple_extent_dims(sp, d[r], NULL) : -1;
        if (nd < 1 || nd > 3 || (ndims >= 0 && nd != ndims))
            rc = -1;
        else {
            if (ndims < 0) {
                ndims = nd;
                memcpy(dims, d[r], sizeof dims);
                type = H5Dget_type(ds[r]);
                first = r;
            }
            for (int i = 1; i < nd; i++)
                rc |= d[r][i] != dims[i];
            total += d[r][0];
        }
        if (sp >= 0)
            H5Sclose(sp);
    }
    hid_t out = -1, fspace = -1;
    if (rc == 0 && ndims >= 0) {
        dims[0] = total;
        fspace = H5Screate_simple(ndims, dims, NULL);
        hid_t dcpl = pm_h5out_dcpl(ndims, dims), lcpl = H5Pcreate(H5P_LINK_CREATE);
        H5Pset_create_intermediate_group(lcpl, 1);
        out = H5Dcreate2(job, path, type, fspace, lcpl, dcpl, H5P_DEFAULT);
        H5Pclose(lcpl), H5Pclose(dcpl);
    }
    rc = out >= 0 ? 0 : -1;
    hsize_t row0 = 0;
    size_t esize = rc == 0 ? H5Tget_size(type) : 0;
    for (int r = 0; r < nranks && rc == 0; r++) {
        hsize_t start[3] = {row0, 0, 0}, cells = 1;
        for (int i = 0; i < ndims; i++)
            cells *= d[r][i];
        if (cells > 0) {
            void *buf = malloc(cells * esize);
            hid_t mspace = H5Screate_simple(ndims, d[r], NULL);
            rc = buf && H5Dread(ds[r], type, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) >= 0 &&
                         H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, NULL, d[r], NULL) >= 0 &&
                         H5Dwrite(out, type, mspace, fspace, H5P_DEFAULT, buf) >= 0
                     ? 0
                     : -1;
            H5Sclose(mspace);
            free(buf);
        }
        if (rc == 0 && r == first)
            H5Aiterate2(ds[r], H5_INDEX_NAME, H5_ITER_INC, NULL, pm_copy_attr, &out);
        row0 += d[r][0];
    }
    for (int r = 0; r < nranks; r++)
        if (ds[r] >= 0)
            H5Dclose(ds[r]);
    if (out >= 0)
        H5Dclose(out);
    if (fspace >= 0)
        H5Sclose(fspace);
    if (type >= 0)
        H5Tclose(type);
    free(ds), free(d);
    return rc;
}

/* Rank 0: the job's file from the tables and every rank's rows file. */
int pm_job_image(const struct pm_output *o, struct pm_tables *t, void **images,
                 const size_t *lens, int nranks, void **image, size_t *len, char *err,
                 size_t errlen)
{
    hid_t job = pm_h5out_mem_create(err, errlen);
    hid_t *rows = calloc((size_t)nranks, sizeof *rows);
    struct pm_rowsets sets = {0};
    int rc = job >= 0 && rows ? 0 : -1;
    for (int r = 0; r < nranks && rows; r++)
        rows[r] = -1;
    for (int r = 0; r < nranks && rc == 0; r++)
        rc = (rows[r] = pm_open_image(images[r], lens[r])) >= 0 ? 0 : -1;
    if (rc == 0) {
        rc = pm_h5_job_tables(job, o, t);
        rc |= H5Ovisit2(rows[0], H5_INDEX_NAME, H5_ITER_INC, pm_rowsets_add, &sets,
                        H5O_INFO_BASIC) < 0 || sets.failed;
    }
    for (size_t i = 0; i < sets.n && rc == 0; i++)
        rc = pm_merge_rowset(job, rows, nranks, sets.path[i]);
    for (int r = 0; r < nranks && rows; r++)
        if (rows[r] >= 0)
            H5Fclose(rows[r]);
    if (rc == 0)
        rc = pm_h5out_mem_take(job, image, len, err, errlen);
    else if (job >= 0) {
        H5Fclose(job);
        snprintf(err, errlen, "HDF5 could not build the job's file in memory (out of memory?)");
    }
    pm_rowsets_free(&sets);
    free(rows);
    return rc;
}
