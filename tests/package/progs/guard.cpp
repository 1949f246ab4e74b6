// The C++ RAII guard (perfmark.hpp). Ground truth for N iterations:
//   work N; work/even N/2 (odd i return early: the guard must still end
//   "work"); work/throws N/4 (left by an exception, caught in main);
//   dyn/name0..name2 from std::string temporaries, N visits in total;
//   handle N (handle constructor).
#include <perfmark.hpp>

#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

static volatile double sink;

static void work(int i)
{
    perfmark::region r("work");
    if (i % 2)
        return;
    {
        PERFMARK_SCOPE("even");
        sink = sink + i;
    }
    if (i % 4 == 0) {
        perfmark::region t("throws");
        throw std::runtime_error("leave by exception");
    }
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? std::atoi(argv[1]) : 40;
    perfmark_region_t h = perfmark::handle("handle");
    for (int i = 0; i < n; i++) {
        try {
            work(i);
        } catch (const std::runtime_error &) {
        }
        {
            perfmark::region d("dyn");
            perfmark::region s(std::string("name") + std::to_string(i % 3));
        }
        perfmark::region hr(h);
    }
    std::printf("guard: %d iterations, active=%d\n", n, perfmark::active() ? 1 : 0);
    return 0;
}
