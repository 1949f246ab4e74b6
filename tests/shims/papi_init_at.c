/* A program of PAPI's own (linked with libpapi alone, no perfmark shim)
 * that initialises PAPI a given number of microseconds after it starts.
 * Run under perfmark while perfmark loaded libraries on a thread of its own,
 * PAPI_library_init corrupted this program's heap (docs/design.md, "The file"):
 * check_shims.py's papi_init_at case holds its status and output to those of
 * a run without perfmark, at several moments. */
#include <papi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: papi_init_at MICROSECONDS\n");
        return 2;
    }
    usleep((useconds_t)atol(argv[1]));
    int init = PAPI_library_init(PAPI_VER_CURRENT);
    int begin = PAPI_hl_region_begin("late");
    int end = PAPI_hl_region_end("late");
    /* Without a PMU these fail; what matters is that they fail alike. */
    printf("init %s, region %d/%d\n", init == PAPI_VER_CURRENT ? "ok" : "failed", begin, end);
    return 0;
}
