/* Loading the HDF5 writer (pm_writer.h): libperfmark_writer.so from the
 * directory this runtime was loaded from, when a file needs it, on the
 * thread that writes the file. */
#define _GNU_SOURCE
#include "job/pm_mpi_which.h"
#include "pm_writer.h"

#include <dlfcn.h>
#include <link.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#ifndef PM_WRITER_MPI_ABI
#define PM_WRITER_MPI_ABI "openmpi"  /* the MPI of the HDF5 it links (CMake says) */
#endif

/* Linked in (unit tests and perfmark-attach build the writer's sources
 * into their program): used directly, nothing is loaded. */
extern int pm_writer_attach(uint64_t key, struct pm_writer_entry *out)
    __attribute__((weak, visibility("hidden")));

static pthread_mutex_t pm_load_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pm_load_done = PTHREAD_COND_INITIALIZER;
static enum { PM_W_IDLE, PM_W_LOADING, PM_W_READY, PM_W_FAILED } pm_load_state;
static struct pm_writer_entry pm_entry;
static char pm_load_error[512];

/* `dir`/libperfmark_writer.so, for a library path `lib` ("" dir: none). */
static int pm_beside(const char *lib, char *out, size_t len)
{
    const char *slash = lib ? strrchr(lib, '/') : NULL;
    if (!slash)
        return -1;
    int n = snprintf(out, len, "%.*s/libperfmark_writer.so", (int)(slash - lib), lib);
    return n > 0 && (size_t)n < len ? 0 : -1;
}

struct pm_search {
    char path[4096];
    void *lib;
};

/* Beside another libperfmark.so of this process (the one the program
 * was linked with, when a copy of the runtime was preloaded alone). */
static int pm_beside_any(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct pm_search *s = arg;
    const char *base = info->dlpi_name ? strrchr(info->dlpi_name, '/') : NULL;
    if (s->lib || !base || strncmp(base + 1, "libperfmark.so", 14) != 0)
        return 0;
    if (pm_beside(info->dlpi_name, s->path, sizeof s->path) == 0)
        s->lib = dlopen(s->path, RTLD_NOW | RTLD_LOCAL);
    return s->lib != NULL;
}

/* The writer: beside this runtime (an install, or the build tree), else
 * beside any other libperfmark.so loaded here, else wherever the dynamic
 * loader finds it (LD_LIBRARY_PATH, ld.so.conf). */
static void *pm_open_writer(char *err, size_t errlen)
{
    struct pm_search s = {"", NULL};
    Dl_info self;
    if (dladdr((void *)pm_open_writer, &self) && pm_beside(self.dli_fname, s.path, sizeof s.path) == 0)
        s.lib = dlopen(s.path, RTLD_NOW | RTLD_LOCAL);
    if (!s.lib) {
        snprintf(err, errlen, "%s", s.path[0] ? dlerror() : "libperfmark.so's directory unknown");
        dl_iterate_phdr(pm_beside_any, &s);
    }
    if (!s.lib)
        s.lib = dlopen("libperfmark_writer.so", RTLD_NOW | RTLD_LOCAL);
    return s.lib;
}

/* The library links one MPI's parallel HDF5 (PM_WRITER_MPI_ABI). Loaded
 * beside another MPI, its HDF5 would call that MPI's functions with its
 * own MPI's handles at its first use: an abort, in the middle of the
 * write. So in a process with another MPI it is never loaded. */
static int pm_other_mpi(char *err, size_t errlen)
{
    struct pm_mpi_libs libs;
    pm_mpi_which(&libs);
    for (int i = 0; i < libs.n && i < PM_MPI_LIBS_MAX; i++) {
        const char *abi = pm_mpi_abi_name(libs.lib[i].abi);
        if (!abi || strcmp(abi, PM_WRITER_MPI_ABI) != 0) {
            snprintf(err, errlen, "libperfmark_writer.so uses %s's HDF5, which cannot be loaded "
                     "into a program on %s (%s)",
                     pm_mpi_abi_label((enum pm_mpi_abi)pm_mpi_abi_from_name(PM_WRITER_MPI_ABI)),
                     pm_mpi_abi_label(libs.lib[i].abi), libs.lib[i].file);
            return 1;
        }
    }
    return 0;
}

