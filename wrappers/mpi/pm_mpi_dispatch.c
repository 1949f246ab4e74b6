/* The MPI dispatcher, in libperfmark.so, with no MPI: the target of every
 * MPI symbol libperfmark.so exports (pm_mpi_stubs.S, generated), found at
 * the symbol's first call.
 *
 * libperfmark.so is preloaded into processes of every kind: programs on
 * Open MPI, on the MPICH family, on no MPI at all, and launchers. So it
 * links no MPI; its MPI symbols are stubs that jump through a slot each.
 * The first call of any of them (MPI is loaded by then: the caller links
 * it) decides once for the process:
 *
 *   - which MPI libraries are loaded (pm_mpi_which.h), their ABI, and what
 *     PERFMARK_MPI (auto|openmpi|mpich|none) says;
 *   - with one MPI of an ABI perfmark has wrappers for, the wrapper library
 *     built for it, libperfmark_mpi_<abi>.so beside libperfmark.so, is
 *     loaded and gives the wrapper of every slot (pm_mpi_abi.h);
 *   - otherwise (no wrappers for that MPI, two MPIs, an unknown one, none
 *     asked for, a process perfmark does not measure) every slot goes to
 *     the MPI's own function, as if perfmark were not there, and the
 *     runtime says once why MPI calls are not measured. The process is
 *     still measured and writes its own file.
 *
 * After that a call costs one indirect jump more than a direct one. */
#define _GNU_SOURCE
#include "pm_auto.h"
#include "pm_mpi_abi.h"
#include "job/pm_mpi_which.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern void *pm_mpi_slots[];  /* pm_mpi_stubs.S */
void *pm_mpi_resolve(int slot);

static pthread_once_t pm_decided = PTHREAD_ONCE_INIT;
static struct pm_mpi_wrappers pm_wrappers;  /* count 0: pass every call on */
static struct pm_mpi_libs pm_libs;

/* This object's own start, to skip its own stubs when looking for the
 * MPI's functions. */
static int pm_is_ours(const void *p)
{
    Dl_info mine, theirs;
    return dladdr((void *)pm_mpi_resolve, &mine) && dladdr(p, &theirs) &&
           mine.dli_fbase == theirs.dli_fbase;
}

/* What the program would call without perfmark: the next definition after
 * libperfmark.so, else (an MPI opened RTLD_LOCAL, as Python modules are)
 * the one in the MPI library itself. */
static void *pm_mpi_next(const char *name)
{
    int err = errno;
    void *p = dlsym(RTLD_NEXT, name);
    if (p && pm_is_ours(p))
        p = NULL;
    for (int i = 0; !p && i < pm_libs.n && i < PM_MPI_LIBS_MAX; i++) {
        void *h = dlopen(pm_libs.lib[i].path, RTLD_LAZY | RTLD_NOLOAD);
        if (h) {
            p = dlsym(h, name);
            dlclose(h);
        }
    }
    if (!p) {
        void *q = dlsym(RTLD_DEFAULT, name);
        p = q && !pm_is_ours(q) ? q : NULL;
    }
    errno = err;
    return p;
}

static const struct pm_mpi_host pm_host = {.next = pm_mpi_next};

/* libperfmark_mpi_<abi>.so beside this library, else by the loader's path. */
static void *pm_open_wrappers(const char *abi, char *err, size_t errlen)
{
    char path[4096];
    Dl_info self;
    void *lib = NULL;
    if (getenv("PERFMARK_MPI_WRAPPERS_DIR"))  /* tests: an install without them */
        snprintf(path, sizeof path, "%s/libperfmark_mpi_%s.so",
                 getenv("PERFMARK_MPI_WRAPPERS_DIR"), abi);
    else if (dladdr((void *)pm_open_wrappers, &self) && strrchr(self.dli_fname, '/'))
        snprintf(path, sizeof path, "%.*s/libperfmark_mpi_%s.so",
                 (int)(strrchr(self.dli_fname, '/') - self.dli_fname), self.dli_fname, abi);
    else
        snprintf(path, sizeof path, "libperfmark_mpi_%s.so", abi);
    lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib)
        snprintf(err, errlen, "%s", dlerror());
    return lib;
}

static int pm_attach(const char *abi, const struct pm_mpi_lib *mpi, char *err, size_t errlen)
{
    /* The wrappers call PMPI_* by name: an MPI opened RTLD_LOCAL (a Python
     * module's) must be in the global scope for them, as Open MPI's own
     * components need it to be anyway. */
    dlopen(mpi->path, RTLD_LAZY | RTLD_NOLOAD | RTLD_GLOBAL);
    void *lib = pm_open_wrappers(abi, err, errlen);
    if (!lib)
        return -1;
    pm_mpi_abi_attach_fn attach = (pm_mpi_abi_attach_fn)dlsym(lib, PM_MPI_ABI_ENTRY);
    struct pm_mpi_wrappers w = {0};
    if (!attach || attach(PM_MPI_ABI_VERSION, pm_mpi_stub_key, &pm_host, &w) != 0 ||
        w.count != pm_mpi_stub_count) {
        snprintf(err, errlen, "libperfmark_mpi_%s.so is from another build of perfmark", abi);
        dlclose(lib);
        return -1;
    }
    pm_wrappers = w;  /* the library stays loaded for the process's life */
    return 0;
}

