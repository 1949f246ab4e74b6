// std::thread workers that call no marker (libstdc++ starts them through
// pthread_create): worker k touches k * PAGES pages and prints
//   worker K tid TID pages P cputime_ns 0
// usage: cxx_threads N PAGES. Exit status 3.
#include <perfmark.h>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <unistd.h>
#include <vector>

int main(int argc, char **argv)
{
    int n = argc > 1 ? std::atoi(argv[1]) : 3;
    long pages_each = argc > 2 ? std::atol(argv[2]) : 1000;
    perfmark_region_begin("main_region");
    std::vector<std::thread> workers;
    for (long k = 1; k <= n; k++)
        workers.emplace_back([k, pages_each] {
            long pages = k * pages_each, page = sysconf(_SC_PAGESIZE);
            std::vector<char> mem(static_cast<size_t>(pages * page));
            for (long i = 0; i < pages; i++)
                mem[static_cast<size_t>(i * page)] = 1;
            std::printf("worker %ld tid %d pages %ld cputime_ns 0\n", k, (int)gettid(), pages);
            std::fflush(stdout);
        });
    for (auto &w : workers)
        w.join();
    perfmark_region_end("main_region");
    return 3;
}
