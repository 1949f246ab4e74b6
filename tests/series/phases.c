/* Phases known by construction (tests/series/check_series.py): PHASES times,
 * PHASE_MS of writing fresh pages inside region "touch" (a page fault each),
 * then PHASE_MS of spinning inside region "spin" (no fault). Under
 * --interval the page-fault rate must switch on and off in step.
 * usage: phases [PHASES [PHASE_MS]]   (an MPI build: every rank does it) */
#include "../fresh_pages.h"

#include <perfmark.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#ifdef PHASES_MPI
#include <mpi.h>
#endif

static volatile uint64_t sink;

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
#ifdef PHASES_MPI
    MPI_Init(&argc, &argv);
#endif
    int phases = argc > 1 ? atoi(argv[1]) : 3;
    double ms = argc > 2 ? atof(argv[2]) : 200;
    struct fresh_pages f;
    fresh_pages_init(&f, 4096);
    for (int p = 0; p < phases; p++) {
        double end = now_ms() + ms;
        perfmark_region_begin("touch");
        while (now_ms() < end)
            for (int i = 0; i < 64; i++)
                fresh_pages_touch(&f);
        perfmark_region_end("touch");
        end = now_ms() + ms;
        perfmark_region_begin("spin");
        uint64_t x = sink;
        while (now_ms() < end)
            for (int i = 0; i < 10000; i++)
                x = x * 6364136223846793005ull + 1442695040888963407ull;
        sink = x;
        perfmark_region_end("spin");
    }
#ifdef PHASES_MPI
    MPI_Finalize();
#endif
    return 0;
}
