/* Part of mpi_calls: every wrapped function mpi_calls.c does not call, so
 * that each row of wrappers/mpi_functions.def is checked exactly.
 * check_mpi.py (expect_more) holds the expected numbers.
 *
 * Rank r of n, next = (r+1)%n, prev = (r-1+n)%n, all from/to these:
 *   p2p_modes   Bsend 3 ints (Recv); Irecvs posted, Barrier, then Ssend 2 ints,
 *               Rsend 4 ints, Ibsend/Issend/Irsend 1 int each, one Waitall;
 *               Send 5 ints, Probe + Iprobe (flag already true) + Improbe
 *               (matches it) + Mrecv (not wrapped);
 *               Sendrecv_replace of 3 ints. Receives with status
 *   completion  2 Isend + 2 Irecv of 1 int; Test, Testall, Testany,
 *               Testsome, Request_get_status once each, then Waitany,
 *               Waitsome, Wait, Waitall
 *               once each (each finishes what is left; visits stay exact)
 *   coll_more   Alltoall 2 ints per rank; Allgatherv, Gatherv (root 0, in
 *               place at the root), Scatterv (root 0) with rank j's block
 *               j+1 ints; Reduce_scatter (rank j gets j+1 ints),
 *               Reduce_scatter_block (2 ints), Scan and Exscan (3 ints); then
 *               (icoll) every nonblocking collective once, one Waitall
 *   rma         fence, Put 4 ints to next, fence, Get 4 ints from prev and
 *               Accumulate 2 ints to next, fence; Win_lock, Put 1 int, Win_unlock
 *   io_more     own file (MPI_COMM_SELF): write 8 ints, read them, write_all,
 *               read_all; shared file: write_at_all, read_at_all, and a
 *               read_at past the end (0 bytes read)
 */
#include "mpi_calls.h"

#include <mpi.h>
#include <perfmark.h>
#include <stdio.h>
#include <stdlib.h>

#define NEXT ((rank + 1) % size)
#define PREV ((rank - 1 + size) % size)

void more_p2p(int rank, int size)
{
    int next = NEXT, prev = PREV, in[32] = {0}, out[8] = {rank, rank, rank, rank, rank, rank};
    int flag = 0, bsize = 1024 + 4 * MPI_BSEND_OVERHEAD;
    char *buffer = malloc((size_t)bsize);
    MPI_Status st;
    MPI_Request req[8];
    MPI_Buffer_attach(buffer, bsize);
    perfmark_region_begin("p2p_modes");
    MPI_Bsend(out, 3, MPI_INT, next, 10, MPI_COMM_WORLD);
    MPI_Recv(in, 16, MPI_INT, prev, 10, MPI_COMM_WORLD, &st);
    MPI_Irecv(in + 16, 2, MPI_INT, prev, 11, MPI_COMM_WORLD, &req[0]);
    MPI_Irecv(in + 18, 4, MPI_INT, prev, 12, MPI_COMM_WORLD, &req[1]);
    MPI_Irecv(in + 22, 1, MPI_INT, prev, 13, MPI_COMM_WORLD, &req[2]);
    MPI_Irecv(in + 23, 1, MPI_INT, prev, 14, MPI_COMM_WORLD, &req[3]);
    MPI_Irecv(in + 24, 1, MPI_INT, prev, 15, MPI_COMM_WORLD, &req[4]);
    MPI_Barrier(MPI_COMM_WORLD);  /* every receive is posted: ready sends may go */
    MPI_Ssend(out, 2, MPI_INT, next, 11, MPI_COMM_WORLD);
    MPI_Rsend(out, 4, MPI_INT, next, 12, MPI_COMM_WORLD);
    MPI_Ibsend(out, 1, MPI_INT, next, 13, MPI_COMM_WORLD, &req[5]);
    MPI_Issend(out, 1, MPI_INT, next, 14, MPI_COMM_WORLD, &req[6]);
    MPI_Irsend(out, 1, MPI_INT, next, 15, MPI_COMM_WORLD, &req[7]);
    MPI_Waitall(8, req, MPI_STATUSES_IGNORE);
    MPI_Send(out, 5, MPI_INT, next, 16, MPI_COMM_WORLD);
    MPI_Probe(prev, 16, MPI_COMM_WORLD, &st);
    MPI_Iprobe(prev, 16, MPI_COMM_WORLD, &flag, &st);
    int matched = 0;
    MPI_Message msg;
    MPI_Improbe(prev, 16, MPI_COMM_WORLD, &matched, &msg, &st);
    MPI_Mrecv(in + 25, 7, MPI_INT, &msg, &st);
    int three[3] = {rank, rank, rank};
    MPI_Sendrecv_replace(three, 3, MPI_INT, next, 17, prev, 17, MPI_COMM_WORLD, &st);
    perfmark_region_end("p2p_modes");
    MPI_Buffer_detach(&buffer, &bsize);
    free(buffer);
    expect(flag && matched && in[21] == prev && in[29] == prev && three[2] == prev, rank,
           "p2p modes");
}

