/* Which visits read counters (issue "Real applications measured at a few
 * percent"): regions with ground truth by construction.
 *
 * usage: overhead throttle N   "big" holds N visits of the empty region
 *                               "tiny"; visit i of tiny (from 1) touches one
 *                               fresh page when i % 100 == 0, so tiny holds
 *                               N/100 page faults in all, 1 of them in its
 *                               first 100 visits (the default warm-up), 5 in
 *                               its first 500; big touches nothing else
 *                               itself and spins SPIN_MS of CPU time
 *        overhead shares       "light": 400 visits of the empty "leaf" and
 *                               almost no work of its own; "heavy": 400
 *                               visits of the empty "leaf" and 200 ms of CPU
 *                               time: perfmark's reads are most of light and
 *                               a sliver of heavy (OVERHEAD on light and the
 *                               leaves, not on heavy)
 * Prints "overhead MODE done" and exits 0. */
#define _GNU_SOURCE
#include <perfmark.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../fresh_pages.h"

#define SPIN_MS 100

static void spin_cpu_ms(long ms)
{
    struct timespec a, b;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
    volatile unsigned long x = 0;
    do {
        for (int i = 0; i < 1000; i++)
            x += (unsigned long)i;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
    } while ((b.tv_sec - a.tv_sec) * 1000L + (b.tv_nsec - a.tv_nsec) / 1000000L < ms);
}

static void throttle(long n)
{
    struct fresh_pages mem;
    fresh_pages_init(&mem, n / 100 + 1);
    perfmark_region_begin("big");
    spin_cpu_ms(SPIN_MS);
    for (long i = 1; i <= n; i++) {
        perfmark_region_begin("tiny");
        if (i % 100 == 0)
            fresh_pages_touch(&mem);
        perfmark_region_end("tiny");
    }
    perfmark_region_end("big");
    fresh_pages_free(&mem);
}

static void shares(void)
{
    perfmark_region_begin("light");
    for (int i = 0; i < 400; i++) {
        perfmark_region_begin("leaf");
        perfmark_region_end("leaf");
    }
    perfmark_region_end("light");
    perfmark_region_begin("heavy");
    for (int i = 0; i < 400; i++) {
        perfmark_region_begin("leaf");
        perfmark_region_end("leaf");
    }
    spin_cpu_ms(200);
    perfmark_region_end("heavy");
}

int main(int argc, char **argv)
{
    if (argc >= 3 && strcmp(argv[1], "throttle") == 0)
        throttle(atol(argv[2]));
    else if (argc >= 2 && strcmp(argv[1], "shares") == 0)
        shares();
    else {
        fprintf(stderr, "usage: overhead_regions throttle N | overhead_regions shares\n");
        return 2;
    }
    printf("overhead %s done\n", argv[1]);
    return 0;
}
