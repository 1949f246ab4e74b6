/* sample_lib_main — loads the library LIB (sample_lib.c) and calls its
 * lib_work for MS milliseconds inside region "lib".
 *
 * usage: sample_lib_main LIB MS */
#include <dlfcn.h>
#include <perfmark.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: sample_lib_main LIB MS\n");
        return 2;
    }
    void *lib = dlopen(argv[1], RTLD_NOW);
    void (*work)(double) = lib ? (void (*)(double))dlsym(lib, "lib_work") : NULL;
    if (!work) {
        fprintf(stderr, "sample_lib_main: %s\n", dlerror());
        return 1;
    }
    perfmark_region_begin("lib");
    work(atof(argv[2]));
    perfmark_region_end("lib");
    return 0;
}
