/* A polling loop with ground truth (issue "Real applications measured at a
 * few percent"): each rank posts a receive its partner only satisfies after
 * the loop, then calls MPI_Test POLLS times inside region "loop"; on every
 * 1000th poll it enters region "compute", which touches one fresh page and
 * then spins SPIN_US microseconds (default 0). So MPI_Test has exactly POLLS
 * calls (MPI_Wait completes the receive), compute POLLS/1000 visits and as
 * many page faults, and the polls take no counter reading: their cost stays
 * in "loop". With SPIN_US 0 compute is short (the throttle takes it after
 * its warm-up); with a few hundred it is not, and its counts stay exact.
 *
 * usage: mpirun -np 2 mpi_poll POLLS [SPIN_US]   (prints "mpi_poll RANK: ok") */
#include <mpi.h>
#include <perfmark.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "../fresh_pages.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long polls = argc > 1 ? atol(argv[1]) : 1000000;
    long spin_ns = argc > 2 ? atol(argv[2]) * 1000L : 0;
    int peer = rank ^ 1, in = -1, out = rank, flag = 0;
    struct fresh_pages mem;
    fresh_pages_init(&mem, polls / 1000 + 1);
    MPI_Request req;
    MPI_Irecv(&in, 1, MPI_INT, peer < size ? peer : rank, 1, MPI_COMM_WORLD, &req);
    perfmark_region_begin("loop");
    for (long i = 1; i <= polls; i++) {
        MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
        if (flag) {
            fprintf(stderr, "mpi_poll %d: completed early\n", rank);
            MPI_Abort(MPI_COMM_WORLD, 3);
        }
        if (i % 1000 == 0) {
            perfmark_region_begin("compute");
            fresh_pages_touch(&mem);
            struct timespec a, b;
            clock_gettime(CLOCK_MONOTONIC, &a);
            do
                clock_gettime(CLOCK_MONOTONIC, &b);
            while ((b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec) < spin_ns);
            perfmark_region_end("compute");
        }
    }
    perfmark_region_end("loop");
    MPI_Barrier(MPI_COMM_WORLD);  /* every rank has polled: now satisfy them */
    MPI_Send(&out, 1, MPI_INT, peer < size ? peer : rank, 1, MPI_COMM_WORLD);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    printf("mpi_poll %d: %s\n", rank, in == (peer < size ? peer : rank) ? "ok" : "wrong data");
    fresh_pages_free(&mem);
    MPI_Finalize();
    return 0;
}
