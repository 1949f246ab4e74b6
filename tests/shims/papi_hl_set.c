/* The calls of PAPI's own high-level tests (src/ctests/..._hl.c in
 * icl-utk-edu/papi: serial, pthreads, OpenMP, MPI, MPI + OpenMP, and the
 * one that reads inside a region), written here from scratch against
 * PAPI's real papi.h and linked against libperfmark-papi.so.
 *
 *   papi_hl_set MODE [THREADS]
 *     serial   "do_flops" begun and ended 4 times
 *     read     "matmul" once, with PAPI_hl_read twice inside it, and a read
 *              of a region never begun (PAPI ignores it: PAPI_OK)
 *     pthread  THREADS threads, each "do_flops" 4 times
 *     omp      an OpenMP for over i = 1..2, "do_flops" per iteration
 *     mpi      (built with -DPAPI_HL_MPI) every rank "do_flops" 4 times,
 *              then the omp loop inside MPI ("do_omp" per iteration)
 * Ends with PAPI_hl_stop. Every call must return PAPI_OK; exit 1 if not. */
#include <papi.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef PAPI_HL_MPI
#include <mpi.h>
#endif

static int bad;
static pthread_mutex_t bad_lock = PTHREAD_MUTEX_INITIALIZER;

static void ok(int rc, const char *what)
{
    if (rc != PAPI_OK) {
        fprintf(stderr, "papi_hl_set: %s returned %d, want PAPI_OK\n", what, rc);
        pthread_mutex_lock(&bad_lock);
        bad = 1;
        pthread_mutex_unlock(&bad_lock);
    }
}

static double flops(int n)
{
    volatile double x = 0.5;
    for (int i = 0; i < n; i++)
        x = x * 1.000001 + 0.25;
    return x;
}

static void do_flops_4(void)
{
    for (int i = 1; i <= 4; ++i) {
        ok(PAPI_hl_region_begin("do_flops"), "PAPI_hl_region_begin");
        flops(100000);
        ok(PAPI_hl_region_end("do_flops"), "PAPI_hl_region_end");
    }
}

static void *thread_main(void *arg)
{
    (void)arg;
    do_flops_4();
    return NULL;
}

static void omp_loop(const char *name)
{
    int i;
#pragma omp parallel
#pragma omp for
    for (i = 1; i <= 2; ++i) {
        ok(PAPI_hl_region_begin(name), "PAPI_hl_region_begin (omp)");
        flops(100000);
        ok(PAPI_hl_region_end(name), "PAPI_hl_region_end (omp)");
    }
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "serial";
    int nthreads = argc > 2 ? atoi(argv[2]) : 3;
    if (strcmp(mode, "serial") == 0) {
        do_flops_4();
    } else if (strcmp(mode, "read") == 0) {
        ok(PAPI_hl_region_begin("matmul"), "PAPI_hl_region_begin");
        flops(50000);
        ok(PAPI_hl_read("matmul"), "PAPI_hl_read");
        flops(50000);
        ok(PAPI_hl_read("matmul"), "PAPI_hl_read");
        ok(PAPI_hl_region_end("matmul"), "PAPI_hl_region_end");
        ok(PAPI_hl_read("never_begun"), "PAPI_hl_read of a region never begun");
    } else if (strcmp(mode, "pthread") == 0) {
        pthread_t t[64];
        int n = nthreads < 64 ? nthreads : 64;
        for (int i = 0; i < n; i++)
            if (pthread_create(&t[i], NULL, thread_main, NULL) != 0)
                return 2;
        for (int i = 0; i < n; i++)
            pthread_join(t[i], NULL);
    } else if (strcmp(mode, "omp") == 0) {
        omp_loop("do_flops");
#ifdef PAPI_HL_MPI
    } else if (strcmp(mode, "mpi") == 0) {
        MPI_Init(&argc, &argv);
        do_flops_4();
        omp_loop("do_omp");
        ok(PAPI_hl_stop(), "PAPI_hl_stop");
        MPI_Finalize();
        printf("papi_hl_set %s: %s\n", mode, bad ? "FAILED" : "all PAPI_OK");
        return bad;
#endif
    } else {
        fprintf(stderr, "papi_hl_set: unknown mode %s\n", mode);
        return 2;
    }
    ok(PAPI_hl_stop(), "PAPI_hl_stop");
    printf("papi_hl_set %s: %s\n", mode, bad ? "FAILED" : "all PAPI_OK");
    return bad;
}
