/* Loading the HDF5 writer (pm_writer.h) from the directory this runtime
 * was loaded from, when a file needs it, on the thread that writes the file.
 *
 * Debian's HDF5 for a parallel file is built on one MPI, so there is one
 * writer per MPI ABI: libperfmark_writer.so on Open MPI's parallel HDF5,
 * libperfmark_writer_mpich.so on MPICH's. A process loads the one of the MPI
 * it has (Open MPI's when it has none): one MPI's HDF5 beside another MPI
 * would call that MPI's functions with its own MPI's handles at its first
 * use, an abort in the middle of the write. */
#define _GNU_SOURCE
#include "job/pm_mpi_which.h"
#include "pm_beside.h"
#include "pm_writer.h"

#include <dlfcn.h>
#include <link.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

/* Linked in (unit tests and perfmark-attach build the writer's sources
 * into their program): used directly, nothing is loaded. */
extern int pm_writer_attach(uint64_t key, struct pm_writer_entry *out)
    __attribute__((weak, visibility("hidden")));

static pthread_mutex_t pm_load_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pm_load_done = PTHREAD_COND_INITIALIZER;

/* One writer library per MPI ABI: the first is the one of a process with
 * no MPI. */
static struct pm_writer_slot {
    enum pm_mpi_abi abi;
    const char *file;
    enum { PM_W_IDLE, PM_W_LOADING, PM_W_READY, PM_W_FAILED } state;
    struct pm_writer_entry entry;
    char error[512];
} pm_slots[] = {
    {PM_MPI_OPENMPI, "libperfmark_writer.so", PM_W_IDLE, {0}, ""},
    {PM_MPI_MPICH, "libperfmark_writer_mpich.so", PM_W_IDLE, {0}, ""},
};
#define PM_SLOTS (int)(sizeof pm_slots / sizeof pm_slots[0])

/* An MPI of another ABI is loaded here: this writer must not be. */
static int pm_other_mpi(const struct pm_writer_slot *w, char *err, size_t errlen)
{
    struct pm_mpi_libs libs;
    pm_mpi_which(&libs);
    for (int i = 0; i < libs.n && i < PM_MPI_LIBS_MAX; i++)
        if (libs.lib[i].abi != w->abi) {
            snprintf(err, errlen, "%s uses %s's HDF5, which cannot be loaded into a program on "
                     "%s (%s)", w->file, pm_mpi_abi_label(w->abi),
                     pm_mpi_abi_label(libs.lib[i].abi), libs.lib[i].file);
            return 1;
        }
    return 0;
}

/* One loader at a time (state LOADING); the lock is not held while loading. */
static void pm_load(struct pm_writer_slot *w)
{
    struct pm_writer_entry entry = {0};
    char err[sizeof w->error] = "";
    pm_writer_attach_fn attach = pm_writer_attach;
    if (!attach && !pm_other_mpi(w, err, sizeof err)) {
        void *lib = pm_dlopen_beside(w->file, err, sizeof err);
        if (lib && !(attach = (pm_writer_attach_fn)dlsym(lib, PM_WRITER_ENTRY)))
            snprintf(err, sizeof err, "%s has no %s", w->file, PM_WRITER_ENTRY);
        else if (lib)
            err[0] = '\0';
    }
    if (attach && attach(pm_writer_key(), &entry) != 0)
        snprintf(err, sizeof err, "the HDF5 writer is from another build of perfmark");
    pthread_mutex_lock(&pm_load_lock);
    if (!err[0]) {
        w->entry = entry;
        w->state = PM_W_READY;
    } else {
        snprintf(w->error, sizeof w->error, "%s", err);
        w->state = PM_W_FAILED;
    }
    pthread_cond_broadcast(&pm_load_done);
    pthread_mutex_unlock(&pm_load_lock);
}

static const struct pm_writer_entry *pm_slot_lib(struct pm_writer_slot *w, char *err,
                                                 size_t errlen)
{
    pthread_mutex_lock(&pm_load_lock);
    int load = w->state == PM_W_IDLE;
    if (load)
        w->state = PM_W_LOADING;
    pthread_mutex_unlock(&pm_load_lock);
    if (load) {
        int saved = errno;
        pm_load(w);
        errno = saved;
    }
    pthread_mutex_lock(&pm_load_lock);
    while (w->state == PM_W_LOADING)
        pthread_cond_wait(&pm_load_done, &pm_load_lock);
    int ready = w->state == PM_W_READY;
    if (!ready)
        snprintf(err, errlen, "cannot load perfmark's HDF5 writer, %s, which belongs beside "
                 "libperfmark.so: %s", w->file, w->error);
    pthread_mutex_unlock(&pm_load_lock);
    return ready ? &w->entry : NULL;
}

static struct pm_writer_slot *pm_slot_for(enum pm_mpi_abi abi)
{
    for (int i = 0; i < PM_SLOTS; i++)
        if (pm_slots[i].abi == abi)
            return &pm_slots[i];
    return NULL;
}

const struct pm_writer_entry *pm_writer_lib(char *err, size_t errlen)
{
    /* The writer of the MPI this process has; with none, the first. */
    struct pm_mpi_libs libs;
    pm_mpi_which(&libs);
    struct pm_writer_slot *w = libs.n ? pm_slot_for(libs.lib[0].abi) : &pm_slots[0];
    if (!w) {
        snprintf(err, errlen, "perfmark has no HDF5 writer for %s (%s)",
                 pm_mpi_abi_label(libs.lib[0].abi), libs.lib[0].file);
        return NULL;
    }
    return pm_slot_lib(w, err, errlen);
}

const struct pm_writer_entry *pm_writer_lib_for(const char *abi, char *err, size_t errlen)
{
    int which = pm_mpi_abi_from_name(abi);
    struct pm_writer_slot *w = which < 0 ? NULL : pm_slot_for((enum pm_mpi_abi)which);
    if (!w) {
        snprintf(err, errlen, "perfmark has no parallel HDF5 writer for %s",
                 abi ? abi : "this MPI");
        return NULL;
    }
    return pm_slot_lib(w, err, errlen);
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
    for (int i = 0; i < PM_SLOTS; i++)
        while (pm_slots[i].state == PM_W_LOADING &&
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
    for (int i = 0; i < PM_SLOTS; i++)
        if (pm_slots[i].state == PM_W_LOADING)
            pm_slots[i].state = PM_W_IDLE;
}
