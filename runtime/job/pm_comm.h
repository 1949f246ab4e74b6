/* pm_comm — the job's ranks as the job writer sees them: a handful of
 * collective operations on bytes and unsigned 64-bit numbers.
 *
 * The runtime is built without MPI (no mpi.h, no libmpi in libperfmark.so's
 * NEEDED list), so that one install serves programs on Open MPI, on the
 * MPICH family and on no MPI at all. The MPI wrapper library of the
 * program's MPI (wrappers/mpi/pm_mpi_comm.c, built once per MPI ABI) fills
 * this table with PMPI calls on a private duplicate of MPI_COMM_WORLD and
 * hands it over in the MPI_Finalize wrapper (pm_auto_mpi_finalize).
 *
 * The job writer opens it first (a collective: the private communicator is
 * made then, once the measurement has stopped) and closes it last. Every
 * operation is collective over all ranks unless it says otherwise,
 * returns 0 on success and -1 on failure, and moves at most INT_MAX bytes
 * in one call (MPI counts are ints): callers check sizes first. */
#ifndef PM_COMM_H
#define PM_COMM_H

#include <stddef.h>
#include <stdint.h>

enum pm_comm_op { PM_COMM_MIN, PM_COMM_SUM };

struct pm_comm {
    /* 0 when the ranks can talk (rank and size set), -1 when they cannot. */
    int (*open)(struct pm_comm *c);
    void (*close)(struct pm_comm *c);
    int rank, size;
    /* The MPI ABI this table speaks ("openmpi", "mpich"), and its
     * communicator as that ABI's MPI_Comm: only a library built for the
     * same ABI may use it (the parallel HDF5 writer, pm_writer.h). */
    const char *abi;
    const void *mpi_comm;
    int (*allreduce)(const struct pm_comm *c, const uint64_t *in, uint64_t *out, int n,
                     enum pm_comm_op op);
    /* Σ of `in` over the ranks below this one; zeros on rank 0. */
    int (*exscan_sum)(const struct pm_comm *c, const uint64_t *in, uint64_t *out, int n);
    /* `len` bytes of rank 0's `buf` into every rank's. */
    int (*bcast)(const struct pm_comm *c, void *buf, size_t len);
    /* Every rank's one number into rank 0's all[size] (all: rank 0 only). */
    int (*gather_u64)(const struct pm_comm *c, uint64_t mine, uint64_t *all);
    /* Every rank's bytes into rank 0's `all`, rank r's at the sum of lens[0..r-1]
     * (all and lens: rank 0 only). */
    int (*gather_bytes)(const struct pm_comm *c, const void *mine, size_t len, void *all,
                        const size_t *lens);
    /* Point to point (not collective): `len` bytes with a tag. */
    int (*send)(const struct pm_comm *c, int to, int tag, const void *buf, size_t len);
    int (*recv)(const struct pm_comm *c, int from, int tag, void *buf, size_t len);
    int (*barrier)(const struct pm_comm *c);
    void *impl;  /* the wrapper library's own state (its communicator) */
};

/* Did every rank say ok? (0 too when the reduction itself fails.) */
static inline int pm_comm_all_ok(const struct pm_comm *c, int ok)
{
    uint64_t mine = ok ? 1 : 0, all = 0;
    return c->allreduce(c, &mine, &all, 1, PM_COMM_MIN) == 0 && all == 1;
}

#endif
