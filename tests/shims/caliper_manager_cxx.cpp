// A C++ program set up the way Caliper's own C++ example (examples/apps/
// cxx-example.cpp) sets itself up, written here with the same calls, built
// against perfmark's Caliper headers and linked with -lperfmark-caliper:
// cali::ConfigManager with a default parameter, the configuration from
// "-P CONFIG" (none given: ""), the iteration count as the other argument,
// help listing the available configs and their documentation, a config
// error printed and the program going on, run metadata set through
// cali_set_global_*_byname, main marked as a function, "init" as a region,
// and a loop marked with CALI_CXX_MARK_LOOP_BEGIN/ITERATION/END whose every
// iteration calls a function marked with CALI_CXX_MARK_FUNCTION.
//
// usage: caliper_manager_cxx [-P CONFIG] [ITERATIONS]   (default 4)
// Ground truth: main 1, main/init 1, main/mainloop 1,
// main/mainloop/iteration#mainloop N, main/mainloop/iteration#mainloop/nap N.
#include <caliper/cali.h>
#include <caliper/cali-manager.h>

#include <time.h>

#include <algorithm>
#include <cstring>
#include <iostream>
#include <stdexcept>
#include <string>

static void usage(const cali::ConfigManager &mgr)
{
    std::cerr << "usage: caliper_manager_cxx [-P caliper-config] [iterations]\n"
              << "configs:";
    for (const std::string &name : mgr.available_config_specs())
        std::cerr << "\n" << mgr.get_documentation_for_spec(name.c_str());
    std::cerr << std::endl;
}

static double nap(int i)
{
    CALI_CXX_MARK_FUNCTION;
    struct timespec t = {0, std::max<long>(i * 1000L, 50000L)};
    nanosleep(&t, nullptr);
    return 0.5 * i;
}

int main(int argc, char *argv[])
{
    cali::ConfigManager mgr;
    mgr.set_default_parameter("aggregate_across_ranks", "false");

    std::string config;
    int iterations = 4;
    for (int a = 1; a < argc; ++a) {
        if (std::strcmp(argv[a], "-h") == 0 || std::strcmp(argv[a], "--help") == 0) {
            usage(mgr);
            return 0;
        } else if (std::strcmp(argv[a], "-P") == 0) {
            if (++a >= argc) {
                std::cerr << "-P needs a configuration string" << std::endl;
                return 1;
            }
            config = argv[a];
        } else {
            try {
                iterations = std::stoi(argv[a]);
            } catch (const std::invalid_argument &) {
                std::cerr << "not a number: \"" << argv[a] << "\"" << std::endl;
                return 2;
            }
        }
    }

    mgr.add(config.c_str());
    if (mgr.error())
        std::cerr << "Caliper config error: " << mgr.error_msg() << std::endl;
    mgr.start();

    cali_set_global_int_byname("iterations", iterations);
    cali_set_global_string_byname("caliper.config", config.c_str());

    CALI_MARK_FUNCTION_BEGIN;

    CALI_MARK_BEGIN("init");
    double sum = 0;
    CALI_MARK_END("init");

    CALI_CXX_MARK_LOOP_BEGIN(loop, "mainloop");
    for (int i = 0; i < iterations; ++i) {
        CALI_CXX_MARK_LOOP_ITERATION(loop, i);
        sum += nap(i);
    }
    CALI_CXX_MARK_LOOP_END(loop);

    CALI_MARK_FUNCTION_END;

    std::cout << "caliper_manager_cxx: " << iterations << " iterations, sum " << sum << std::endl;
    mgr.flush();
    return 0;
}
