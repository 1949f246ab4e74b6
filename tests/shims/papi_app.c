/* A PAPI high-level-API program (PAPI's own papi.h) linked against
 * libperfmark-papi.so instead of libpapi. Ground truth for N iterations:
 *   "main_loop" 1, "main_loop/step" N, "main_loop/step/halo" N,
 *   "main_loop/step/solve" N/2. Every call must return PAPI_OK. */
#include <papi.h>

#include <stdio.h>
#include <stdlib.h>

static int bad;

static void expect_ok(int rc, const char *what)
{
    if (rc != PAPI_OK) {
        fprintf(stderr, "papi_app: %s returned %d, want PAPI_OK\n", what, rc);
        bad = 1;
    }
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 20;
    volatile double x = 0;
    expect_ok(PAPI_hl_region_begin("main_loop"), "begin main_loop");
    for (int i = 0; i < n; i++) {
        expect_ok(PAPI_hl_region_begin("step"), "begin step");
        expect_ok(PAPI_hl_region_begin("halo"), "begin halo");
        for (int k = 0; k < 10000; k++)
            x += k;
        expect_ok(PAPI_hl_region_end("halo"), "end halo");
        if (i % 2 == 0) {
            expect_ok(PAPI_hl_region_begin("solve"), "begin solve");
            expect_ok(PAPI_hl_read("solve"), "read solve");
            expect_ok(PAPI_hl_region_end("solve"), "end solve");
        }
        expect_ok(PAPI_hl_region_end("step"), "end step");
    }
    expect_ok(PAPI_hl_region_end("main_loop"), "end main_loop");
    expect_ok(PAPI_hl_stop(), "stop");
    if (PAPI_hl_region_begin(NULL) != PAPI_EINVAL) {
        fprintf(stderr, "papi_app: NULL region not PAPI_EINVAL\n");
        bad = 1;
    }
    printf("papi_app: %d iterations%s\n", n, bad ? ", FAILED" : "");
    return bad;
}
