/* Loading the HDF5 writer (pm_writer.h): libperfmark_writer.so from the
 * directory this runtime was loaded from, on a thread of its own. */
#define _GNU_SOURCE
#include "pm_writer.h"
#include "pm_counterset.h"
#include "pm_log.h"
#include "pm_pin.h"

#include <dlfcn.h>
#include <link.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

/* Linked in (unit tests that build the runtime from its sources with
 * pm_h5out.c): used directly, nothing is loaded. */
extern int pm_writer_attach(const struct pm_writer_host *host, struct pm_writer_entry *out)
    __attribute__((weak, visibility("hidden")));

static pthread_mutex_t pm_load_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pm_load_done = PTHREAD_COND_INITIALIZER;
/* The writer is loaded as soon as a process starts measuring. Loaded 500 ms
 * later, as before, its CPU was taken from the computing ranks instead, or,
 * in a run shorter than that, added serially at MPI_Finalize. A 2-rank MPI
 * hello under -e none, 2 vCPUs (2026-11-27): MPI_Init ~8 ms longer (its own
 * dlopens wait behind ours), MPI_Finalize ~17 ms shorter; hpcc 789 -> 760 ms.
 * The machine's topology is not loaded here: hwloc dlopens its plugins
 * (libxml2 and ICU, X11, OpenCL), and doing that on this thread while a
 * PAPI program ran PAPI_library_init corrupted that program's heap
 * ("malloc(): corrupted top size"): nearly every run when both happened at
 * start, 5 of 8 runs of a program that initialised PAPI 496 ms after start
 * when the topology loaded at 500 ms (the mechanism is not known). Placement
 * is read when the file is written (pm_pin_place: sysfs, or hwloc where that
 * declines), on the writing thread. */
static enum { PM_W_IDLE, PM_W_LOADING, PM_W_READY, PM_W_FAILED } pm_load_state;
static struct pm_writer_entry pm_entry;
static char pm_load_error[512];

static const struct pm_writer_host pm_host = {
    .version = PM_WRITER_ABI,
    .name_get = pm_name_get,
    .name_kind = pm_name_kind,
    .kind_name = pm_kind_name,
    .msg_count = pm_msg_count,
    .msg_get = pm_msg_get,
    .pin_place = pm_pin_place,
    .td_rdpmc_used = pm_counterset_td_rdpmc_used,
};

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

/* Under pm_load_lock is not needed: one loader at a time (state LOADING). */
static void pm_load(void)
{
    struct pm_writer_entry entry = {0};
    char err[sizeof pm_load_error] = "";
    pm_writer_attach_fn attach = pm_writer_attach;
    if (!attach) {
        void *lib = pm_open_writer(err, sizeof err);
        if (lib && !(attach = (pm_writer_attach_fn)dlsym(lib, PM_WRITER_ENTRY)))
            snprintf(err, sizeof err, "libperfmark_writer.so has no %s", PM_WRITER_ENTRY);
        else if (lib)
            err[0] = '\0';
    }
    if (attach && attach(&pm_host, &entry) != 0)
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

static void *pm_load_thread(void *arg)
{
    (void)arg;
    pm_load();
    return NULL;
}

/* PAPI's own library in the process. Its PAPI_library_init, run while the
 * writer's libraries load on our thread, ended in "malloc(): corrupted top
 * size" in ~0.6 % of runs with the CPUs busy (6 of ~950; a PAPI high-level
 * program initialising PAPI at its first region, 2026-11-27), and in none
 * of 1000 with the load deferred to the file's writing. The mechanism is not
 * known (the core shows only PAPI's thread, reading a file). There the
 * writer loads when the file is written, serially (~10 ms). */
static int pm_is_papi(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size, (void)arg;
    const char *base = info->dlpi_name ? strrchr(info->dlpi_name, '/') : NULL;
    return base && strncmp(base + 1, "libpapi.so", 10) == 0;
}

static void pm_writer_start(void)
{
    pthread_mutex_lock(&pm_load_lock);
    int start = pm_load_state == PM_W_IDLE;
    if (start)
        pm_load_state = PM_W_LOADING;
    pthread_mutex_unlock(&pm_load_lock);
    if (!start)
        return;
    int saved = errno;
    pthread_t t;
    pthread_attr_t attr;
    int ok = pthread_attr_init(&attr) == 0;
    if (ok) {
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        ok = pthread_create(&t, &attr, pm_load_thread, NULL) == 0;
        pthread_attr_destroy(&attr);
    }
    if (!ok)
        pm_load();  /* no thread to spare: load now */
    errno = saved;
}

void pm_writer_preload(void)
{
    /* Only before any load: the loaded objects are not walked while our
     * own load may be adding to them (the caller's second call). */
    pthread_mutex_lock(&pm_load_lock);
    int idle = pm_load_state == PM_W_IDLE;
    pthread_mutex_unlock(&pm_load_lock);
    if (!idle || dl_iterate_phdr(pm_is_papi, NULL))
        return;  /* under way, or loaded by pm_writer_ready when the file is written */
    pm_writer_start();
}

/* The writer, loaded (waiting for the load under way), or NULL with the
 * reason in pm_load_error. */
static const struct pm_writer_entry *pm_writer_ready(void)
{
    pm_writer_start();
    pthread_mutex_lock(&pm_load_lock);
    while (pm_load_state == PM_W_LOADING)
        pthread_cond_wait(&pm_load_done, &pm_load_lock);
    int ready = pm_load_state == PM_W_READY;
    pthread_mutex_unlock(&pm_load_lock);
    return ready ? &pm_entry : NULL;
}

int pm_writer_image(const struct pm_output *o, void **image, size_t *len, char *err,
                    size_t errlen)
{
    const struct pm_writer_entry *w = pm_writer_ready();
    if (!w) {
        snprintf(err, errlen, "cannot load perfmark's HDF5 writer, libperfmark_writer.so, "
                 "which belongs beside libperfmark.so (%s)", pm_load_error);
        return -1;
    }
    return w->image(o, image, len, err, errlen);
}

pm_writer_job_fn pm_writer_job(void)
{
    const struct pm_writer_entry *w = pm_writer_ready();
    return w ? w->job : NULL;
}

void pm_writer_before_fork(void)
{
    /* A child must not inherit a library half mapped by the loading thread
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

void pm_writer_wait(void) { (void)pm_writer_ready(); }

void pm_writer_after_fork(void)
{
    /* A load under way in the parent is lost with its thread: load again
     * when the child needs it. */
    pthread_mutex_init(&pm_load_lock, NULL);
    pthread_cond_init(&pm_load_done, NULL);
    if (pm_load_state == PM_W_LOADING)
        pm_load_state = PM_W_IDLE;
}
