/* An MPI program that counts its own calls: the independent count the
 * measurement must equal. How many calls each rank makes is not a formula
 * the test could share: each rank adds pseudo-random numbers (seeded by its
 * rank) with MPI_Allreduce until the sum passes a bound, and broadcasts
 * whenever the sum crosses a multiple of 10; then every rank but 0 sends
 * rank 0 a random number of messages, announced first. Every call site
 * counts its own calls, and each rank prints its counts:
 *   mpi_count rank R of N: MPI_Allreduce A MPI_Bcast B MPI_Send S MPI_Recv V MPI_Barrier 1
 * Built with PM_SECOND_MPI, it first loads that other MPI library too (a
 * process with two MPIs), and calls only its own.
 * usage: mpi_count [bound] */
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
#ifdef PM_SECOND_MPI
    if (!dlopen(PM_SECOND_MPI, RTLD_NOW | RTLD_GLOBAL)) {
        fprintf(stderr, "mpi_count: %s\n", dlerror());
        return 1;
    }
#endif
    MPI_Init(&argc, &argv);
    int rank, size, allreduce = 0, bcast = 0, send = 0, recv = 0, barrier = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    double bound = argc > 1 ? atof(argv[1]) : 200.0, sum = 0;
    srand(17u + 31u * (unsigned)rank);
    /* Every rank takes part in every collective: the loop runs until the
     * slowest rank's own sum passes the bound, everyone agreeing each turn. */
    for (int more = 1; more;) {
        double mine = rank == 0 ? 0 : rand() % 7, all = 0;
        MPI_Allreduce(&mine, &all, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        allreduce++;
        double before = sum;
        sum += all;
        int crossed = (int)(sum / 10) != (int)(before / 10), any = 0;
        MPI_Allreduce(&crossed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        allreduce++;
        if (any) {
            MPI_Bcast(&sum, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
            bcast++;
        }
        more = sum < bound;
    }
    if (rank > 0) {
        int k = 1 + rand() % 4;
        MPI_Send(&k, 1, MPI_INT, 0, 1, MPI_COMM_WORLD);
        send++;
        for (int i = 0; i < k; i++, send++)
            MPI_Send(&i, 1, MPI_INT, 0, 2, MPI_COMM_WORLD);
    } else {
        for (int from = 1; from < size; from++) {
            int k = 0, x;
            MPI_Recv(&k, 1, MPI_INT, from, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            recv++;
            for (int i = 0; i < k; i++, recv++)
                MPI_Recv(&x, 1, MPI_INT, from, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    barrier++;
    printf("mpi_count rank %d of %d: MPI_Allreduce %d MPI_Bcast %d MPI_Send %d MPI_Recv %d "
           "MPI_Barrier %d\n", rank, size, allreduce, bcast, send, recv, barrier);
    MPI_Finalize();
    return 0;
}
