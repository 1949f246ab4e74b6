/* A C program set up the way Caliper's own C example (examples/apps/
 * c-example.c) sets itself up, written here with the same calls, built
 * against perfmark's Caliper headers and linked with -lperfmark-caliper:
 * a ConfigManager takes its configuration from argv[1] ("runtime-report"
 * when none is given, "none" for nothing), with a default parameter set
 * first; a config error is printed and the program goes on; main is marked
 * as a function, "init" as a region, and a loop with the loop macros whose
 * every iteration calls a marked function.
 *
 * usage: caliper_manager_c [CONFIG [ITERATIONS]]   (ITERATIONS: default 4)
 * Ground truth: main 1, main/init 1, main/mainloop 1,
 * main/mainloop/iteration#mainloop N, main/mainloop/iteration#mainloop/scale N. */
#include <caliper/cali.h>
#include <caliper/cali-manager.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double scale(int i)
{
    CALI_MARK_FUNCTION_BEGIN;
    double r = 0.25 * i;
    CALI_MARK_FUNCTION_END;
    return r;
}

int main(int argc, char *argv[])
{
    cali_ConfigManager mgr;
    cali_ConfigManager_new(&mgr);
    cali_ConfigManager_set_default_parameter(&mgr, "aggregate_across_ranks", "false");

    const char *config = "runtime-report";
    if (argc > 1) {
        if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
            puts("usage: caliper_manager_c [caliper-config [iterations]]; \"none\" for nothing");
            return 0;
        }
        config = argv[1];
    }
    if (strcmp(config, "none") == 0)
        config = "";
    int n = argc > 2 ? atoi(argv[2]) : 4;

    cali_ConfigManager_add(&mgr, config);
    if (cali_ConfigManager_error(&mgr)) {
        cali_SHROUD_array msg;
        cali_ConfigManager_error_msg_bufferify(&mgr, &msg);
        fprintf(stderr, "Caliper config error: %s\n", msg.addr.ccharp);
        cali_SHROUD_memory_destructor(&msg.cxx);
    }
    cali_ConfigManager_start(&mgr);

    CALI_MARK_FUNCTION_BEGIN;

    CALI_MARK_BEGIN("init");
    double sum = 0;
    CALI_MARK_END("init");

    CALI_MARK_LOOP_BEGIN(loop, "mainloop");
    for (int i = 0; i < n; ++i) {
        CALI_MARK_ITERATION_BEGIN(loop, i);
        sum += scale(i);
        CALI_MARK_ITERATION_END(loop);
    }
    CALI_MARK_LOOP_END(loop);

    CALI_MARK_FUNCTION_END;

    printf("caliper_manager_c: %d iterations, sum %g\n", n, sum);
    cali_ConfigManager_flush(&mgr);
    cali_ConfigManager_delete(&mgr);
    return 0;
}
