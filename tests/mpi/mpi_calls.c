/* MPI calls whose number and bytes are known by construction, each group in
 * a user region so the wrappers' regions nest under it. check_mpi.py holds
 * the expected numbers (expect_c); keep the two in step.
 *
 * Rank r of n, next = (r+1)%n, prev = (r-1+n)%n:
 *   p2p          r+1 Sends of 10(r+1) doubles to next; Recvs with status
 *                (capacity 1000) of what prev sent
 *   ignore       one Send of 5 ints, its Recv with MPI_STATUS_IGNORE
 *   derived      one Send of 4 "triples" (contiguous 3 doubles), Recv with status
 *   sendrecv     one Sendrecv: 3 ints to next, from prev (capacity 10)
 *   nonblocking  Irecv + Isend of 7 floats, Waitall; Iallreduce of 2 ints, Wait
 *   coll         3 Allreduce of 4 ints, Bcast of 6 longs, Alltoallv (r+j+1 ints
 *                to rank j), Gather of 2 ints, Scatter of 3 ints, Reduce of 2
 *                doubles (root 0), Barrier
 *   inplace      Allreduce of 5 doubles and Allgather of 2 ints, MPI_IN_PLACE
 *   io           File_open, write_at and read_at of 8 ints, File_close
 * and in mpi_calls_more.c every other function the wrappers cover.
 * Every rank checks the data it got and prints one line (with errno after a
 * last Barrier); exit 0 if all good.
 * usage: mpi_calls [init_thread] */
#include "mpi_calls.h"

#include <errno.h>
#include <mpi.h>
#include <perfmark.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int bad;

void expect(int cond, int rank, const char *what)
{
    if (!cond) {
        printf("rank %d: WRONG %s\n", rank, what);
        bad = 1;
    }
}

