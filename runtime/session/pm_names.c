#include "pm_names.h"
#include "pm_log.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Names live in chunks that never move, so readers need no lock. */
#define PM_CHUNK_BITS 12
#define PM_CHUNK_SIZE (1 << PM_CHUNK_BITS)
#define PM_MAX_CHUNKS 4096  /* 16M names */

static pthread_mutex_t pm_names_mutex = PTHREAD_MUTEX_INITIALIZER;
static const char **pm_chunks[PM_MAX_CHUNKS];
static unsigned char *pm_kind_chunks[PM_MAX_CHUNKS];  /* kind | PM_POLL_BIT */
#define PM_POLL_BIT 0x80

const char *const pm_kind_names[PM_KINDS] = {"user", "mpi", "omp"};

const char *pm_kind_name(enum pm_kind kind)
{
    return kind >= 0 && kind < PM_KINDS ? pm_kind_names[kind] : "";
}
static int32_t pm_count;
static int32_t *pm_hash;      /* open addressing: name id + 1, 0 = empty */
static uint32_t pm_hash_mask;
static int32_t pm_limit = PM_DEFAULT_MAX_REGIONS;
static int32_t pm_overflow_id = -1;

void pm_names_set_limit(int32_t limit) { pm_limit = limit > 0 ? limit : PM_DEFAULT_MAX_REGIONS; }
int32_t pm_names_limit(void) { return pm_limit; }

static uint32_t pm_fnv1a(const char *s, size_t n, enum pm_kind kind)
{
    uint32_t h = 2166136261u ^ (uint32_t)kind;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 16777619u;
    return h;
}

const char *pm_name_get(int32_t id)
{
    /* acquire: readers run without pm_names_mutex, beside pm_name_add */
    if (id < 0 || id >= pm_name_count())
        return "";
    return pm_chunks[id >> PM_CHUNK_BITS][id & (PM_CHUNK_SIZE - 1)];
}

enum pm_kind pm_name_kind(int32_t id)
{
    if (id < 0 || id >= pm_name_count())
        return PM_KIND_USER;
    return (enum pm_kind)(pm_kind_chunks[id >> PM_CHUNK_BITS][id & (PM_CHUNK_SIZE - 1)] &
                          ~PM_POLL_BIT);
}

int pm_name_is_poll(int32_t id)
{
    if (id < 0 || id >= pm_name_count())
        return 0;
    return (pm_kind_chunks[id >> PM_CHUNK_BITS][id & (PM_CHUNK_SIZE - 1)] & PM_POLL_BIT) != 0;
}

int32_t pm_name_count(void) { return __atomic_load_n(&pm_count, __ATOMIC_ACQUIRE); }

static int pm_hash_grow(void)
{
    uint32_t size = pm_hash_mask ? (pm_hash_mask + 1) * 2 : 1024;
    int32_t *table = calloc(size, sizeof *table);
    if (!table)
        return -1;
    for (int32_t id = 0; id < pm_count; id++) {
        const char *s = pm_name_get(id);
        uint32_t h = pm_fnv1a(s, strlen(s), pm_name_kind(id)) & (size - 1);
        while (table[h])
            h = (h + 1) & (size - 1);
        table[h] = id + 1;
    }
    free(pm_hash);
    pm_hash = table;
    pm_hash_mask = size - 1;
    return 0;
}

static int32_t pm_name_add(const char *name, size_t len, enum pm_kind kind, uint32_t slot)
{
    int32_t id = pm_count;
    if ((id >> PM_CHUNK_BITS) >= PM_MAX_CHUNKS)
        return -1;
    const char ***chunk = &pm_chunks[id >> PM_CHUNK_BITS];
    if (!*chunk && !(*chunk = calloc(PM_CHUNK_SIZE, sizeof **chunk)))
        return -1;
    unsigned char **kinds = &pm_kind_chunks[id >> PM_CHUNK_BITS];
    if (!*kinds && !(*kinds = calloc(PM_CHUNK_SIZE, 1)))
        return -1;
    (*kinds)[id & (PM_CHUNK_SIZE - 1)] = (unsigned char)kind;
    /* zero-padded to whole words for pm_streq */
    char *copy = calloc(1, (len + 8) & ~(size_t)7);
    if (!copy)
        return -1;
    memcpy(copy, name, len);
    (*chunk)[id & (PM_CHUNK_SIZE - 1)] = copy;
    pm_hash[slot] = id + 1;
    __atomic_store_n(&pm_count, id + 1, __ATOMIC_RELEASE);
    return id;
}

