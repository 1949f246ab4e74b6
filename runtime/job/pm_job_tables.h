/* What the ranks of a job agree on before its file is written: the union
 * of their region tables and sampled objects, and their messages
 * (pm_job_tables.c). Used by pm_job_write.c and pm_job_model.c only. */
#ifndef PM_JOB_TABLES_H
#define PM_JOB_TABLES_H

#include "pm_comm.h"
#include "pm_h5out.h"
#include "pm_h5out_samples.h"

#include <stddef.h>
#include <stdint.h>

/* Rows (parent, depth, kind, name) found by (parent, kind, name); a row's
 * parent is an earlier row. */
struct pm_union {
    int32_t n, cap;
    int32_t *parent, *depth, *kind;
    char **name;
    int32_t *hash;  /* index + 1, 0 empty */
    uint32_t mask;
    int failed;
};

/* Distinct message texts, each with the lowest rank that said it and how
 * many ranks did. */
struct pm_joblog {
    int32_t n, cap;
    char **text;
    int32_t *first_rank, *nranks;
    int32_t dropped;
};

/* What goes up the tree: the regions, the sampled objects (a union too:
 * one row per "build-id TAB path"), the messages. */
struct pm_tables {
    struct pm_union regions, modules;
    struct pm_joblog log;
};

int32_t pm_union_find(struct pm_union *u, int32_t parent, int32_t depth, int32_t kind,
                      char *name, int add);
void pm_union_free(struct pm_union *u);
void pm_joblog_add(struct pm_joblog *l, char *text, int32_t first, int32_t nranks);
void pm_joblog_free(struct pm_joblog *l);
char **pm_joblog_lines(const struct pm_joblog *l, int size, size_t *count);

/* This rank's regions and messages, and its sampled objects, as the
 * starting unions (row k: its region or object k). */
void pm_local_tables(const struct pm_merged *m, int rank, struct pm_union *u,
                     struct pm_joblog *log);
void pm_local_modules(const struct pm_sample_rows *r, struct pm_union *mods);

/* Union every rank's tables into rank 0's (-1 on rank 0 if any rank
 * failed), then rank 0's unions to every rank (ok: rank 0 has them). */
int pm_tree_reduce(const struct pm_comm *c, struct pm_tables *t);
int pm_bcast_union(const struct pm_comm *c, struct pm_tables *t, int ok);

/* Point this rank's thread nodes and sample rows at the union's rows. */
int pm_remap(const struct pm_merged *m, struct pm_union *u, const struct pm_output *o,
             struct pm_sample_rows *samples);
int pm_remap_modules(struct pm_union *mods, struct pm_sample_rows *r);

/* The modules union's rows as /samples/modules descriptions, their strings
 * in *copy (free both). */
struct pm_module_desc *pm_module_descs(const struct pm_union *mods, char **copy);

#endif
