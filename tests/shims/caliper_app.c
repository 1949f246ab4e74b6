/* A Caliper-annotated program (CALI_MARK_* macros and the functions behind
 * them) linked against libperfmark-caliper.so. Ground truth for N:
 *   "init" 1 (phase), "timestep" N, "timestep/kernel" N (function
 *   annotation: named after the function), "timestep/exchange" N (comm
 *   region), "timestep/kernel/wrapped" N (CALI_WRAP_STATEMENT). */
#include <caliper/cali.h>

#include <stdio.h>
#include <stdlib.h>

static volatile double x;

static void bump(void)
{
    for (int k = 0; k < 1000; k++)
        x = x + k;
}

static void kernel(void)
{
    CALI_MARK_FUNCTION_BEGIN;
    CALI_WRAP_STATEMENT("wrapped", bump());
    CALI_MARK_FUNCTION_END;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 30;
    cali_init();
    CALI_MARK_PHASE_BEGIN("init");
    bump();
    CALI_MARK_PHASE_END("init");
    for (int i = 0; i < n; i++) {
        CALI_MARK_BEGIN("timestep");
        kernel();
        CALI_MARK_COMM_REGION_BEGIN("exchange");
        bump();
        CALI_MARK_COMM_REGION_END("exchange");
        CALI_MARK_END("timestep");
    }
    printf("caliper_app: %d timesteps\n", n);
    return 0;
}