int32_t pm_name_intern(const char *name, const char **interned)
{
    return pm_name_intern_kind(name, PM_KIND_USER, interned);
}

/* Under pm_names_mutex. New names beyond the limit get the overflow id,
 * unless `always` (the overflow name itself). */
static int32_t pm_intern_locked(const char *name, size_t len, enum pm_kind kind, int always)
{
    if ((uint32_t)pm_count * 2 >= pm_hash_mask && pm_hash_grow() != 0)
        return -1;
    uint32_t h = pm_fnv1a(name, len, kind) & pm_hash_mask;
    for (;; h = (h + 1) & pm_hash_mask) {
        int32_t slot = pm_hash[h];
        if (!slot)
            break;
        const char *s = pm_name_get(slot - 1);
        if (strncmp(s, name, len) == 0 && s[len] == '\0' && pm_name_kind(slot - 1) == kind)
            return slot - 1;
    }
    if (pm_count - (pm_overflow_id >= 0) < pm_limit || always || pm_overflow_id < 0)
        return pm_name_add(name, len, kind, h);
    static int said;
    if (!said++)
        pm_msg(PM_MSG_ONCE, "more than %d distinct region names: '%.100s' and every later "
               "new name are counted in a region '" PM_OVERFLOW_NAME "' under the region "
               "open where they begin (PERFMARK_MAX_REGIONS raises the limit)",
               (int)pm_limit, name);
    return pm_overflow_id;
}

int32_t pm_name_intern_kind(const char *name, enum pm_kind kind, const char **interned)
{
    size_t len = strnlen(name, PM_NAME_MAX + 1);
    if (len > PM_NAME_MAX) {
        pm_msg(PM_MSG_NAME, "a region name longer than %d bytes was truncated ('%.40s...')",
               PM_NAME_MAX, name);
        len = PM_NAME_MAX;
    }
    pthread_mutex_lock(&pm_names_mutex);
    int32_t id = pm_intern_locked(name, len, kind, 0);
    pthread_mutex_unlock(&pm_names_mutex);
    if (id >= 0 && interned)
        *interned = pm_name_get(id);
    return id;
}

int32_t pm_name_intern_poll(const char *name, enum pm_kind kind)
{
    int32_t id = pm_name_intern_kind(name, kind, NULL);
    pthread_mutex_lock(&pm_names_mutex);
    if (id >= 0 && id != pm_overflow_id)
        pm_kind_chunks[id >> PM_CHUNK_BITS][id & (PM_CHUNK_SIZE - 1)] |= PM_POLL_BIT;
    pthread_mutex_unlock(&pm_names_mutex);
    return id;
}

int32_t pm_name_overflow(void)
{
    int32_t id = __atomic_load_n(&pm_overflow_id, __ATOMIC_ACQUIRE);
    if (id >= 0)
        return id;
    pthread_mutex_lock(&pm_names_mutex);
    if (pm_overflow_id < 0) {
        id = pm_intern_locked(PM_OVERFLOW_NAME, strlen(PM_OVERFLOW_NAME), PM_KIND_USER, 1);
        __atomic_store_n(&pm_overflow_id, id, __ATOMIC_RELEASE);
    }
    id = pm_overflow_id;
    pthread_mutex_unlock(&pm_names_mutex);
    return id;
}

void pm_names_lock(void) { pthread_mutex_lock(&pm_names_mutex); }
void pm_names_unlock(void) { pthread_mutex_unlock(&pm_names_mutex); }