/* One sentence on what was found, for the messages. */
static void pm_describe(char *out, size_t len)
{
    size_t at = 0;
    for (int i = 0; i < pm_libs.n && i < PM_MPI_LIBS_MAX && at < len; i++) {
        int n = snprintf(out + at, len - at, "%s%s (%s)", i ? " and " : "",
                         pm_mpi_abi_label(pm_libs.lib[i].abi), pm_libs.lib[i].file);
        at += n > 0 ? (size_t)n : 0;
    }
    if (pm_libs.n == 0)
        snprintf(out, len, "no MPI library");
}

static void pm_decide(void)
{
    char found[1024], problem[2048] = "", err[1024] = "";
    int err_saved = errno;
    if (!pm_auto_may_measure()) {
        errno = err_saved;
        return;  /* not measured here: every call goes straight through */
    }
    pm_mpi_which(&pm_libs);
    pm_describe(found, sizeof found);
    const char *asked = getenv("PERFMARK_MPI");
    int want = asked && *asked && strcmp(asked, "auto") != 0 ? pm_mpi_abi_from_name(asked) : -1;
    const char *abi = NULL;
    if (asked && strcmp(asked, "none") == 0) {
        snprintf(problem, sizeof problem, "PERFMARK_MPI=none: MPI calls are not measured (this "
                 "program loads %s); processes and threads are, one file per process", found);
    } else if (asked && *asked && strcmp(asked, "auto") != 0 && want < 0) {
        snprintf(problem, sizeof problem, "PERFMARK_MPI=%s is not one of auto, openmpi, mpich, "
                 "none: MPI calls are not measured (this program loads %s); processes and "
                 "threads are, one file per process", asked, found);
    } else if (pm_libs.n != 1) {
        snprintf(problem, sizeof problem, "this process loads %s, so perfmark cannot tell which "
                 "MPI the program calls: MPI calls are passed on unmeasured; processes and "
                 "threads are measured, one file per process", found);
    } else {
        enum pm_mpi_abi have = pm_libs.lib[0].abi;
        if (have == PM_MPI_UNKNOWN && want > 0) {
            have = (enum pm_mpi_abi)want;  /* the user knows its ABI */
        } else if (want > 0 && (enum pm_mpi_abi)want != have) {
            snprintf(problem, sizeof problem, "PERFMARK_MPI=%s, but this program loads %s: "
                     "perfmark measures it with its %s wrappers instead", asked, found,
                     pm_mpi_abi_name(have) ? pm_mpi_abi_name(have) : "?");
        }
        if (have == PM_MPI_UNKNOWN || have == PM_MPI_STANDARD) {
            snprintf(problem, sizeof problem, "this program loads %s, for which perfmark has no "
                     "MPI wrappers%s: MPI calls are passed on unmeasured; processes and threads "
                     "are measured, one file per process", found,
                     have == PM_MPI_UNKNOWN ? " (PERFMARK_MPI=openmpi or mpich names its ABI "
                                              "if it has one of those)" : " yet");
        } else if (pm_attach(pm_mpi_abi_name(have), &pm_libs.lib[0], err, sizeof err) != 0) {
            snprintf(problem, sizeof problem, "this program loads %s, but perfmark's wrappers "
                     "for it cannot be loaded (%s): MPI calls are passed on unmeasured; "
                     "processes and threads are measured, one file per process", found, err);
        } else {
            abi = pm_wrappers.abi;
        }
    }
    pm_auto_mpi_library(abi, found, problem[0] ? problem : NULL);
    errno = err_saved;
}

/* The lazy entry of every stub calls this with the symbol's slot: the
 * function the call goes to, stored in the slot for the next calls. */
void *pm_mpi_resolve(int slot)
{
    int err = errno;
    pthread_once(&pm_decided, pm_decide);
    const void *to = slot < pm_wrappers.count ? pm_wrappers.fns[slot] : NULL;
    if (!to)
        to = pm_mpi_next(pm_mpi_stub_names[slot]);
    if (!to) {
        /* Nothing defines it (a Fortran symbol without the MPI's Fortran
         * library): there is nothing to call and nothing sensible to return. */
        fprintf(stderr, "perfmark: %s was called, but no MPI library in this process defines "
                "it: nothing to call, aborting\n", pm_mpi_stub_names[slot]);
        abort();
    }
    __atomic_store_n(&pm_mpi_slots[slot], (void *)to, __ATOMIC_RELEASE);
    errno = err;
    return (void *)to;
}
