/* app_omp — an OpenMP program made of many short parallel regions, as
 * solvers with a parallel loop per sweep are (bench/run_app.sh; the
 * throttle test in tests/overhead). Built with clang, so libomp calls
 * perfmark's OMPT tool.
 *
 * usage: app_omp REGIONS N   REGIONS parallel loops of N iterations of a
 *                            small stencil over a shared array (team size
 *                            from OMP_NUM_THREADS); prints a checksum and
 *                            "app_omp done" */
#include <stdio.h>
#include <stdlib.h>

static void sweep(double *restrict out, const double *restrict in, long n)
{
#pragma omp parallel for schedule(static)
    for (long i = 1; i < n - 1; i++)
        out[i] = 0.25 * in[i - 1] + 0.5 * in[i] + 0.25 * in[i + 1];
}

int main(int argc, char **argv)
{
    long regions = argc > 1 ? atol(argv[1]) : 100000;
    long n = argc > 2 ? atol(argv[2]) : 4096;
    if (regions < 1 || n < 3) {
        fprintf(stderr, "usage: app_omp REGIONS N (N >= 3)\n");
        return 2;
    }
    double *a = malloc((size_t)n * sizeof *a), *b = malloc((size_t)n * sizeof *b);
    if (!a || !b)
        return 1;
    for (long i = 0; i < n; i++)
        a[i] = b[i] = (double)(i % 17);
    for (long r = 0; r < regions; r++) {
        sweep(b, a, n);
        double *t = a;
        a = b;
        b = t;
    }
    double sum = 0;
    for (long i = 0; i < n; i++)
        sum += a[i];
    printf("checksum %.6f\napp_omp done\n", sum);
    free(a);
    free(b);
    return 0;
}