static void p2p(int rank, int size)
{
    int next = (rank + 1) % size, prev = (rank - 1 + size) % size;
    static double out[1000], in[1000];
    MPI_Status st;
    int got;
    perfmark_region_begin("p2p");
    for (int k = 0; k < rank + 1; k++) {
        for (int i = 0; i < 10 * (rank + 1); i++)
            out[i] = rank + 0.5 * i;
        MPI_Send(out, 10 * (rank + 1), MPI_DOUBLE, next, 1, MPI_COMM_WORLD);
    }
    for (int k = 0; k < prev + 1; k++) {
        MPI_Recv(in, 1000, MPI_DOUBLE, prev, 1, MPI_COMM_WORLD, &st);
        MPI_Get_count(&st, MPI_DOUBLE, &got);
        expect(got == 10 * (prev + 1) && in[3] == prev + 1.5, rank, "p2p data");
    }
    perfmark_region_end("p2p");

    int five[5] = {rank, 1, 2, 3, 4}, five_in[5];
    perfmark_region_begin("ignore");
    MPI_Send(five, 5, MPI_INT, next, 2, MPI_COMM_WORLD);
    MPI_Recv(five_in, 5, MPI_INT, prev, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    perfmark_region_end("ignore");
    expect(five_in[0] == prev && five_in[4] == 4, rank, "ignore data");

    MPI_Datatype triple;
    MPI_Type_contiguous(3, MPI_DOUBLE, &triple);
    MPI_Type_commit(&triple);
    double t_out[12], t_in[30];
    for (int i = 0; i < 12; i++)
        t_out[i] = rank * 100 + i;
    perfmark_region_begin("derived");
    MPI_Send(t_out, 4, triple, next, 3, MPI_COMM_WORLD);
    MPI_Recv(t_in, 10, triple, prev, 3, MPI_COMM_WORLD, &st);
    perfmark_region_end("derived");
    MPI_Get_count(&st, triple, &got);
    expect(got == 4 && t_in[11] == prev * 100 + 11, rank, "derived data");
    MPI_Type_free(&triple);

    int three[3] = {rank, rank, rank}, ten[10];
    perfmark_region_begin("sendrecv");
    MPI_Sendrecv(three, 3, MPI_INT, next, 4, ten, 10, MPI_INT, prev, 4, MPI_COMM_WORLD, &st);
    perfmark_region_end("sendrecv");
    expect(ten[2] == prev, rank, "sendrecv data");
}

static void nonblocking(int rank, int size)
{
    int next = (rank + 1) % size, prev = (rank - 1 + size) % size;
    float f_out[7], f_in[7];
    for (int i = 0; i < 7; i++)
        f_out[i] = (float)(rank + i);
    MPI_Request req[2];
    int two[2] = {1, rank}, sum[2];
    MPI_Request ar;
    perfmark_region_begin("nonblocking");
    MPI_Irecv(f_in, 7, MPI_FLOAT, prev, 5, MPI_COMM_WORLD, &req[0]);
    MPI_Isend(f_out, 7, MPI_FLOAT, next, 5, MPI_COMM_WORLD, &req[1]);
    MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
    MPI_Iallreduce(two, sum, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &ar);
    MPI_Wait(&ar, MPI_STATUS_IGNORE);
    perfmark_region_end("nonblocking");
    expect(f_in[6] == (float)(prev + 6), rank, "nonblocking data");
    expect(sum[0] == size && sum[1] == size * (size - 1) / 2, rank, "iallreduce");
}

static void collectives(int rank, int size)
{
    int four[4] = {1, 2, 3, rank}, four_sum[4];
    long six[6] = {0};
    if (rank == 0)
        for (int i = 0; i < 6; i++)
            six[i] = 1000 + i;
    int *scounts = malloc(sizeof(int) * 4 * (size_t)size), *sdispls = scounts + size;
    int *rcounts = scounts + 2 * size, *rdispls = scounts + 3 * size;
    int stotal = 0, rtotal = 0;
    for (int j = 0; j < size; j++) {
        scounts[j] = rank + j + 1, sdispls[j] = stotal, stotal += scounts[j];
        rcounts[j] = j + rank + 1, rdispls[j] = rtotal, rtotal += rcounts[j];
    }
    int *a2a_out = malloc(sizeof(int) * (size_t)(stotal + rtotal)), *a2a_in = a2a_out + stotal;
    for (int i = 0; i < stotal; i++)
        a2a_out[i] = rank;
    int g_out[2] = {rank, rank}, *g_in = malloc(sizeof(int) * 3 * (size_t)size), sc_in[3];
    for (int i = 0; i < 3 * size; i++)
        g_in[i] = i / 3;
    double d2[2] = {1.0, 2.0}, d2_sum[2] = {0, 0};

    perfmark_region_begin("coll");
    for (int c = 0; c < 3; c++)
        MPI_Allreduce(four, four_sum, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Bcast(six, 6, MPI_LONG, 0, MPI_COMM_WORLD);
    MPI_Alltoallv(a2a_out, scounts, sdispls, MPI_INT, a2a_in, rcounts, rdispls, MPI_INT,
                  MPI_COMM_WORLD);
    MPI_Scatter(g_in, 3, MPI_INT, sc_in, 3, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Gather(g_out, 2, MPI_INT, g_in, 2, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Reduce(d2, d2_sum, 2, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    perfmark_region_end("coll");

    expect(four_sum[0] == size && four_sum[3] == size * (size - 1) / 2, rank, "allreduce");
    expect(six[5] == 1005, rank, "bcast");
    expect(a2a_in[rtotal - 1] == size - 1, rank, "alltoallv");
    expect(sc_in[0] == rank, rank, "scatter");
    expect(rank != 0 || (g_in[2 * size - 1] == size - 1 && d2_sum[1] == 2.0 * size), rank,
           "gather/reduce");
    free(scounts);
    free(a2a_out);
    free(g_in);
}

static void in_place(int rank, int size)
{
    double d5[5] = {1, 1, 1, 1, rank};
    int *blocks = calloc(2 * (size_t)size, sizeof(int));
    blocks[2 * rank] = blocks[2 * rank + 1] = rank + 1;
    perfmark_region_begin("inplace");
    MPI_Allreduce(MPI_IN_PLACE, d5, 5, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, blocks, 2, MPI_INT, MPI_COMM_WORLD);
    perfmark_region_end("inplace");
    expect(d5[0] == size && d5[4] == size * (size - 1) / 2.0, rank, "in-place allreduce");
    expect(blocks[2 * size - 1] == size, rank, "in-place allgather");
    free(blocks);
}

static void io(int rank)
{
    MPI_File fh;
    int out[8], in[8];
    for (int i = 0; i < 8; i++)
        out[i] = rank * 8 + i;
    MPI_Status st;
    perfmark_region_begin("io");
    MPI_File_open(MPI_COMM_WORLD, "mpi_calls.io", MPI_MODE_CREATE | MPI_MODE_RDWR,
                  MPI_INFO_NULL, &fh);
    MPI_File_write_at(fh, (MPI_Offset)rank * 32, out, 8, MPI_INT, &st);
    MPI_File_read_at(fh, (MPI_Offset)rank * 32, in, 8, MPI_INT, &st);
    MPI_File_close(&fh);
    perfmark_region_end("io");
    expect(in[7] == rank * 8 + 7, rank, "file data");
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "init_thread") == 0) {
        int provided;
        MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    } else {
        MPI_Init(&argc, &argv);
    }
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    p2p(rank, size);
    nonblocking(rank, size);
    collectives(rank, size);
    in_place(rank, size);
    io(rank);
    more_p2p(rank, size);
    completion(rank, size);
    more_collectives(rank, size);
    one_sided(rank, size);
    more_io(rank);
    /* The wrappers leave errno as the real call left it: the same with and
     * without perfmark (check_mpi.py compares the two outputs). */
    errno = 4321;
    MPI_Barrier(MPI_COMM_WORLD);
    int err = errno;
    printf("mpi_calls rank %d of %d: errno %d after MPI_Barrier: %s\n", rank, size, err,
           bad ? "WRONG" : "ok");
    MPI_Finalize();
    return bad;
}
