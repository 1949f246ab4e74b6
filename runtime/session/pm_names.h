/* pm_names — process-wide interning of region names to small integer ids.
 * Taken under a mutex, but only on a thread's first sight of a name: the
 * per-thread cache in pm_thread keeps the hot path lock-free. Interned
 * strings never move and are never freed. */
#ifndef PM_NAMES_H
#define PM_NAMES_H

#include <stdint.h>

/* What made a region: the user's markers or an automatic source. The kind
 * is part of a region's identity: a user region "MPI_Send" and the
 * automatic one are two regions. */
enum pm_kind { PM_KIND_USER = 0, PM_KIND_MPI, PM_KIND_OMP, PM_KINDS };
extern const char *const pm_kind_names[PM_KINDS];
const char *pm_kind_name(enum pm_kind kind);

/* Longer names are truncated (and a message says so). */
#define PM_NAME_MAX 1024

/* The id of `name` (truncated to PM_NAME_MAX bytes); -1 only if out of memory.
 * The interned copy is 8-byte aligned and zero-padded to whole words. */
int32_t pm_name_intern(const char *name, const char **interned);
int32_t pm_name_intern_kind(const char *name, enum pm_kind kind, const char **interned);
/* A name whose regions only poll or query (MPI_Test*, MPI_Iprobe, ...):
 * they never read counters (pm_thread.h, PM_MODE_POLL). Same identity as
 * the plain name of that kind. */
int32_t pm_name_intern_poll(const char *name, enum pm_kind kind);
enum pm_kind pm_name_kind(int32_t id);
int pm_name_is_poll(int32_t id);
const char *pm_name_get(int32_t id);
int32_t pm_name_count(void);
/* The "too many regions" policy (PERFMARK_MAX_REGIONS): at most `limit`
 * distinct names per process and region paths per thread; names and paths
 * beyond it are counted in a region PM_OVERFLOW_NAME under the region open
 * where they begin (said once; pm_thread.c, pm_node_insert). Memory stays
 * bounded whatever the program does. */
#define PM_DEFAULT_MAX_REGIONS 100000
#define PM_OVERFLOW_NAME "[other regions]"
void pm_names_set_limit(int32_t limit);
int32_t pm_names_limit(void);
/* The overflow region's name id (interned on first use). */
int32_t pm_name_overflow(void);
/* Fork handlers: keep the table consistent across fork(). */
void pm_names_lock(void);
void pm_names_unlock(void);

#endif
