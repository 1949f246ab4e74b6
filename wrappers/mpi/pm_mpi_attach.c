/* The one exported function of an MPI wrapper library (pm_mpi_abi.h):
 * the dispatcher in libperfmark.so asks for this library's wrappers. And
 * what to say when someone preloads this library by hand instead. */
#define _GNU_SOURCE
#include "pm_mpi.h"
#include "pm_mpi_abi.h"
#include "job/pm_mpi_which.h"

#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* From the generated pm_mpi_wrappers.c. */
extern const uint64_t pm_mpi_abi_key;
extern const int pm_mpi_abi_count;
extern const void *const pm_mpi_abi_fns[];

const struct pm_mpi_host *pm_mpi_host;

PM_EXPORT int pm_mpi_abi_attach(int version, uint64_t key, const struct pm_mpi_host *host,
                                struct pm_mpi_wrappers *out)
{
    /* A runtime and wrappers from two builds (or two tables) must not
     * meet: a slot would reach the wrong function. */
    if (version != PM_MPI_ABI_VERSION || key != pm_mpi_abi_key || !host || !out)
        return -1;
    pm_mpi_host = host;
    out->abi = PM_MPI_ABI;
    out->count = pm_mpi_abi_count;
    out->fns = pm_mpi_abi_fns;
    return 0;
}

/* Where the first object whose file name starts with `prefix` is in the
 * process's search order (startup objects: load order), or -1. */
struct pm_find {
    const char *prefix, *path;
    int at, seen;
};

static int pm_find_object(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct pm_find *f = arg;
    const char *name = info->dlpi_name ? info->dlpi_name : "";
    const char *base = strrchr(name, '/') ? strrchr(name, '/') + 1 : name;
    if (f->at < 0 && ((f->prefix && strncmp(base, f->prefix, strlen(f->prefix)) == 0) ||
                      (f->path && strcmp(name, f->path) == 0)))
        f->at = f->seen;
    f->seen++;
    return 0;
}

static int pm_position(const char *prefix, const char *path)
{
    struct pm_find f = {prefix, path, -1, 0};
    dl_iterate_phdr(pm_find_object, &f);
    return f.at;
}

/* A wrapper library is loaded by libperfmark.so for the MPI the program
 * has. Preloaded by hand (LD_PRELOAD=.../libperfmark_mpi_mpich.so), it
 * takes no call: it exports no MPI name, and the libperfmark.so it brings
 * in comes after the program's MPI. Say so once, naming the MPI found. */
__attribute__((constructor)) static void pm_mpi_abi_preloaded(void)
{
    Dl_info self;
    const char *list = getenv("LD_PRELOAD");
    if (!list || !dladdr((void *)pm_mpi_abi_preloaded, &self) || !self.dli_fname)
        return;
    const char *mine = strrchr(self.dli_fname, '/') ? strrchr(self.dli_fname, '/') + 1
                                                    : self.dli_fname;
    if (!strstr(list, mine))
        return;
    struct pm_mpi_libs libs;
    pm_mpi_which(&libs);
    char found[512] = "no MPI library";
    if (libs.n > 0)
        snprintf(found, sizeof found, "%s (%s)%s", pm_mpi_abi_label(libs.lib[0].abi),
                 libs.lib[0].file, libs.n > 1 ? " and another MPI" : "");
    /* libperfmark.so's MPI entry points take the program's calls only when
     * it comes before the MPI in the search order. */
    int runtime = pm_position("libperfmark.so", NULL);
    int mpi = libs.n > 0 ? pm_position(NULL, libs.lib[0].path) : -1;
    char text[1024];
    if (runtime >= 0 && (mpi < 0 || runtime < mpi))
        snprintf(text, sizeof text, "%s was preloaded by hand: it is not needed, libperfmark.so "
                 "loads the MPI wrappers for the program's MPI itself (this program loads %s)",
                 mine, found);
    else
        snprintf(text, sizeof text, "%s was preloaded by hand, but it is loaded by "
                 "libperfmark.so, which must come first: preload libperfmark.so instead (this "
                 "program loads %s); MPI calls are not measured, processes and threads are, "
                 "one file per process", mine, found);
    pm_auto_mpi_note(text);
}
