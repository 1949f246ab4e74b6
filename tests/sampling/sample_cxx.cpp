// sample_cxx — C++ names in a sampled profile (issue "Sampled profiles as
// people read them"): a function template in a namespace, instantiated
// twice, the <3> instance spinning 3 times as long as the <1> one. Under
// cpu-clock sampling the report must name them as C++ reads them,
// `void work::spin<3>(double)` and `void work::spin<1>(double)`, at 3 : 1.
// usage: sample_cxx MS   (the <1> instance's CPU milliseconds)
#include <perfmark.h>

#include <cstdint>
#include <cstdlib>
#include <ctime>

static volatile std::uint64_t sink;

static double cpu_ms()
{
    timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

namespace work {
template <int N> __attribute__((noinline)) void spin(double ms)
{
    double end = cpu_ms() + N * ms;
    std::uint64_t x = sink;
    while (cpu_ms() < end)
        for (int i = 0; i < 100000; i++)
            x = x * 6364136223846793005ull + 1442695040888963407ull + N;
    sink = x;
}
} // namespace work

int main(int argc, char **argv)
{
    double ms = argc > 1 ? std::atof(argv[1]) : 100;
    perfmark_region_begin("work");
    work::spin<3>(ms);
    work::spin<1>(ms);
    perfmark_region_end("work");
    return 0;
}
