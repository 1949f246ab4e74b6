/* perfmark — the program. `perfmark run` is here, in a binary that links
 * only libc, because it delays every measured job by its own start-up: with
 * the commands' libraries (HDF5, MPI, libdw, ~50 objects) that was ~8 ms per
 * job, 1 % of a short MPI run. Every other command is in libperfmark_cli.so,
 * loaded from beside this program's libraries. */
#define _GNU_SOURCE
#include "cli/find.h"
#include "cli/run.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef PERFMARK_VERSION
#define PERFMARK_VERSION "unknown"
#endif

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--version") == 0) {
        printf("perfmark %s\n", PERFMARK_VERSION);
        return 0;
    }
    /* run's -h is found among its own options (`perfmark run ./app -h`
     * runs ./app -h) */
    if (argc >= 2 && strcmp(argv[1], "run") == 0)
        return pm_cmd_run(argc - 1, argv + 1);
    /* Under an MPICH-family launcher (Hydra's PMI variables, none of Open
     * MPI's or PMIx's), `perfmark report` reads in parallel with MPICH: the
     * commands built on MPICH's parallel HDF5. */
    const char *lib = "libperfmark_cli.so";
    if ((getenv("PMI_RANK") || getenv("PMI_SIZE")) && !getenv("OMPI_COMM_WORLD_SIZE") &&
        !getenv("PMIX_RANK"))
        lib = "libperfmark_cli_mpich.so";
    char path[PATH_MAX];
    if (pm_cli_find_library(lib, path, sizeof path) != 0 &&
        pm_cli_find_library(lib = "libperfmark_cli.so", path, sizeof path) != 0) {
        fprintf(stderr, "perfmark: cannot find libperfmark_cli.so beside this program's "
                "libraries (only `perfmark run` works without it)\n");
        return 2;
    }
    /* Global: `perfmark report` under mpirun initialises MPI, whose
     * components resolve libmpi's symbols from the global scope. */
    void *cli = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
    int (*cli_main)(int, char **) = cli ? (int (*)(int, char **))dlsym(cli, "pm_cli_main") : NULL;
    if (!cli_main) {
        fprintf(stderr, "perfmark: cannot load %s: %s (only `perfmark run` works without "
                "it)\n", path, dlerror());
        return 2;
    }
    return cli_main(argc, argv);
}
