/* Visits known by construction: outer/inner entered REPS times by name,
 * "h_outer"/"h_inner" REPS times through handles, and 100 names cycled
 * REPS times in all under "cycle".  usage: visits REPS */
#include <perfmark.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    long reps = argc > 1 ? atol(argv[1]) : 1000000;
    for (long i = 0; i < reps; i++) {
        perfmark_region_begin("outer");
        perfmark_region_begin("inner");
        perfmark_region_end("inner");
        perfmark_region_end("outer");
    }
    perfmark_region_t ho = perfmark_region("h_outer"), hi = perfmark_region("h_inner");
    for (long i = 0; i < reps; i++) {
        perfmark_region_enter(ho);
        perfmark_region_enter(hi);
        perfmark_region_exit(hi);
        perfmark_region_exit(ho);
    }
    /* Names built in one reused buffer: the name cache must not be fooled
     * by a pointer it has seen before. */
    char name[32];
    perfmark_region_begin("cycle");
    for (long i = 0; i < reps; i++) {
        snprintf(name, sizeof name, "name%02ld", i % 100);
        perfmark_region_begin(name);
        perfmark_region_end(name);
    }
    perfmark_region_end("cycle");
    return 0;
}
