// Caliper's C++ loop macros through perfmark's shim, beyond the examples:
// a loop left by `break` and never given CALI_CXX_MARK_LOOP_END (the loop
// object closes it at the end of its scope, as Caliper's does), and a loop
// given CALI_CXX_MARK_LOOP_END before its scope ends (closed once).
//
// usage: caliper_loops_cxx N   (N > 3)
// Ground truth: search 1, search/iteration#search 4 (iterations 0..3,
// left at 3), search/iteration#search/step 3, again 1,
// again/iteration#again N.
#include <caliper/cali.h>

#include <cstdio>
#include <cstdlib>

int main(int argc, char **argv)
{
    int n = argc > 1 ? std::atoi(argv[1]) : 6;
    {
        CALI_CXX_MARK_LOOP_BEGIN(search, "search");
        for (int i = 0; i < n; i++) {
            CALI_CXX_MARK_LOOP_ITERATION(search, i);
            if (i == 3)
                break;
            CALI_MARK_BEGIN("step");
            CALI_MARK_END("step");
        }
    }
    CALI_CXX_MARK_LOOP_BEGIN(again, "again");
    for (int i = 0; i < n; i++) {
        CALI_CXX_MARK_LOOP_ITERATION(again, i);
    }
    CALI_CXX_MARK_LOOP_END(again);
    std::printf("caliper_loops_cxx: %d\n", n);
    return 0;
}
