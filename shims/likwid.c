/* LIKWID marker API → perfmark regions (libperfmark-likwid.so).
 *
 * A code instrumented with LIKWID_MARKER_* (likwid-marker.h, built with
 * -DLIKWID_PERFMON) links this library instead of -llikwid and its regions
 * become perfmark regions: likwid_markerStartRegion(tag) is
 * perfmark_region_begin(tag), likwid_markerStopRegion(tag) is
 * perfmark_region_end(tag). Signatures are LIKWID 5's (likwid.h).
 *
 * Differences from LIKWID, by design:
 * - perfmark regions nest by call path: "outer" started inside "main" is
 *   the region "main/outer"; LIKWID keeps tags flat.
 * - Init/ThreadInit/NextGroup/Close have nothing to do: perfmark starts with
 *   the process (under `perfmark run`), picks threads up on their first
 *   marker and writes its file at exit. Event groups are chosen with
 *   `perfmark run -e`, not LIKWID_EVENTS.
 * - likwid_markerGetRegion returns this thread's call count and accumulated
 *   time for the tag (kept here, per thread, from CLOCK_MONOTONIC), and no
 *   event values (*nr_events = 0): the counts are in the perfmark file.
 *   likwid_markerResetRegion zeroes those two numbers only; the perfmark file
 *   keeps every visit.
 * - Return values: 0 for any non-NULL tag, even when perfmark is not
 *   measuring or the call is unbalanced (perfmark reports that itself), so
 *   that a program checking them behaves as it did under LIKWID.
 *
 * The thread calls that marker-instrumented codes use beside the markers
 * behave as LIKWID's: likwid_getProcessorId is the CPU the calling thread
 * is bound to (where it runs now when bound to several);
 * likwid_pinThread(cpu) and likwid_pinProcess(cpu) bind the calling thread
 * (LIKWID's pinProcess is sched_setaffinity(0, ...): the calling thread,
 * inherited by the threads it creates afterwards), 1 on success and 0 on
 * failure. The binding goes through perfmark (runtime/place/pm_app_pin.h): hwloc,
 * and the thread's /threads binding in the file. */
#define _GNU_SOURCE
#include "perfmark.h"
#include "pm_app_pin.h"

/* Where LIKWID's own header is installed, compile against it: the compiler
 * then checks every definition below against LIKWID's declarations. */
#if defined(__has_include)
#if __has_include(<likwid.h>)
#include <likwid.h>
#endif
#endif

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PM_PUBLIC __attribute__((visibility("default")))

/* Per-thread tallies for likwid_markerGetRegion. A fixed table: a program
 * with more distinct tags on one thread still gets its regions measured,
 * only GetRegion reports zeros for the tags that did not fit. */
#define PM_LIKWID_TAGS 256

struct pm_likwid_tag {
    char *name;         /* strdup'ed: the caller's buffer may be reused */
    int count;
    int running;
    uint64_t start_ns;
    uint64_t total_ns;
};

static __thread struct pm_likwid_tag pm_likwid_tags[PM_LIKWID_TAGS];
static __thread int pm_likwid_ntags;

static uint64_t pm_likwid_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static struct pm_likwid_tag *pm_likwid_find(const char *tag, int add)
{
    for (int i = 0; i < pm_likwid_ntags; i++)
        if (strcmp(pm_likwid_tags[i].name, tag) == 0)
            return &pm_likwid_tags[i];
    if (!add || pm_likwid_ntags == PM_LIKWID_TAGS)
        return NULL;
    char *copy = strdup(tag);
    if (!copy)
        return NULL;
    struct pm_likwid_tag *t = &pm_likwid_tags[pm_likwid_ntags++];
    memset(t, 0, sizeof *t);
    t->name = copy;
    return t;
}

PM_PUBLIC void likwid_markerInit(void) {}
PM_PUBLIC void likwid_markerThreadInit(void) {}
PM_PUBLIC void likwid_markerNextGroup(void) {}
PM_PUBLIC void likwid_markerClose(void) {}

PM_PUBLIC int likwid_markerRegisterRegion(const char *regionTag)
{
    if (!regionTag)
        return -EINVAL;
    /* LIKWID registers to make the first start cheap; the perfmark
     * equivalent is interning the name, which the handle call does. */
    int saved = errno;
    (void)perfmark_region(regionTag);
    (void)pm_likwid_find(regionTag, 1);
    errno = saved;
    return 0;
}

PM_PUBLIC int likwid_markerStartRegion(const char *regionTag)
{
    if (!regionTag)
        return -EINVAL;
    int saved = errno;
    perfmark_region_begin(regionTag);
    struct pm_likwid_tag *t = pm_likwid_find(regionTag, 1);
    if (t) {
        t->running = 1;
        t->start_ns = pm_likwid_now();
    }
    errno = saved;
    return 0;
}

PM_PUBLIC int likwid_markerStopRegion(const char *regionTag)
{
    if (!regionTag)
        return -EINVAL;
    int saved = errno;
    uint64_t now = pm_likwid_now();
    perfmark_region_end(regionTag);
    struct pm_likwid_tag *t = pm_likwid_find(regionTag, 0);
    if (t && t->running) {
        t->running = 0;
        t->count++;
        t->total_ns += now - t->start_ns;
    }
    errno = saved;
    return 0;
}

PM_PUBLIC int likwid_markerResetRegion(const char *regionTag)
{
    if (!regionTag)
        return -EINVAL;
    struct pm_likwid_tag *t = pm_likwid_find(regionTag, 0);
    if (t) {
        t->count = 0;
        t->total_ns = 0;
    }
    return 0;
}

PM_PUBLIC void likwid_markerGetRegion(const char *regionTag, int *nr_events, double *events,
                                      double *time, int *count)
{
    (void)events;
    struct pm_likwid_tag *t = regionTag ? pm_likwid_find(regionTag, 0) : NULL;
    if (nr_events)
        *nr_events = 0;
    if (time)
        *time = t ? (double)t->total_ns * 1e-9 : 0.0;
    if (count)
        *count = t ? t->count : 0;
}

/* ---- threads and pinning ------------------------------------------------ */

extern __typeof__(pm_app_pin_self) pm_app_pin_self __attribute__((weak));

static int pm_likwid_pin(int cpu)
{
    int saved = errno, rc = -1;
    if (pm_app_pin_self) {
        rc = pm_app_pin_self(cpu);
    } else if (cpu >= 0 && cpu < CPU_SETSIZE) {  /* an older libperfmark: bind here */
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(cpu, &one);
        rc = pthread_setaffinity_np(pthread_self(), sizeof one, &one) == 0 ? 0 : -1;
    }
    errno = saved;
    return rc == 0 ? 1 : 0;  /* LIKWID's TRUE / FALSE */
}

PM_PUBLIC int likwid_pinThread(int processorId) { return pm_likwid_pin(processorId); }
PM_PUBLIC int likwid_pinProcess(int processorId) { return pm_likwid_pin(processorId); }

PM_PUBLIC int likwid_getProcessorId(void)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0 || CPU_COUNT(&set) != 1)
        return sched_getcpu();
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &set))
            return c;
    return -1;
}
