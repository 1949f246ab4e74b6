/*
 * read_internal.h — what the read layer's files share (read_hdf5.c,
 * read_table.c, read_file.c, read_block.c). Not for the model or renderers:
 * they see h5read.h only.
 */
#ifndef PM_READ_INTERNAL_H
#define PM_READ_INTERNAL_H

#include "h5read.h"
#include "pm_schema_h5.h"
#include "read_guard.h"

#include <hdf5.h>
#ifdef H5_HAVE_PARALLEL
#include <mpi.h>
#endif

#include <stddef.h>

#define PM_ANY ((hsize_t)-1) /* shape entry taken from the file */
#define PM_TABLE_BLOCK 4096  /* rows of a compound table read at once */

/* One load in progress: the file, and the first error met. */
struct pm_rd {
    const char *path;
    char *err;
    size_t errlen;
    int failed;
    hid_t file;
    hid_t root;
    int mpio; /* open through the MPI-IO driver (pm_file_open under mpirun) */
};

/* ---- read_hdf5.c: errors, types, attributes, numeric datasets */
struct pm_reason {
    char text[200];
};
void pm_rd_oneline(char *s);
int pm_rd_fail(struct pm_rd *rd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int pm_rd_oom(struct pm_rd *rd);
const char *pm_rd_hdf5_reason(struct pm_reason *r);
H5T_cset_t pm_rd_cset(hid_t filetype);
hid_t pm_rd_vlen_str_type(H5T_cset_t cset);
hid_t pm_rd_fixed_str_type(size_t filesize, H5T_cset_t cset);
int pm_rd_mul(size_t a, size_t b, size_t *out);
int pm_rd_link_exists(struct pm_rd *rd, const char *name);
int pm_rd_open(struct pm_rd *rd);
int pm_rd_attr_open(struct pm_rd *rd, const char *name, hid_t *attr);
int pm_rd_attr_single(hid_t attr);
int pm_rd_attr_read_int(hid_t attr, hid_t memtype, void *out);
int pm_rd_attr_int(struct pm_rd *rd, const char *name, hid_t memtype, void *out);
int pm_rd_attr_str(struct pm_rd *rd, const char *name, char **out);
int pm_rd_check_shape(struct pm_rd *rd, const char *name, const char *shape, hid_t space,
                      int ndims, hsize_t *dims);
int pm_rd_read_dataset(struct pm_rd *rd, enum pm_schema_id id, hsize_t *dims, void **out);
/* Rows [i0, i0 + n) of the row dataset `id` (1 or 2 dimensions, `cols`
 * columns) into dst as `type`. 0, or -1 with the message in rd. */
int pm_rd_read_rows(struct pm_rd *rd, enum pm_schema_id id, hid_t type, size_t i0, size_t n,
                    size_t cols, void *dst);

/* ---- read_table.c: /events, /regions, /threads, string arrays */
/* A compound member the reader wants: its name, type and whether a file
 * may lack it from the schema row, its place in the reader's struct. */
struct pm_field {
    enum pm_schema_id id;
    size_t off;
};
#define PM_NFIELDS(a) (sizeof(a) / sizeof((a)[0]))
/* A whole 1-D compound table into a new array (0 rows when the file lacks
 * a DEFAULT table); strings our own (pm_rd_table_free). */
int pm_rd_read_table_opt(struct pm_rd *rd, enum pm_schema_id id, const struct pm_field *f,
                         size_t nf, size_t elsize, void **out, size_t *count);
void pm_rd_table_free(void *tab, size_t n, const struct pm_field *f, size_t nf, size_t elsize);
/* Rows [i0, i0 + cnt) of a compound table into `out` (no string fields). */
int pm_rd_table_block(struct pm_rd *rd, enum pm_schema_id id, const struct pm_field *f,
                      size_t nf, size_t elsize, size_t i0, size_t cnt, void *out);
int pm_rd_load_tables(struct pm_rd *rd, struct pm_file *d, int stream);
int pm_rd_thread_block(struct pm_rd *rd, struct pm_thread_rows *b, size_t t0, size_t nt);
int pm_rd_read_strings(struct pm_rd *rd, enum pm_schema_id id, char ***out, size_t *count);
void pm_rd_free_tables(struct pm_file *d);

/* ---- read_block.c: cells and totals a block of thread rows at a time */
enum { PM_NCELLS = 12, PM_CELL_TIMED = 10 };                 /* pm_cell_sets */
enum { PM_NTOTALS = 7, PM_TOTAL_FLAGS = 4, PM_TOTAL_COST = 6 }; /* pm_total_sets */

/* An open file read a block at a time (pm_file_open). */
struct pm_file_stream {
    hid_t file;
    hid_t dset[PM_NCELLS]; /* -1: an optional dataset the file lacks (reads as 0) */
    hid_t tot[PM_NTOTALS]; /* the same for the /thread totals */
    char *path;
};

int pm_rd_open_cells(struct pm_rd *rd, struct pm_file *d);
int pm_rd_open_totals(struct pm_rd *rd, struct pm_file *d);
size_t pm_rd_chunk_rows(hid_t file);
void pm_rd_close_stream(struct pm_file *d);
/* Files since the throttle hold /region/reads, timer_visits, ... */
int pm_rd_has_visit_data(struct pm_rd *rd);

/* ---- read_samples.c: /samples and the sample cells */
int pm_rd_load_samples(struct pm_rd *rd, struct pm_file *d, int stream);
void pm_rd_free_samples(struct pm_file *d);

/* ---- read_series.c: /series */
int pm_rd_load_series(struct pm_rd *rd, struct pm_file *d);

/* ---- read_summary.c: /summary */
int pm_rd_load_summary(struct pm_rd *rd, struct pm_file *d);
void pm_rd_free_summary(struct pm_file *d);

/* ---- read_node.c: /node */
int pm_rd_load_node(struct pm_rd *rd, struct pm_file *d);
void pm_rd_free_node(struct pm_file *d);

#endif
