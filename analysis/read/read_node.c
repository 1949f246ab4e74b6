/*
 * read_node.c — node mode (schema revision 7, docs/hdf5-schema.md "/node"):
 * the watched CPUs and the other processes, small, read whole at open; the
 * CPUs' interval rows counted (NV) at open and read a block at a time
 * (pm_file_node_rows). Files without /node read as no node mode.
 */
#include "read_internal.h"

#include <stdlib.h>
#include <string.h>

/* A [P] or [Q] column into `out[i].field` (elsize apart). */
static int pm_node_column(struct pm_rd *rd, enum pm_schema_id id, size_t n, void *out,
                          size_t elsize, size_t off, size_t width)
{
    hsize_t dims[1] = {n};
    void *buf = NULL;
    if (!pm_rd_link_exists(rd, pm_schema_path(id)))
        return 0;
    if (pm_rd_read_dataset(rd, id, dims, &buf) < 0)
        return -1;
    for (size_t i = 0; buf && i < n; i++)
        memcpy((char *)out + i * elsize + off, (char *)buf + i * width, width);
    free(buf);
    return 0;
}

/* The rows of a part: the first dataset of it that exists says how many. */
static int pm_node_rows(struct pm_rd *rd, enum pm_schema_id id, size_t *n)
{
    *n = 0;
    if (!pm_rd_link_exists(rd, pm_schema_path(id)))
        return 0;
    hid_t ds = H5Dopen2(rd->file, pm_schema_path(id), H5P_DEFAULT);
    hid_t sp = ds >= 0 ? H5Dget_space(ds) : -1;
    hsize_t dims[1] = {PM_ANY};
    int rc = sp < 0 ? pm_rd_fail(rd, "cannot open %s", pm_schema_path(id))
                    : pm_rd_check_shape(rd, pm_schema_path(id), "rows", sp, 1, dims);
    if (sp >= 0)
        H5Sclose(sp);
    if (ds >= 0)
        H5Dclose(ds);
    if (rc == 0)
        *n = (size_t)dims[0];
    return rc;
}

int pm_rd_load_node(struct pm_rd *rd, struct pm_file *d)
{
    if (!pm_rd_link_exists(rd, pm_schema_path(PM_S_NODE)))
        return 0;
    if (pm_node_rows(rd, PM_S_NODE_CPU, &d->NP) < 0 ||
        pm_node_rows(rd, PM_S_NODE_PROCESS_PID, &d->NQ) < 0 ||
        pm_node_rows(rd, PM_S_NODE_SERIES_TIME_NS, &d->NV) < 0)
        return -1;
    d->node_cpus = calloc(d->NP + 1, sizeof *d->node_cpus);
    d->node_procs = calloc(d->NQ + 1, sizeof *d->node_procs);
    if (!d->node_cpus || !d->node_procs)
        return pm_rd_oom(rd);
    const size_t C = sizeof *d->node_cpus, Q = sizeof *d->node_procs;
#define PM_NC(f) offsetof(struct pm_file_node_cpu, f)
#define PM_NQ(f) offsetof(struct pm_file_node_proc, f)
    if (pm_node_column(rd, PM_S_NODE_CPU_RANK, d->NP, d->node_cpus, C, PM_NC(rank), 4) < 0 ||
        pm_node_column(rd, PM_S_NODE_CPU, d->NP, d->node_cpus, C, PM_NC(cpu), 4) < 0 ||
        pm_node_column(rd, PM_S_NODE_CPU_SPAN_NS, d->NP, d->node_cpus, C, PM_NC(span_ns), 8) < 0 ||
        pm_node_column(rd, PM_S_NODE_CPU_OWN_NS, d->NP, d->node_cpus, C, PM_NC(own_ns), 8) < 0 ||
        pm_node_column(rd, PM_S_NODE_CPU_FOREIGN_NS, d->NP, d->node_cpus, C, PM_NC(foreign_ns),
                       8) < 0 ||
        pm_node_column(rd, PM_S_NODE_CPU_IDLE_NS, d->NP, d->node_cpus, C, PM_NC(idle_ns), 8) < 0 ||
        pm_node_column(rd, PM_S_NODE_CPU_LOST, d->NP, d->node_cpus, C, PM_NC(lost), 8) < 0 ||
        pm_node_column(rd, PM_S_NODE_CPU_MPI_SPAN_NS, d->NP, d->node_cpus, C, PM_NC(mpi_span_ns),
                       8) < 0 ||
        pm_node_column(rd, PM_S_NODE_CPU_MPI_OWN_NS, d->NP, d->node_cpus, C, PM_NC(mpi_own_ns),
                       8) < 0 ||
        pm_node_column(rd, PM_S_NODE_CPU_MPI_FOREIGN_NS, d->NP, d->node_cpus, C,
                       PM_NC(mpi_foreign_ns), 8) < 0 ||
        pm_node_column(rd, PM_S_NODE_CPU_MPI_IDLE_NS, d->NP, d->node_cpus, C, PM_NC(mpi_idle_ns),
                       8) < 0 ||
        pm_node_column(rd, PM_S_NODE_PROCESS_RANK, d->NQ, d->node_procs, Q, PM_NQ(rank), 4) < 0 ||
        pm_node_column(rd, PM_S_NODE_PROCESS_CPU, d->NQ, d->node_procs, Q, PM_NQ(cpu), 4) < 0 ||
        pm_node_column(rd, PM_S_NODE_PROCESS_PID, d->NQ, d->node_procs, Q, PM_NQ(pid), 8) < 0 ||
        pm_node_column(rd, PM_S_NODE_PROCESS_NS, d->NQ, d->node_procs, Q, PM_NQ(ns), 8) < 0)
        return -1;
    char **comm = NULL;
    size_t n = 0;
    if (pm_rd_link_exists(rd, pm_schema_path(PM_S_NODE_PROCESS_COMM)) &&
        pm_rd_read_strings(rd, PM_S_NODE_PROCESS_COMM, &comm, &n) < 0)
        return -1;
    for (size_t i = 0; i < d->NQ; i++) {
        d->node_procs[i].comm = i < n && comm ? comm[i] : strdup("?");
        if (i < n && comm)
            comm[i] = NULL;
        if (!d->node_procs[i].comm)
            return pm_rd_oom(rd);
    }
    for (size_t i = 0; comm && i < n; i++)
        free(comm[i]);
    free(comm);
    return 0;
}

