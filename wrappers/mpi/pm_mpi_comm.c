/* The job's ranks for the runtime's job writer (runtime/job/pm_comm.h):
 * PMPI calls on a private duplicate of MPI_COMM_WORLD, so that perfmark's
 * own traffic is never counted as the application's. Built once per MPI
 * ABI, like every file of this folder. */
#include "pm_mpi.h"

#include <limits.h>
#include <stdlib.h>

#define PM_COMM_OF(c) (*(const MPI_Comm *)(c)->mpi_comm)

static int pm_c_ok(int rc) { return rc == MPI_SUCCESS ? 0 : -1; }

/* MIN of unsigned words as a MIN of signed ones with the top bit flipped
 * (the same order): MPICH 4.0 compares MPI_UINT64_T signed under MPI_MIN
 * (0 and UINT64_MAX give UINT64_MAX), MPI_INT64_T means the same on every
 * MPI. SUM is the same bits either way. */
static int pm_c_allreduce(const struct pm_comm *c, const uint64_t *in, uint64_t *out, int n,
                          enum pm_comm_op op)
{
    if (op != PM_COMM_MIN)
        return pm_c_ok(PMPI_Allreduce(in, out, n, MPI_UINT64_T, MPI_SUM, PM_COMM_OF(c)));
    const uint64_t top = (uint64_t)1 << 63;
    for (int i = 0; i < n; i++)
        out[i] = in[i] ^ top;
    int rc = pm_c_ok(PMPI_Allreduce(MPI_IN_PLACE, out, n, MPI_INT64_T, MPI_MIN, PM_COMM_OF(c)));
    for (int i = 0; i < n; i++)
        out[i] ^= top;
    return rc;
}

static int pm_c_exscan_sum(const struct pm_comm *c, const uint64_t *in, uint64_t *out, int n)
{
    int rc = pm_c_ok(PMPI_Exscan(in, out, n, MPI_UINT64_T, MPI_SUM, PM_COMM_OF(c)));
    for (int i = 0; c->rank == 0 && i < n; i++)
        out[i] = 0;  /* MPI leaves rank 0's result undefined */
    return rc;
}

static int pm_c_bcast(const struct pm_comm *c, void *buf, size_t len)
{
    if (len > INT_MAX)
        return -1;
    return pm_c_ok(PMPI_Bcast(buf, (int)len, MPI_BYTE, 0, PM_COMM_OF(c)));
}

static int pm_c_gather_u64(const struct pm_comm *c, uint64_t mine, uint64_t *all)
{
    return pm_c_ok(PMPI_Gather(&mine, 1, MPI_UINT64_T, all, 1, MPI_UINT64_T, 0, PM_COMM_OF(c)));
}

static int pm_c_gather_bytes(const struct pm_comm *c, const void *mine, size_t len, void *all,
                             const size_t *lens)
{
    int *counts = NULL, *displs = NULL, ok = len <= INT_MAX;
    if (c->rank == 0) {
        counts = calloc((size_t)c->size, sizeof *counts);
        displs = calloc((size_t)c->size, sizeof *displs);
        size_t at = 0;
        for (int r = 0; counts && displs && r < c->size; at += lens[r], r++) {
            counts[r] = (int)lens[r];
            displs[r] = (int)at;
        }
        ok = ok && counts && displs && at <= INT_MAX;
    }
    /* Every rank takes part in the gather, or none does. */
    int all_ok = 0, rc = -1;
    if (PMPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, PM_COMM_OF(c)) == MPI_SUCCESS && all_ok)
        rc = pm_c_ok(PMPI_Gatherv(mine, (int)len, MPI_BYTE, all, counts, displs, MPI_BYTE, 0,
                                  PM_COMM_OF(c)));
    free(counts);
    free(displs);
    return rc;
}

static int pm_c_send(const struct pm_comm *c, int to, int tag, const void *buf, size_t len)
{
    if (len > INT_MAX)
        return -1;
    return pm_c_ok(PMPI_Send(buf, (int)len, MPI_BYTE, to, tag, PM_COMM_OF(c)));
}

static int pm_c_recv(const struct pm_comm *c, int from, int tag, void *buf, size_t len)
{
    if (len > INT_MAX)
        return -1;
    return pm_c_ok(PMPI_Recv(buf, (int)len, MPI_BYTE, from, tag, PM_COMM_OF(c),
                             MPI_STATUS_IGNORE));
}

static int pm_c_barrier(const struct pm_comm *c) { return pm_c_ok(PMPI_Barrier(PM_COMM_OF(c))); }

/* The private communicator is made when the job writer starts, after the
 * measurement stopped: a rank that waits there for a rank that died is not
 * measuring any more, whatever ends it. */
static int pm_c_open(struct pm_comm *c)
{
    MPI_Comm *mine = c->impl;
    int initialized = 0, finalized = 0;
    if (PMPI_Initialized(&initialized) != MPI_SUCCESS || !initialized ||
        PMPI_Finalized(&finalized) != MPI_SUCCESS || finalized ||
        PMPI_Comm_dup(MPI_COMM_WORLD, mine) != MPI_SUCCESS)
        return -1;
    /* Errors come back as -1 (every caller agrees on them): with MPI's
     * default, errors are fatal, and a receive a rank short of memory posts
     * empty (to take a message it cannot keep) would abort the job. */
    if (PMPI_Comm_set_errhandler(*mine, MPI_ERRORS_RETURN) != MPI_SUCCESS ||
        PMPI_Comm_rank(*mine, &c->rank) != MPI_SUCCESS ||
        PMPI_Comm_size(*mine, &c->size) != MPI_SUCCESS) {
        PMPI_Comm_free(mine);
        return -1;
    }
    c->mpi_comm = mine;
    return 0;
}

static void pm_c_close(struct pm_comm *c) { PMPI_Comm_free((MPI_Comm *)c->impl); }

void pm_mpi_comm_init(struct pm_comm *c, MPI_Comm *storage)
{
    *c = (struct pm_comm){
        .open = pm_c_open, .close = pm_c_close, .rank = 0, .size = 1, .abi = PM_MPI_ABI,
        .allreduce = pm_c_allreduce, .exscan_sum = pm_c_exscan_sum, .bcast = pm_c_bcast,
        .gather_u64 = pm_c_gather_u64, .gather_bytes = pm_c_gather_bytes, .send = pm_c_send,
        .recv = pm_c_recv, .barrier = pm_c_barrier, .impl = storage,
    };
}
