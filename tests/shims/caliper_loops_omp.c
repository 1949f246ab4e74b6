/* A Caliper loop whose iterations run in an OpenMP parallel for, begun and
 * ended on the master thread (the common shape in OpenMP codes).
 *
 * usage: caliper_loops_omp N   (OMP_NUM_THREADS threads)
 * Ground truth: mainloop 1 (master thread); the iteration#mainloop regions
 * of all threads, on whatever path each thread has, N visits together;
 * their child "body" N. Prints the number of threads that ran. */
#include <caliper/cali.h>

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 100, threads = 0;
    double sum = 0;
    CALI_MARK_LOOP_BEGIN(loop, "mainloop");
#pragma omp parallel for reduction(+ : sum)
    for (int i = 0; i < n; i++) {
        CALI_MARK_ITERATION_BEGIN(loop, i);
        CALI_MARK_BEGIN("body");
        sum += i;
        CALI_MARK_END("body");
        CALI_MARK_ITERATION_END(loop);
        if (omp_get_thread_num() == 0)
            threads = omp_get_num_threads();
    }
    CALI_MARK_LOOP_END(loop);
    printf("caliper_loops_omp: %d iterations on %d threads, sum %g\n", n, threads, sum);
    return 0;
}
