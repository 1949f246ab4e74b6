/* A LIKWID-marked program built the way LIKWID's own documentation says
 * for an uninstrumented build: without -DLIKWID_PERFMON, with LIKWID's real
 * likwid-marker.h. The markers vanish and nothing is linked, with perfmark's
 * shim as with LIKWID. */
#include <likwid-marker.h>
#include <stdio.h>

int main(void)
{
    LIKWID_MARKER_INIT;
    LIKWID_MARKER_THREADINIT;
    LIKWID_MARKER_REGISTER("compute");
    LIKWID_MARKER_START("compute");
    volatile double x = 1;
    for (int i = 0; i < 1000; i++)
        x = x * 1.000001;
    LIKWID_MARKER_STOP("compute");
    LIKWID_MARKER_CLOSE;
    printf("disabled likwid markers: ok\n");
    return 0;
}
