/* A marker user as an application would write it: includes <perfmark.h>
 * from the install, links -lperfmark. Ground truth by construction:
 * "outer" N times, "outer/inner" 3N times. */
#include <perfmark.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 10;
    volatile double x = 0;
    for (int i = 0; i < n; i++) {
        PERFMARK_REGION_BEGIN("outer");
        for (int j = 0; j < 3; j++) {
            PERFMARK_REGION_BEGIN("inner");
            for (int k = 0; k < 1000; k++)
                x += k;
            PERFMARK_REGION_END("inner");
        }
        PERFMARK_REGION_END("outer");
    }
    printf("consumer: %d outer, active=%d\n", n, perfmark_active());
    return 0;
}
