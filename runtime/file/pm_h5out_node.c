/*
 * pm_h5out_node.c — the writer's /node part (docs/hdf5-schema.md): this
 * rank's watched CPUs, other processes and interval rows, at the rows the
 * job writer's Exscan gave it (none when it watched nothing).
 */
#include "pm_h5out_node.h"

#include <stdlib.h>
#include <string.h>

void pm_node_counts(const struct pm_output *o, size_t *cpus, size_t *procs, size_t *rows)
{
    const struct pm_node_data *n = o->node;
    *cpus = n ? (size_t)n->ncpus : 0;
    *procs = n ? (size_t)n->ntop : 0;
    *rows = n ? n->nrows : 0;
}

int pm_h5out_node_rows(struct pm_h5model *m, const struct pm_output *o, const struct pm_slab *slab)
{
    const struct pm_node_data *n = o->node;
    size_t P, Q, V;
    pm_node_counts(o, &P, &Q, &V);
    if (pm_h5model_group(m, PM_S_NODE) != 0)
        return -1;
    int32_t *prank = calloc(P + 1, 4), *pcpu = calloc(P + 1, 4);
    uint64_t *span = calloc(P + 1, 8), *own = calloc(P + 1, 8), *foreign = calloc(P + 1, 8),
             *idle = calloc(P + 1, 8), *lost = calloc(P + 1, 8), *mspan = calloc(P + 1, 8),
             *mown = calloc(P + 1, 8), *mforeign = calloc(P + 1, 8), *midle = calloc(P + 1, 8);
    int32_t *qrank = calloc(Q + 1, 4), *qcpu = calloc(Q + 1, 4);
    int64_t *qpid = calloc(Q + 1, 8);
    char *qcomm = calloc(Q + 1, PM_SCHEMA_STR64);
    uint64_t *qns = calloc(Q + 1, 8);
    int32_t *vrank = calloc(V + 1, 4), *vcpu = calloc(V + 1, 4);
    uint64_t *vtime = calloc(V + 1, 8), *vown = calloc(V + 1, 8), *vforeign = calloc(V + 1, 8),
             *vidle = calloc(V + 1, 8);
    int rc = prank && pcpu && span && own && foreign && idle && lost && mspan && mown &&
                     mforeign && midle && qrank && qcpu && qpid && qcomm && qns && vrank && vcpu &&
                     vtime && vown && vforeign && vidle
                 ? 0
                 : -1;
    for (size_t i = 0; rc == 0 && i < P; i++) {
        const struct pm_node_cpu *c = &n->cpu[i];
        prank[i] = o->rank;
        pcpu[i] = c->cpu;
        span[i] = c->span_ns, own[i] = c->own_ns, foreign[i] = c->foreign_ns;
        idle[i] = c->idle_ns, lost[i] = c->lost;
        mspan[i] = c->mpi_span_ns, mown[i] = c->mpi_own_ns, mforeign[i] = c->mpi_foreign_ns;
        midle[i] = c->mpi_idle_ns;
    }
    for (size_t i = 0; rc == 0 && i < Q; i++) {
        qrank[i] = o->rank;
        qcpu[i] = n->top[i].cpu;
        qpid[i] = n->top[i].pid;
        snprintf(qcomm + i * PM_SCHEMA_STR64, PM_SCHEMA_STR64, "%s", n->top[i].comm);
        qns[i] = n->top[i].ns;
    }
    for (size_t i = 0; rc == 0 && i < V; i++) {
        const struct pm_node_row *r = &n->rows[i];
        vrank[i] = o->rank;
        vcpu[i] = r->cpu;
        vtime[i] = r->time_ns, vown[i] = r->own_ns, vforeign[i] = r->foreign_ns;
        vidle[i] = r->idle_ns;
    }
    if (rc == 0) {
        const uint64_t p0 = slab->sparse_offset[PM_SPARSE_NODE_CPUS],
                      q0 = slab->sparse_offset[PM_SPARSE_NODE_PROCS],
                      v0 = slab->sparse_offset[PM_SPARSE_NODE_ROWS];
        const uint64_t dP[1] = {slab->sparse_total[PM_SPARSE_NODE_CPUS]},
                      dQ[1] = {slab->sparse_total[PM_SPARSE_NODE_PROCS]},
                      dV[1] = {slab->sparse_total[PM_SPARSE_NODE_ROWS]};
        const struct {
            enum pm_schema_id id;
            const void *data;
            int part;  /* 0 P, 1 Q, 2 V */
        } sets[] = {
            {PM_S_NODE_CPU_RANK, prank, 0}, {PM_S_NODE_CPU, pcpu, 0},
            {PM_S_NODE_CPU_SPAN_NS, span, 0}, {PM_S_NODE_CPU_OWN_NS, own, 0},
            {PM_S_NODE_CPU_FOREIGN_NS, foreign, 0}, {PM_S_NODE_CPU_IDLE_NS, idle, 0},
            {PM_S_NODE_CPU_LOST, lost, 0}, {PM_S_NODE_CPU_MPI_SPAN_NS, mspan, 0},
            {PM_S_NODE_CPU_MPI_OWN_NS, mown, 0}, {PM_S_NODE_CPU_MPI_FOREIGN_NS, mforeign, 0},
            {PM_S_NODE_CPU_MPI_IDLE_NS, midle, 0}, {PM_S_NODE_PROCESS_RANK, qrank, 1},
            {PM_S_NODE_PROCESS_CPU, qcpu, 1},
            {PM_S_NODE_PROCESS_PID, qpid, 1}, {PM_S_NODE_PROCESS_NS, qns, 1},
            {PM_S_NODE_SERIES_RANK, vrank, 2}, {PM_S_NODE_SERIES_CPU, vcpu, 2},
            {PM_S_NODE_SERIES_TIME_NS, vtime, 2}, {PM_S_NODE_SERIES_OWN_NS, vown, 2},
            {PM_S_NODE_SERIES_FOREIGN_NS, vforeign, 2}, {PM_S_NODE_SERIES_IDLE_NS, vidle, 2},
        };
        const uint64_t *dims[3] = {dP, dQ, dV}, row0[3] = {p0, q0, v0}, nrows[3] = {P, Q, V};
        for (size_t k = 0; k < sizeof sets / sizeof *sets; k++)
            rc |= pm_h5model_rows(m, sets[k].id, NULL, 0, 0, dims[sets[k].part],
                                  row0[sets[k].part], nrows[sets[k].part], sets[k].data);
        rc |= pm_h5model_rows(m, PM_S_NODE_PROCESS_COMM, NULL, 0, 0, dQ, q0, Q, qcomm);
    }
    free(prank), free(pcpu), free(span), free(own), free(foreign), free(idle), free(lost);
    free(mspan), free(mown), free(mforeign), free(midle);
    free(qrank), free(qcpu), free(qpid), free(qcomm), free(qns);
    free(vrank), free(vcpu), free(vtime), free(vown), free(vforeign), free(vidle);
    return rc ? -1 : 0;
}
