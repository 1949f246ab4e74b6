/* Where perfmark's own files are: relative to the running program
 * (/proc/self/exe), so that a moved install, or one staged with --prefix,
 * still finds its own. */
#define _GNU_SOURCE
#include "cli/find.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int pm_cli_find(const char *name, const char *const *dirs, size_t ndirs, int mode, char *out,
                size_t len)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return -1;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash)
        return -1;
    *slash = '\0';
    for (size_t i = 0; i < ndirs; i++) {
        snprintf(out, len, "%s/%s/%s", exe, dirs[i], name);
        char *real = access(out, mode) == 0 ? realpath(out, NULL) : NULL;
        if (real) {
            snprintf(out, len, "%s", real);
            free(real);
            return 0;
        }
    }
    return -1;
}

/* A library of perfmark's beside the binary: bin/perfmark → lib/NAME in the
 * build tree, the configured bindir → libdir once installed (relative, so an
 * install moved or staged with --prefix still finds its own libraries). */
int pm_cli_find_library(const char *name, char *out, size_t len)
{
#ifndef PERFMARK_REL_LIBDIR
#define PERFMARK_REL_LIBDIR "../lib"
#endif
    static const char *const dirs[] = {PERFMARK_REL_LIBDIR, "../lib", "../lib64", ".",
                                       "../lib/x86_64-linux-gnu"};
    return pm_cli_find(name, dirs, sizeof dirs / sizeof *dirs, R_OK, out, len);
}

/* Programs perfmark execs: beside it (the build tree's bin/), or in the
 * configured libexecdir/perfmark relative to the bindir once installed. */
int pm_cli_find_program(const char *name, char *out, size_t len)
{
#ifndef PERFMARK_REL_LIBEXECDIR
#define PERFMARK_REL_LIBEXECDIR "../libexec/perfmark"
#endif
    static const char *const dirs[] = {".", PERFMARK_REL_LIBEXECDIR, "../libexec/perfmark"};
    return pm_cli_find(name, dirs, sizeof dirs / sizeof *dirs, X_OK, out, len);
}
