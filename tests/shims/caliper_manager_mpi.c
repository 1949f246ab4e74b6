/* An MPI program with Caliper's ConfigManager, the way Caliper-instrumented
 * MPI codes set up (the configuration from argv[1], flush() before
 * MPI_Finalize), linked with -lperfmark-caliper: runtime-report must print
 * the job's one report once, from rank 0, covering every rank.
 *
 * usage: caliper_manager_mpi CONFIG N
 * Ground truth per rank: main 1, main/mainloop 1,
 * main/mainloop/iteration#mainloop N, .../iteration#mainloop/exchange N. */
#include <caliper/cali.h>
#include <caliper/cali-manager.h>
#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);

    cali_ConfigManager mgr;
    cali_ConfigManager_new(&mgr);
    cali_ConfigManager_add(&mgr, argc > 1 ? argv[1] : "");
    if (cali_ConfigManager_error(&mgr) && rank == 0) {
        cali_SHROUD_array msg;
        cali_ConfigManager_error_msg_bufferify(&mgr, &msg);
        fprintf(stderr, "Caliper config error: %s\n", msg.addr.ccharp);
        cali_SHROUD_memory_destructor(&msg.cxx);
    }
    cali_ConfigManager_start(&mgr);
    int n = argc > 2 ? atoi(argv[2]) : 4;

    CALI_MARK_FUNCTION_BEGIN;
    double sum = 0;
    CALI_MARK_LOOP_BEGIN(loop, "mainloop");
    for (int i = 0; i < n; i++) {
        CALI_MARK_ITERATION_BEGIN(loop, i);
        double x = rank + i, total = 0;
        CALI_MARK_COMM_REGION_BEGIN("exchange");
        MPI_Allreduce(&x, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        CALI_MARK_COMM_REGION_END("exchange");
        sum += total;
        CALI_MARK_ITERATION_END(loop);
    }
    CALI_MARK_LOOP_END(loop);
    CALI_MARK_FUNCTION_END;

    cali_ConfigManager_flush(&mgr);
    cali_ConfigManager_delete(&mgr);
    if (rank == 0)
        printf("caliper_manager_mpi: %d iterations, sum %g\n", n, sum);
    MPI_Finalize();
    return 0;
}