void pm_rd_free_node(struct pm_file *d)
{
    for (size_t i = 0; d->node_procs && i < d->NQ; i++)
        free(d->node_procs[i].comm);
    free(d->node_procs), free(d->node_cpus);
}

int pm_file_node_rows(const struct pm_file *d, size_t v0, size_t nv, struct pm_file_node_row *out,
                      char *err, size_t errlen)
{
    if (v0 > d->NV || nv > d->NV - v0) {
        snprintf(err, errlen, "node: rows %zu..%zu asked of %zu", v0, v0 + nv, d->NV);
        return -1;
    }
    if (!d->stream) {
        snprintf(err, errlen, "node: the file is not open");
        return -1;
    }
    if (!nv)
        return 0;
    struct pm_rd rd = {d->stream->path, err, errlen, 0, d->stream->file, -1, 0};
    static const struct {
        enum pm_schema_id id;
        size_t off, width;
    } cols[] = {
        {PM_S_NODE_SERIES_RANK, offsetof(struct pm_file_node_row, rank), 4},
        {PM_S_NODE_SERIES_CPU, offsetof(struct pm_file_node_row, cpu), 4},
        {PM_S_NODE_SERIES_TIME_NS, offsetof(struct pm_file_node_row, time_ns), 8},
        {PM_S_NODE_SERIES_OWN_NS, offsetof(struct pm_file_node_row, own_ns), 8},
        {PM_S_NODE_SERIES_FOREIGN_NS, offsetof(struct pm_file_node_row, foreign_ns), 8},
        {PM_S_NODE_SERIES_IDLE_NS, offsetof(struct pm_file_node_row, idle_ns), 8},
    };
    uint64_t *buf = calloc(nv, 8);
    if (!buf)
        return pm_rd_oom(&rd);
    for (size_t k = 0; k < sizeof cols / sizeof *cols; k++) {
        const char *name = pm_schema_path(cols[k].id);
        memset(buf, 0, nv * 8);
        if (pm_rd_link_exists(&rd, name) &&
            pm_rd_read_rows(&rd, cols[k].id, cols[k].width == 4 ? H5T_NATIVE_INT32
                                                                : H5T_NATIVE_UINT64,
                            v0, nv, 1, buf) < 0) {
            free(buf);
            return -1;
        }
        for (size_t i = 0; i < nv; i++)
            memcpy((char *)&out[i] + cols[k].off, (char *)buf + i * cols[k].width, cols[k].width);
    }
    free(buf);
    return 0;
}