/* One loader at a time (state LOADING); the lock is not held while loading. */
static void pm_load(void)
{
    struct pm_writer_entry entry = {0};
    char err[sizeof pm_load_error] = "";
    pm_writer_attach_fn attach = pm_writer_attach;
    if (!attach && !pm_other_mpi(err, sizeof err)) {
        void *lib = pm_open_writer(err, sizeof err);
        if (lib && !(attach = (pm_writer_attach_fn)dlsym(lib, PM_WRITER_ENTRY)))
            snprintf(err, sizeof err, "libperfmark_writer.so has no %s", PM_WRITER_ENTRY);
        else if (lib)
            err[0] = '\0';
    }
    if (attach && attach(pm_writer_key(), &entry) != 0)
        snprintf(err, sizeof err, "the HDF5 writer is from another build of perfmark");
    pthread_mutex_lock(&pm_load_lock);
    if (!err[0]) {
        pm_entry = entry;
        pm_load_state = PM_W_READY;
    } else {
        snprintf(pm_load_error, sizeof pm_load_error, "%s", err);
        pm_load_state = PM_W_FAILED;
    }
    pthread_cond_broadcast(&pm_load_done);
    pthread_mutex_unlock(&pm_load_lock);
}

const struct pm_writer_entry *pm_writer_lib(char *err, size_t errlen)
{
    pthread_mutex_lock(&pm_load_lock);
    int load = pm_load_state == PM_W_IDLE;
    if (load)
        pm_load_state = PM_W_LOADING;
    pthread_mutex_unlock(&pm_load_lock);
    if (load) {
        int saved = errno;
        pm_load();
        errno = saved;
    }
    pthread_mutex_lock(&pm_load_lock);
    while (pm_load_state == PM_W_LOADING)
        pthread_cond_wait(&pm_load_done, &pm_load_lock);
    int ready = pm_load_state == PM_W_READY;
    if (!ready)
        snprintf(err, errlen, "cannot load perfmark's HDF5 writer, libperfmark_writer.so, "
                 "which belongs beside libperfmark.so: %s", pm_load_error);
    pthread_mutex_unlock(&pm_load_lock);
    return ready ? &pm_entry : NULL;
}

const struct pm_writer_entry *pm_writer_lib_for(const char *abi, char *err, size_t errlen)
{
    if (!abi || strcmp(abi, PM_WRITER_MPI_ABI) != 0) {
        snprintf(err, errlen, "perfmark's parallel HDF5 writer is built for %s and this job "
                 "runs on %s", PM_WRITER_MPI_ABI, abi ? abi : "another MPI");
        return NULL;
    }
    return pm_writer_lib(err, errlen);
}

int pm_writer_large_image(const struct pm_h5model *m, void **image, size_t *len, char *err,
                          size_t errlen)
{
    const struct pm_writer_entry *w = pm_writer_lib(err, errlen);
    return w ? w->image(m, image, len, err, errlen) : -1;
}

void pm_writer_before_fork(void)
{
    /* A child must not inherit a library half mapped by a loading thread
     * (its exit would walk the loader's list through it): let the load
     * finish first. Bounded, in case the fork comes from code that holds
     * the dynamic loader's own lock (a library constructor). */
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 2;
    pthread_mutex_lock(&pm_load_lock);
    while (pm_load_state == PM_W_LOADING &&
           pthread_cond_timedwait(&pm_load_done, &pm_load_lock, &until) == 0)
        ;
    pthread_mutex_unlock(&pm_load_lock);
}

void pm_writer_after_fork(void)
{
    /* A load under way in the parent is lost with its thread: load again
     * when the child needs it. */
    pthread_mutex_init(&pm_load_lock, NULL);
    pthread_cond_init(&pm_load_done, NULL);
    if (pm_load_state == PM_W_LOADING)
        pm_load_state = PM_W_IDLE;
}
