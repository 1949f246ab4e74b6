/* The calls of LIKWID's own marker test program (test/testmarker-cnt.c in
 * RRZE-HPC/likwid), written here from scratch: <likwid.h> (not only
 * likwid-marker.h), likwid_getProcessorId next to the markers, OpenMP
 * threads with LIKWID_MARKER_THREADINIT, labels built at run time, and the
 * pinning calls that program has commented out, here in use:
 * likwid_pinProcess for the main thread, likwid_pinThread per thread.
 *
 * Ground truth for T threads (OMP_NUM_THREADS) and the CPUs C the process
 * may use: thread k is pinned to C[k mod |C|] and likwid_getProcessorId
 * must say so; regions "plain-1" and "plain-2" are visited once per thread.
 * Prints "thread K cpu N" per thread, "main cpu N"; exits 1 on a mismatch. */
#define _GNU_SOURCE
#include <likwid.h>

#include <omp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

#define SIZE 200000

static double a[SIZE], b[SIZE], c[SIZE];

int main(void)
{
    cpu_set_t may;
    int cpus[CPU_SETSIZE], ncpus = 0, failures = 0;
    sched_getaffinity(0, sizeof may, &may);
    for (int i = 0; i < CPU_SETSIZE; i++)
        if (CPU_ISSET(i, &may))
            cpus[ncpus++] = i;
    for (int i = 0; i < SIZE; i++)
        a[i] = 0, b[i] = 1, c[i] = i;
    LIKWID_MARKER_INIT;
    if (!likwid_pinProcess(cpus[0]) || likwid_getProcessorId() != cpus[0]) {
        fprintf(stderr, "main: pinned to %d, likwid_getProcessorId %d\n", cpus[0],
                likwid_getProcessorId());
        failures++;
    }
    printf("main cpu %d\n", likwid_getProcessorId());
    double sum = 0;
#pragma omp parallel reduction(+ : sum) reduction(+ : failures)
    {
        LIKWID_MARKER_THREADINIT;
        int k = omp_get_thread_num(), want = cpus[k % ncpus];
        if (!likwid_pinThread(want) || likwid_getProcessorId() != want) {
            fprintf(stderr, "thread %d: pinned to %d, likwid_getProcessorId %d\n", k, want,
                    likwid_getProcessorId());
            failures++;
        }
#pragma omp critical
        printf("thread %d cpu %d\n", k, likwid_getProcessorId());
        char label[40];
        for (int round = 1; round < 3; round++) {
            snprintf(label, sizeof label, "plain-%d", round);
#pragma omp barrier
            LIKWID_MARKER_START(label);
            for (int j = 0; j < round * (k + 1); j++)
                for (int i = 0; i < SIZE; i++)
                    sum += b[i] + 3.14 * c[i];
#pragma omp barrier
            LIKWID_MARKER_STOP(label);
        }
    }
    LIKWID_MARKER_CLOSE;
    printf("sum %g, %d failures\n", sum, failures);
    return failures ? 1 : 0;
}
