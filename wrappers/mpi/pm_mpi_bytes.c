/* The byte rules of mpi_functions.def: how many bytes one MPI call moved at
 * this rank, or -1 when that cannot be known. Only PMPI_ calls that cannot
 * fail on arguments the real call has just accepted are made here, and only
 * arguments the standard calls significant at this rank are read. */
#include "pm_mpi.h"

#include <limits.h>

static int64_t pm_mul(int64_t a, int64_t b)
{
    if (a < 0 || b < 0 || (a != 0 && b > INT64_MAX / a))
        return -1;
    return a * b;
}

static int64_t pm_add(int64_t a, int64_t b)
{
    if (a < 0 || b < 0 || b > INT64_MAX - a)
        return -1;
    return a + b;
}

static MPI_Datatype pm_type(pm_dtype t) { return t.f ? PMPI_Type_f2c(*t.f) : t.c; }

/* `count` elements of type t, in bytes. */
static int64_t pm_elems(int64_t count, pm_dtype t)
{
    if (count <= 0)
        return count == 0 ? 0 : -1;
    MPI_Datatype dt = pm_type(t);
    MPI_Count size;
    if (dt == MPI_DATATYPE_NULL || PMPI_Type_size_x(dt, &size) != MPI_SUCCESS ||
        size == MPI_UNDEFINED)
        return -1;
    return pm_mul(count, (int64_t)size);
}

/* counts[0..n-1] summed; -1 if one is negative. */
static int64_t pm_sum(pm_counts c, int n)
{
    int64_t s = 0;
    for (int i = 0; i < n; i++) {
        int64_t v = c.f ? (int64_t)c.f[i] : (int64_t)c.c[i];
        if (v < 0)
            return -1;
        s += v;  /* at most 2^31 values below 2^63: no overflow */
    }
    return s;
}

static int64_t pm_at(pm_counts c, int i) { return c.f ? (int64_t)c.f[i] : (int64_t)c.c[i]; }

/* The data a rank puts in: its send arguments, or with MPI_IN_PLACE the
 * receive arguments standing for them. */
static int64_t pm_block(int in_place, int64_t sc, pm_dtype st, int64_t rcount, pm_dtype rt)
{
    if (in_place < 0)
        return -1;
    return in_place ? pm_elems(rcount, rt) : pm_elems(sc, st);
}

/* 0 and this rank's rank and the group size for a successful collective on
 * an intra-communicator; -1 otherwise (inter-communicators: unknown). */
static int pm_intra(int rc, MPI_Comm comm, int *rank, int *size)
{
    int inter = 1;
    if (rc != MPI_SUCCESS || PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter ||
        PMPI_Comm_rank(comm, rank) != MPI_SUCCESS || PMPI_Comm_size(comm, size) != MPI_SUCCESS)
        return -1;
    return 0;
}

/* ---- point to point, one-sided, I/O ------------------------------------------ */

int64_t pm_bytes_p2p(int rc, int peer, int count, pm_dtype t)
{
    if (rc != MPI_SUCCESS)
        return -1;
    return peer == MPI_PROC_NULL ? 0 : pm_elems(count, t);
}

int64_t pm_bytes_received(int rc, const MPI_Status *status, pm_dtype t)
{
    if (rc != MPI_SUCCESS || status == MPI_STATUS_IGNORE)
        return -1;
    MPI_Datatype dt = pm_type(t);
    int n;
    if (dt == MPI_DATATYPE_NULL || PMPI_Get_count(status, dt, &n) != MPI_SUCCESS ||
        n == MPI_UNDEFINED)
        return -1;
    return pm_elems(n, t);
}

int64_t pm_bytes_count(int rc, int count, pm_dtype t)
{
    return rc == MPI_SUCCESS ? pm_elems(count, t) : -1;
}

int64_t pm_bytes_sendrecv(int rc, int dest, int sendcount, pm_dtype st,
                          const MPI_Status *status, pm_dtype rt)
{
    return pm_add(pm_bytes_p2p(rc, dest, sendcount, st), pm_bytes_received(rc, status, rt));
}

