/* pm_h5out_node — the file's /node (docs/hdf5-schema.md): the watched CPUs'
 * times, the other processes that ran there, the CPUs' interval rows;
 * written by the one process per node that watched (pm_node.h), placed
 * like the other sparse rows. */
#ifndef PM_H5OUT_NODE_H
#define PM_H5OUT_NODE_H

#include "pm_h5out.h"

/* This process's rows: watched CPUs, other processes, interval rows. */
void pm_node_counts(const struct pm_output *o, size_t *cpus, size_t *procs, size_t *rows);
int pm_h5out_node_rows(struct pm_h5model *m, const struct pm_output *o, const struct pm_slab *slab);

#endif
