// Built with -DPERFMARK_DISABLE and NOT linked with libperfmark: the C++
// guard, the handle helper, PERFMARK_SCOPE and the C API all do nothing.
#include <perfmark.hpp>
#include <cstdio>
#include <string>

int main()
{
    int bad = 0;
    {
        perfmark::region a("literal");
        perfmark::region b(std::string("string"));
        perfmark::region c(perfmark::handle("handle"));
        PERFMARK_SCOPE("scope");
        bad += perfmark::active();
        bad += perfmark::handle("x") >= 0;
        bad += perfmark_region_begin("c api") != -1;
    }
    std::printf("disabled markers (C++): %s\n", bad ? "WRONG RESULTS" : "ok");
    return bad;
}