void completion(int rank, int size)
{
    int next = NEXT, prev = PREV, in[2] = {-1, -1}, out[2] = {rank, rank};
    int flag, index, outcount, indices[2];
    MPI_Request r[2], s[2];
    MPI_Status st, sts[2];
    perfmark_region_begin("completion");
    MPI_Irecv(&in[0], 1, MPI_INT, prev, 20, MPI_COMM_WORLD, &r[0]);
    MPI_Irecv(&in[1], 1, MPI_INT, prev, 21, MPI_COMM_WORLD, &r[1]);
    MPI_Isend(&out[0], 1, MPI_INT, next, 20, MPI_COMM_WORLD, &s[0]);
    MPI_Isend(&out[1], 1, MPI_INT, next, 21, MPI_COMM_WORLD, &s[1]);
    MPI_Test(&s[0], &flag, &st);
    MPI_Testall(1, &s[1], &flag, sts);
    MPI_Testany(2, r, &index, &flag, &st);
    MPI_Testsome(2, r, &outcount, indices, sts);
    MPI_Request_get_status(r[0], &flag, &st);
    MPI_Waitany(2, r, &index, &st);       /* one left, or none: returns */
    MPI_Waitsome(2, r, &outcount, indices, sts);
    MPI_Wait(&s[0], &st);
    MPI_Waitall(1, &s[1], sts);
    perfmark_region_end("completion");
    expect(in[0] == prev && in[1] == prev, rank, "completion");
}

/* Counts j+1 for rank j, their displacements, and their sum. */
static int blocks(int size, int *counts, int *displs)
{
    int total = 0;
    for (int j = 0; j < size; j++)
        counts[j] = j + 1, displs[j] = total, total += j + 1;
    return total;
}

