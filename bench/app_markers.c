/* app_markers — a marker-heavy program: a million visits of a tiny user
 * region inside one big one (bench/run_app.sh). Each tiny visit does a few
 * dozen nanoseconds of arithmetic, the worst case for per-visit reads.
 *
 * usage: app_markers VISITS   prints a checksum and "app_markers done" */
#include <perfmark.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    long visits = argc > 1 ? atol(argv[1]) : 1000000;
    volatile double x = 1.0;
    PERFMARK_REGION_BEGIN("solve");
    for (long i = 0; i < visits; i++) {
        PERFMARK_REGION_BEGIN("kernel");
        for (int k = 0; k < 16; k++)
            x = x * 1.0000001 + 1e-9;
        PERFMARK_REGION_END("kernel");
    }
    PERFMARK_REGION_END("solve");
    printf("checksum %.6f\napp_markers done\n", x);
    return 0;
}