/* ---- collectives ---------------------------------------------------------------- */

int64_t pm_bytes_coll(int rc, MPI_Comm comm, int count, pm_dtype t)
{
    int rank, n;
    return pm_intra(rc, comm, &rank, &n) ? -1 : pm_elems(count, t);
}

int64_t pm_bytes_alltoall(int rc, MPI_Comm comm, int in_place, int sc, pm_dtype st, int rcount,
                          pm_dtype rt)
{
    int rank, n;
    if (pm_intra(rc, comm, &rank, &n))
        return -1;
    return pm_mul(n, pm_block(in_place, sc, st, rcount, rt));
}

int64_t pm_bytes_alltoallv(int rc, MPI_Comm comm, int in_place, pm_counts scs, pm_dtype st,
                           pm_counts rcs, pm_dtype rt)
{
    int rank, n;
    if (pm_intra(rc, comm, &rank, &n) || in_place < 0)
        return -1;
    return in_place ? pm_elems(pm_sum(rcs, n), rt) : pm_elems(pm_sum(scs, n), st);
}

int64_t pm_bytes_allgather(int rc, MPI_Comm comm, int in_place, int sc, pm_dtype st, int rcount,
                           pm_dtype rt)
{
    int rank, n;
    return pm_intra(rc, comm, &rank, &n) ? -1 : pm_block(in_place, sc, st, rcount, rt);
}

int64_t pm_bytes_allgatherv(int rc, MPI_Comm comm, int in_place, int sc, pm_dtype st,
                            pm_counts rcs, pm_dtype rt)
{
    int rank, n;
    if (pm_intra(rc, comm, &rank, &n) || in_place < 0)
        return -1;
    return in_place ? pm_elems(pm_at(rcs, rank), rt) : pm_elems(sc, st);
}

int64_t pm_bytes_gather(int rc, MPI_Comm comm, int root, int in_place, int sc, pm_dtype st,
                        int rcount, pm_dtype rt)
{
    int rank, n;
    if (pm_intra(rc, comm, &rank, &n))
        return -1;
    return pm_block(rank == root ? in_place : 0, sc, st, rcount, rt);
}

int64_t pm_bytes_gatherv(int rc, MPI_Comm comm, int root, int in_place, int sc, pm_dtype st,
                         pm_counts rcs, pm_dtype rt)
{
    int rank, n;
    if (pm_intra(rc, comm, &rank, &n) || (rank == root && in_place < 0))
        return -1;
    return rank == root && in_place ? pm_elems(pm_at(rcs, root), rt) : pm_elems(sc, st);
}

int64_t pm_bytes_scatter(int rc, MPI_Comm comm, int root, int sc, pm_dtype st, int rcount,
                         pm_dtype rt)
{
    int rank, n;
    if (pm_intra(rc, comm, &rank, &n))
        return -1;
    return rank == root ? pm_mul(n, pm_elems(sc, st)) : pm_elems(rcount, rt);
}

int64_t pm_bytes_scatterv(int rc, MPI_Comm comm, int root, pm_counts scs, pm_dtype st,
                          int rcount, pm_dtype rt)
{
    int rank, n;
    if (pm_intra(rc, comm, &rank, &n))
        return -1;
    return rank == root ? pm_elems(pm_sum(scs, n), st) : pm_elems(rcount, rt);
}

int64_t pm_bytes_reduce_scatter(int rc, MPI_Comm comm, pm_counts rcs, pm_dtype t)
{
    int rank, n;
    return pm_intra(rc, comm, &rank, &n) ? -1 : pm_elems(pm_sum(rcs, n), t);
}

int64_t pm_bytes_reduce_scatter_block(int rc, MPI_Comm comm, int rcount, pm_dtype t)
{
    int rank, n;
    return pm_intra(rc, comm, &rank, &n) ? -1 : pm_elems(pm_mul(n, rcount), t);
}
