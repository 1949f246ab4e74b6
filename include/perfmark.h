/*
 * perfmark.h — region markers for the perfmark measurement runtime.
 *
 * Mark the parts of your program you want measured:
 *
 *     #include <perfmark.h>
 *     PERFMARK_REGION_BEGIN("solve");
 *     ...
 *     PERFMARK_REGION_END("solve");
 *
 * Link with -lperfmark. Regions nest: a region's identity is its call path
 * ("main/solve/halo"), so the same name under two parents is two regions.
 * Every thread keeps its own region stack; a thread perfmark has never seen
 * is picked up on its first marker call.
 *
 * Run the program under `perfmark run -- ./app` (or preload libperfmark.so,
 * which is a request to measure as PERFMARK_ENABLE=1 is) to measure it. Without that the markers do nothing
 * and cost a few nanoseconds; compile with -DPERFMARK_DISABLE and every form
 * of the API below becomes an inline no-op with the same signature (the
 * functions return -1, "nothing recorded"; perfmark_region() a negative
 * handle; perfmark_active() 0): the program then needs no libperfmark at
 * all, to link or to run.
 *
 * Error contract (as in hwloc): functions return 0 on success and -1 when
 * perfmark is inactive or the call was unbalanced. A marker never aborts,
 * never blocks on I/O and never changes errno. Problems such as an end
 * without a begin are reported on stderr (the first 5 of each kind, then a
 * count), recorded in the output file, and flag the region UNBALANCED.
 */
#ifndef PERFMARK_H
#define PERFMARK_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef int32_t perfmark_region_t;

#ifndef PERFMARK_DISABLE

/* Enter / leave the region `name` on the calling thread.
 * `name` is copied on first sight; it may be any NUL-terminated byte string
 * (UTF-8 welcome, empty allowed; past 1024 bytes it is cut, with a message).
 * end() must name the innermost open region. An end() naming no open region
 * is ignored; one naming an outer open region closes the regions inside it
 * (flagged UNBALANCED) and then that region. Both return -1. */
int perfmark_region_begin(const char *name);
int perfmark_region_end(const char *name);

/* Handle API: the fastest path. Resolve the name once, then enter and exit
 * by handle. Handles are process-wide and stay valid until exit. Returns a
 * negative value when perfmark is inactive; enter/exit accept it and do
 * nothing. */
perfmark_region_t perfmark_region(const char *name);
int perfmark_region_enter(perfmark_region_t region);
int perfmark_region_exit(perfmark_region_t region);

/* 1 when this process is being measured, 0 otherwise. Like a marker, it
 * starts measuring a process perfmark measures from its first marker call
 * (and picks up the calling thread). */
int perfmark_active(void);

#define PERFMARK_REGION_BEGIN(name) ((void)perfmark_region_begin(name))
#define PERFMARK_REGION_END(name) ((void)perfmark_region_end(name))

#else /* PERFMARK_DISABLE: the same API, doing nothing, needing nothing */

static inline int perfmark_region_begin(const char *name) { (void)name; return -1; }
static inline int perfmark_region_end(const char *name) { (void)name; return -1; }
static inline perfmark_region_t perfmark_region(const char *name) { (void)name; return -1; }
static inline int perfmark_region_enter(perfmark_region_t region) { (void)region; return -1; }
static inline int perfmark_region_exit(perfmark_region_t region) { (void)region; return -1; }
static inline int perfmark_active(void) { return 0; }

#define PERFMARK_REGION_BEGIN(name) ((void)0)
#define PERFMARK_REGION_END(name) ((void)0)

#endif /* PERFMARK_DISABLE */

#ifdef __cplusplus
}
#endif

#endif /* PERFMARK_H */