void more_collectives(int rank, int size)
{
    size_t big = 2 * (size_t)(size + 2) * (size_t)(size + 2);  /* room for any one of them */
    int *counts = malloc(sizeof(int) * 4 * (size_t)size), *displs = counts + size;
    int *mine = counts + 2 * size, *mine_displs = counts + 3 * size;  /* r+1 from each */
    int total = blocks(size, counts, displs);
    for (int j = 0; j < size; j++)
        mine[j] = rank + 1, mine_displs[j] = j * (rank + 1);
    int *out = malloc(sizeof(int) * big), *in = malloc(sizeof(int) * big);
    int *in2 = malloc(sizeof(int) * big), *in3 = malloc(sizeof(int) * big);
    for (size_t i = 0; i < big; i++)
        out[i] = rank, in[i] = in2[i] = in3[i] = -1;
    int three[3] = {1, 1, 1}, scan[3], exscan[3] = {0, 0, 0};
    long six[6] = {6, 6, 6, 6, 6, 6};
    double d2[2] = {1, 1}, d2_sum[2];
    MPI_Request req[14];
    int k = 0;
    if (rank == 0)  /* Gatherv in place: the root's block is already there */
        in[0] = 0;

    perfmark_region_begin("coll_more");
    MPI_Alltoall(out, 2, MPI_INT, in2, 2, MPI_INT, MPI_COMM_WORLD);
    MPI_Allgatherv(out, rank + 1, MPI_INT, in3, counts, displs, MPI_INT, MPI_COMM_WORLD);
    MPI_Gatherv(rank == 0 ? MPI_IN_PLACE : out, rank + 1, MPI_INT, in, counts, displs, MPI_INT,
                0, MPI_COMM_WORLD);
    MPI_Scatterv(out, counts, displs, MPI_INT, in2, rank + 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Reduce_scatter(out, in2, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Reduce_scatter_block(out, in2, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Scan(three, scan, 3, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Exscan(three, exscan, 3, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    perfmark_region_end("coll_more");
    expect(in3[total - 1] == size - 1 && (rank || in[total - 1] == size - 1), rank, "gathers");
    expect(scan[0] == rank + 1 && (rank == 0 || exscan[0] == rank), rank, "scans");

    /* Separate buffers for each pending operation. */
    int *nb = malloc(sizeof(int) * 12 * big);
    for (size_t i = 0; i < 12 * big; i++)
        nb[i] = rank;
    int *o = nb, *p = nb + 6 * big;
#define SLOT(i) (p + (size_t)(i) * big)
    perfmark_region_begin("icoll");
    MPI_Ibarrier(MPI_COMM_WORLD, &req[k++]);
    MPI_Ibcast(six, 6, MPI_LONG, 0, MPI_COMM_WORLD, &req[k++]);
    MPI_Ireduce(d2, d2_sum, 2, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD, &req[k++]);
    MPI_Ialltoall(o, 2, MPI_INT, SLOT(0), 2, MPI_INT, MPI_COMM_WORLD, &req[k++]);
    MPI_Ialltoallv(o, counts, displs, MPI_INT, SLOT(1), mine, mine_displs, MPI_INT,
                   MPI_COMM_WORLD, &req[k++]);
    MPI_Iallgather(o, 2, MPI_INT, SLOT(2), 2, MPI_INT, MPI_COMM_WORLD, &req[k++]);
    MPI_Iallgatherv(o, rank + 1, MPI_INT, SLOT(3), counts, displs, MPI_INT, MPI_COMM_WORLD,
                    &req[k++]);
    MPI_Igather(o, 2, MPI_INT, SLOT(4), 2, MPI_INT, 0, MPI_COMM_WORLD, &req[k++]);
    MPI_Igatherv(o, rank + 1, MPI_INT, SLOT(5), counts, displs, MPI_INT, 0, MPI_COMM_WORLD,
                 &req[k++]);
    MPI_Iscatter(o, 3, MPI_INT, o + big, 3, MPI_INT, 0, MPI_COMM_WORLD, &req[k++]);
    MPI_Iscatterv(o, counts, displs, MPI_INT, o + 2 * big, rank + 1, MPI_INT, 0,
                  MPI_COMM_WORLD, &req[k++]);
    MPI_Ireduce_scatter(o, o + 3 * big, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req[k++]);
    MPI_Iscan(three, o + 4 * big, 3, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req[k++]);
    MPI_Waitall(k, req, MPI_STATUSES_IGNORE);
    perfmark_region_end("icoll");
#undef SLOT
    expect(six[0] == 6 && o[4 * big] == rank + 1, rank, "nonblocking collectives");
    free(nb);
    free(counts);
    free(out);
    free(in);
    free(in2);
    free(in3);
}

void one_sided(int rank, int size)
{
    int next = NEXT, prev = PREV, *mem, four[4] = {rank, rank, rank, rank};
    int got[4] = {-1, -1, -1, -1}, two[2] = {1, 1};
    MPI_Win win;
    /* Win_allocate: Open MPI 4.1 has no one-sided component for Win_create
     * in a single process. */
    MPI_Win_allocate(8 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    for (int i = 0; i < 8; i++)
        mem[i] = 0;
    perfmark_region_begin("rma");
    MPI_Win_fence(0, win);
    MPI_Put(four, 4, MPI_INT, next, 0, 4, MPI_INT, win);
    MPI_Win_fence(0, win);
    MPI_Get(got, 4, MPI_INT, prev, 0, 4, MPI_INT, win);
    MPI_Accumulate(two, 2, MPI_INT, next, 4, 2, MPI_INT, MPI_SUM, win);
    MPI_Win_fence(0, win);
    MPI_Win_lock(MPI_LOCK_SHARED, next, 0, win);
    MPI_Put(four, 1, MPI_INT, next, 7, 1, MPI_INT, win);
    MPI_Win_unlock(next, win);
    perfmark_region_end("rma");
    /* got: what prev received by Put, from prev's prev */
    expect(mem[0] == prev && mem[4] == 1 && got[0] == (prev - 1 + size) % size, rank, "rma");
    MPI_Win_free(&win);
}

void more_io(int rank)
{
    char name[64];
    snprintf(name, sizeof name, "mpi_calls_more.%d.io", rank);
    int out[8], in[8] = {0}, tail[8];
    for (int i = 0; i < 8; i++)
        out[i] = rank + i;
    MPI_File own, shared;
    MPI_Status st;
    perfmark_region_begin("io_more");
    MPI_File_open(MPI_COMM_SELF, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &own);
    MPI_File_write(own, out, 8, MPI_INT, &st);
    MPI_File_seek(own, 0, MPI_SEEK_SET);
    MPI_File_read(own, in, 8, MPI_INT, &st);
    MPI_File_write_all(own, out, 8, MPI_INT, &st);
    MPI_File_seek(own, 32, MPI_SEEK_SET);
    MPI_File_read_all(own, in, 8, MPI_INT, &st);
    MPI_File_close(&own);
    MPI_File_open(MPI_COMM_WORLD, "mpi_calls_more.io", MPI_MODE_CREATE | MPI_MODE_RDWR,
                  MPI_INFO_NULL, &shared);
    MPI_File_write_at_all(shared, (MPI_Offset)rank * 32, out, 8, MPI_INT, &st);
    MPI_File_read_at_all(shared, (MPI_Offset)rank * 32, in, 8, MPI_INT, &st);
    MPI_File_read_at(shared, (MPI_Offset)1 << 30, tail, 8, MPI_INT, &st);  /* past the end */
    MPI_File_close(&shared);
    perfmark_region_end("io_more");
    expect(in[7] == rank + 7, rank, "file data (more)");
}
