/* The ConfigManager's C calls one at a time, for what the examples do not
 * show. Each mode marks one region "work" and exits 0.
 *
 * usage: caliper_manager_calls MODE [FILE]
 *   noflush    runtime-report added and started, never flushed: no report
 *   nostart    runtime-report added and flushed, never started: no report
 *   twice      two managers with runtime-report, each flushed twice: one report
 *   default    set_default_parameter("output", "stdout"), then runtime-report:
 *              the report on stdout
 *   forconfig  set_default_parameter_for_config("runtime-report", "output",
 *              FILE): the report in FILE
 *   noerror    a valid config: error() false, error_msg_bufferify gives NULL
 *              and length 0; delete twice is harmless. Prints "noerror ok". */
#include <caliper/cali.h>
#include <caliper/cali-manager.h>

#include <stdio.h>
#include <string.h>

static void work(void)
{
    CALI_MARK_BEGIN("work");
    CALI_MARK_END("work");
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    cali_ConfigManager a, b;
    cali_ConfigManager_new(&a);
    if (strcmp(mode, "noflush") == 0) {
        cali_ConfigManager_add(&a, "runtime-report");
        cali_ConfigManager_start(&a);
    } else if (strcmp(mode, "nostart") == 0) {
        cali_ConfigManager_add(&a, "runtime-report");
        cali_ConfigManager_flush(&a);
    } else if (strcmp(mode, "twice") == 0) {
        cali_ConfigManager_new(&b);
        cali_ConfigManager_add(&a, "runtime-report");
        cali_ConfigManager_add(&b, "runtime-report(output=stderr)");
        cali_ConfigManager_start(&a);
        cali_ConfigManager_start(&b);
        cali_ConfigManager_flush(&a);
        cali_ConfigManager_flush(&b);
        cali_ConfigManager_flush(&a);
        cali_ConfigManager_flush(&b);
        cali_ConfigManager_delete(&b);
    } else if (strcmp(mode, "default") == 0) {
        cali_ConfigManager_set_default_parameter(&a, "output", "stdout");
        cali_ConfigManager_add(&a, "runtime-report");
        cali_ConfigManager_start(&a);
        cali_ConfigManager_flush(&a);
    } else if (strcmp(mode, "forconfig") == 0 && argc > 2) {
        cali_ConfigManager_set_default_parameter_for_config(&a, "runtime-report", "output",
                                                            argv[2]);
        cali_ConfigManager_add(&a, "runtime-report");
        cali_ConfigManager_start(&a);
        cali_ConfigManager_flush(&a);
    } else if (strcmp(mode, "noerror") == 0) {
        cali_ConfigManager_add(&a, "none");
        cali_SHROUD_array msg;
        cali_ConfigManager_error_msg_bufferify(&a, &msg);
        int ok = !cali_ConfigManager_error(&a) && msg.addr.ccharp == NULL && msg.elem_len == 0;
        cali_SHROUD_memory_destructor(&msg.cxx);
        cali_ConfigManager_delete(&a);
        if (ok)
            puts("noerror ok");
    } else {
        fprintf(stderr, "unknown mode %s\n", mode);
        return 2;
    }
    work();
    cali_ConfigManager_delete(&a);
    return 0;
}
