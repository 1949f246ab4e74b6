/* omp_names: OpenMP constructs in static (non-exported) functions inside a
 * user region, for the names of omp regions (tests/omp/check_names.py).
 *
 * Built several times with clang and with gcc, -O2 -fopenmp and no
 * -rdynamic: with PM_FILLER = 1 and 40 (filler() before the constructs
 * grows, so every address after it moves: the names must not), with
 * PM_EDIT (code added inside stencil_sweep before its constructs, which
 * moves their offsets in it: the names must not change either), and with
 * -g (names then carry file:line). stencil_sweep holds two constructs: they
 * must stay two regions. */
#include <perfmark.h>

#include <stdio.h>
#include <stdlib.h>

#ifndef PM_FILLER
#define PM_FILLER 1
#endif

/* Unrelated code whose size differs between builds. */
static __attribute__((noinline)) double filler(volatile double *x)
{
    double s = 0;
#define PM_STEP(i) s += x[(i) % 7] * (i);
#if PM_FILLER > 1
    PM_STEP(1) PM_STEP(2) PM_STEP(3) PM_STEP(4) PM_STEP(5) PM_STEP(6) PM_STEP(7) PM_STEP(8)
    PM_STEP(9) PM_STEP(10) PM_STEP(11) PM_STEP(12) PM_STEP(13) PM_STEP(14) PM_STEP(15)
    PM_STEP(16) PM_STEP(17) PM_STEP(18) PM_STEP(19) PM_STEP(20) PM_STEP(21) PM_STEP(22)
    PM_STEP(23) PM_STEP(24) PM_STEP(25) PM_STEP(26) PM_STEP(27) PM_STEP(28) PM_STEP(29)
    PM_STEP(30) PM_STEP(31) PM_STEP(32) PM_STEP(33) PM_STEP(34) PM_STEP(35) PM_STEP(36)
    PM_STEP(37) PM_STEP(38) PM_STEP(39) PM_STEP(40)
#else
    PM_STEP(1)
#endif
    return s;
}

static __attribute__((noinline)) void stencil_sweep(double *a, double *b, int n)
{
#ifdef PM_EDIT
    for (int i = 0; i < n; i += 61)  /* the user's edit */
        a[i] = a[i] * 0.5 + b[i] * 0.5;
#endif
#pragma omp parallel for
    for (int i = 1; i < n - 1; i++)
        b[i] = (a[i - 1] + a[i] + a[i + 1]) / 3;
#pragma omp parallel for
    for (int i = 1; i < n - 1; i++)
        a[i] = (b[i - 1] + b[i] + b[i + 1]) / 3;
}

int main(int argc, char **argv)
{
    int sweeps = argc > 1 ? atoi(argv[1]) : 20, n = 1 << 16;
    double *a = calloc((size_t)n, sizeof *a), *b = calloc((size_t)n, sizeof *b);
    volatile double x[7] = {1, 2, 3, 4, 5, 6, 7};
    if (!a || !b)
        return 1;
    a[n / 2] = 1;
    perfmark_region_begin("solve");
    for (int s = 0; s < sweeps; s++)
        stencil_sweep(a, b, n);
    perfmark_region_end("solve");
    printf("omp_names: %g %g\n", a[n / 2], filler(x));
    free(a), free(b);
    return 0;
}
