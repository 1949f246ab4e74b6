/* MPI misuse that perfmark must not change (same output, same exit status
 * with and without it), or must survive:
 *   init_twice      MPI_Init called a second time (an MPI error)
 *   no_finalize     the program exits without MPI_Finalize
 *   thread_finalize MPI_Finalize called from a thread that is not main
 *   after_finalize  MPI_Comm_rank after MPI_Finalize (an MPI error)
 *   bottom          MPI_BOTTOM with an absolute-address struct datatype
 * usage: mpi_bad MODE */
#include <mpi.h>
#include <perfmark.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

static void *finalize_here(void *arg)
{
    MPI_Finalize();
    return arg;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    int provided, rank;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    perfmark_region_begin("work");
    MPI_Barrier(MPI_COMM_WORLD);
    perfmark_region_end("work");

    if (!strcmp(mode, "init_twice")) {
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        int rc = MPI_Init(&argc, &argv);
        printf("rank %d: second MPI_Init returned %s\n", rank,
               rc == MPI_SUCCESS ? "success" : "an error");
    } else if (!strcmp(mode, "no_finalize")) {
        printf("rank %d: exiting without MPI_Finalize\n", rank);
        return 0;
    } else if (!strcmp(mode, "bottom")) {
        double v[3] = {1, 2, 3};
        MPI_Aint addr;
        MPI_Get_address(v, &addr);
        int len = 3;
        MPI_Datatype t;
        MPI_Datatype types[1] = {MPI_DOUBLE};
        MPI_Type_create_struct(1, &len, &addr, types, &t);
        MPI_Type_commit(&t);
        MPI_Bcast(MPI_BOTTOM, 1, t, 0, MPI_COMM_WORLD);
        MPI_Type_free(&t);
        printf("rank %d: bcast from MPI_BOTTOM gave %.0f %.0f %.0f\n", rank, v[0], v[1], v[2]);
    }
    if (!strcmp(mode, "thread_finalize")) {
        pthread_t th;
        pthread_create(&th, NULL, finalize_here, NULL);
        pthread_join(th, NULL);
        printf("rank %d: finalized from another thread\n", rank);
        return 0;
    }
    MPI_Finalize();
    if (!strcmp(mode, "after_finalize")) {
        int r = -1;
        MPI_Comm_rank(MPI_COMM_WORLD, &r);  /* erroneous: MPI decides what happens */
        printf("rank %d: after finalize got %d\n", rank, r);
    }
    printf("rank %d: done\n", rank);
    return 0;
}
