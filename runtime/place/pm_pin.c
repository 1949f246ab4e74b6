#define _GNU_SOURCE
#include "pm_pin.h"

#include "pm_log.h"

#include <errno.h>
#include <hwloc.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* One topology per process, loaded on first need (pinning, or placement at
 * write time): loading reads sysfs for a few milliseconds. */
static pthread_mutex_t pm_pin_lock = PTHREAD_MUTEX_INITIALIZER;
static hwloc_topology_t pm_topo;
static int pm_topo_state;  /* 0 not tried, 1 loaded, -1 failed */
static struct pm_place_map *pm_map;  /* placement from sysfs, when hwloc is not loaded */
static int pm_map_state;             /* 0 not tried, 1 read, -1 hwloc must answer */

static enum pm_pin_mode pm_mode;
static int pm_local_rank = -1, pm_local_size = -1;
static int pm_waiting;              /* ranks/threads mode, local rank not known yet */
static hwloc_bitmap_t pm_share;     /* this rank's PUs, NULL until bound */
static int *pm_share_pus;           /* the share's PU OS indices, in order */
static int pm_share_n;
static int pm_share_cores, pm_total_cores;
static int pm_max_index = -1;       /* highest thread number pinned */
static char pm_failure[160];        /* why binding did not happen, "" if it did */
static int pm_app_pins;             /* bindings the application made (pm_pin_self_to) */
static char pm_cpus_spec[512];      /* PERFMARK_PIN_CPUS as given, "" if unset */
static char pm_cpus_used[512];      /* the CPU list the shares came from, "" = all allowed */

static const char *const pm_mode_names[] = {"keep", "none", "ranks", "threads"};

int pm_pin_parse(const char *text)
{
    for (int i = 0; i < 4; i++)
        if (strcmp(text, pm_mode_names[i]) == 0)
            return i;
    return -1;
}

static hwloc_topology_t pm_topology_locked(void)
{
    if (pm_topo_state == 0) {
        pm_topo_state = -1;
        if (hwloc_topology_init(&pm_topo) == 0) {
            /* Cores, packages, NUMA nodes and PUs are all perfmark asks
             * about: leaving out I/O devices and caches halves the load
             * (4-7 ms to 2-4 ms here), which every measured process pays. */
            hwloc_topology_set_io_types_filter(pm_topo, HWLOC_TYPE_FILTER_KEEP_NONE);
            hwloc_topology_set_cache_types_filter(pm_topo, HWLOC_TYPE_FILTER_KEEP_NONE);
            hwloc_topology_set_icache_types_filter(pm_topo, HWLOC_TYPE_FILTER_KEEP_NONE);
            if (hwloc_topology_load(pm_topo) == 0)
                pm_topo_state = 1;
            else
                hwloc_topology_destroy(pm_topo);
        }
    }
    return pm_topo_state == 1 ? pm_topo : NULL;
}

/* The CPUs the shares are cut from: PERFMARK_PIN_CPUS ("LIST", or
 * "HOST:LIST" for this host only: `perfmark run` passes its own affinity,
 * so that `taskset -c 2-3 perfmark run --pin ranks -- mpirun ...` keeps the
 * ranks of that host on CPUs 2-3 while other hosts use every CPU they
 * allow) within the CPUs hwloc says this process may use. NULL: all of
 * them (unset, another host's list, or a list naming none of them: said). */
static hwloc_bitmap_t pm_pin_cpus_locked(hwloc_topology_t topo)
{
    /* the last ':' ends the host (a CPU list has none; a host may) */
    const char *list = pm_cpus_spec, *colon = strrchr(pm_cpus_spec, ':');
    if (!pm_cpus_spec[0])
        return NULL;
    if (colon) {
        char host[256] = "";
        size_t n = (size_t)(colon - pm_cpus_spec);
        if (gethostname(host, sizeof host - 1) != 0 || n != strlen(host) ||
            strncmp(host, pm_cpus_spec, n) != 0)
            return NULL;  /* another host's affinity: not this one's business */
        list = colon + 1;
    }
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    if (!set)
        return NULL;
    if (hwloc_bitmap_list_sscanf(set, list) != 0 || hwloc_bitmap_iszero(set)) {
        pm_msg(PM_MSG_ONCE, "PERFMARK_PIN_CPUS='%.64s' is not a CPU list (e.g. 0-3,8); "
               "shares from every CPU this process may use", pm_cpus_spec);
        hwloc_bitmap_free(set);
        return NULL;
    }
    hwloc_const_bitmap_t allowed = hwloc_topology_get_allowed_cpuset(topo);
    hwloc_bitmap_and(set, set, allowed);
    if (hwloc_bitmap_isequal(set, allowed)) {  /* no narrower than without it */
        hwloc_bitmap_free(set);
        return NULL;
    }
    if (hwloc_bitmap_iszero(set)) {
        pm_msg(PM_MSG_ONCE, "PERFMARK_PIN_CPUS='%.64s' names no CPU this process may use; "
               "shares from every CPU it may use", pm_cpus_spec);
        hwloc_bitmap_free(set);
        return NULL;
    }
    hwloc_bitmap_list_snprintf(pm_cpus_used, sizeof pm_cpus_used, set);
    return set;
}

/* The cores (PUs where there is no core level) with a CPU in `cpus` (all
 * when NULL), in topology order; their number, or -1. */
static int pm_usable_cores(hwloc_topology_t topo, hwloc_const_bitmap_t cpus, hwloc_obj_t **out)
{
    hwloc_obj_type_t type = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE) > 0
                                ? HWLOC_OBJ_CORE
                                : HWLOC_OBJ_PU;
    int all = hwloc_get_nbobjs_by_type(topo, type), n = 0;
    *out = malloc((size_t)(all > 0 ? all : 1) * sizeof **out);
    if (!*out)
        return -1;
    for (int c = 0; c < all; c++) {
        hwloc_obj_t core = hwloc_get_obj_by_type(topo, type, (unsigned)c);
        if (core && core->cpuset && (!cpus || hwloc_bitmap_intersects(core->cpuset, cpus)))
            (*out)[n++] = core;
    }
    return n;
}

/* Cores [first, first + n) of `cores`, with their PUs (those in `cpus`
 * when given), become this rank's share. */
static int pm_take_cores(hwloc_obj_t *cores, int first, int n, hwloc_const_bitmap_t cpus)
{
    pm_share = hwloc_bitmap_alloc();
    if (!pm_share)
        return -1;
    for (int c = first; c < first + n; c++)
        hwloc_bitmap_or(pm_share, pm_share, cores[c]->cpuset);
    if (cpus)
        hwloc_bitmap_and(pm_share, pm_share, cpus);
    pm_share_n = hwloc_bitmap_weight(pm_share);
    if (pm_share_n <= 0)
        return -1;
    pm_share_pus = malloc((size_t)pm_share_n * sizeof *pm_share_pus);
    if (!pm_share_pus)
        return -1;
    int i = 0;
    unsigned pu;
    hwloc_bitmap_foreach_begin(pu, pm_share) pm_share_pus[i++] = (int)pu;
    hwloc_bitmap_foreach_end();
    pm_share_cores = n;
    return 0;
}

/* Bind the whole process (every thread it has now) to its share. */
static void pm_bind_rank_locked(void)
{
    hwloc_topology_t topo = pm_topology_locked();
    if (!topo) {
        snprintf(pm_failure, sizeof pm_failure, "hwloc could not load the topology");
        return;
    }
    hwloc_bitmap_t cpus = pm_pin_cpus_locked(topo);
    hwloc_obj_t *usable = NULL;
    int cores = pm_usable_cores(topo, cpus, &usable);
    if (cores <= 0) {
        snprintf(pm_failure, sizeof pm_failure, "no cores to share");
        free(usable);
        hwloc_bitmap_free(cpus);
        return;
    }
    pm_total_cores = cores;
    int first, n;
    if (pm_local_size <= cores) {
        first = (int)((long)pm_local_rank * cores / pm_local_size);
        n = (int)((long)(pm_local_rank + 1) * cores / pm_local_size) - first;
    } else {
        first = pm_local_rank % cores;
        n = 1;
    }
    int taken = pm_take_cores(usable, first, n, cpus);
    free(usable);
    hwloc_bitmap_free(cpus);
    if (taken != 0) {
        snprintf(pm_failure, sizeof pm_failure, "no PUs in this rank's share of cores");
        return;
    }
    if (pm_local_size > cores) {
        char where[64];
        hwloc_bitmap_list_snprintf(where, sizeof where, pm_share);
        pm_msg(PM_MSG_ONCE, "PERFMARK_PIN=%s: %d ranks on this node but %d core%s; ranks share "
               "cores (local rank %d on CPU %s)", pm_mode_names[pm_mode], pm_local_size, cores,
               cores == 1 ? "" : "s", pm_local_rank, where);
    }
    if (hwloc_set_cpubind(topo, pm_share, HWLOC_CPUBIND_PROCESS) != 0) {
        snprintf(pm_failure, sizeof pm_failure, "binding failed: %s", strerror(errno));
        pm_msg(PM_MSG_ONCE, "PERFMARK_PIN=%s: %s; running where the launcher put this rank",
               pm_mode_names[pm_mode], pm_failure);
        free(pm_share_pus);
        pm_share_pus = NULL;
        pm_share_n = 0;
    }
}

void pm_pin_start(enum pm_pin_mode mode, const char *cpus, int local_rank, int local_size)
{
    pthread_mutex_lock(&pm_pin_lock);
    pm_mode = mode;
    snprintf(pm_cpus_spec, sizeof pm_cpus_spec, "%s", cpus ? cpus : "");
    if (mode == PM_PIN_RANKS || mode == PM_PIN_THREADS) {
        if (local_rank >= 0 && local_size > local_rank) {
            pm_local_rank = local_rank;
            pm_local_size = local_size;
            pm_bind_rank_locked();
        } else {
            pm_waiting = 1;
        }
    }
    pthread_mutex_unlock(&pm_pin_lock);
}

int pm_pin_needs_local(void) { return pm_waiting; }

void pm_pin_set_local(int local_rank, int local_size)
{
    pthread_mutex_lock(&pm_pin_lock);
    if (pm_waiting && local_rank >= 0 && local_size > local_rank) {
        pm_waiting = 0;
        pm_local_rank = local_rank;
        pm_local_size = local_size;
        pm_bind_rank_locked();
    }
    pthread_mutex_unlock(&pm_pin_lock);
}

int pm_pin_thread(pid_t tid, int32_t index)
{
    if (pm_mode != PM_PIN_THREADS || index < 0)
        return -1;
    pthread_mutex_lock(&pm_pin_lock);
    int pu = -1;
    if (pm_share_n > 0) {
        pu = pm_share_pus[index % pm_share_n];
        if (index == pm_share_n)
            pm_msg(PM_MSG_ONCE, "PERFMARK_PIN=threads: more threads than the %d PU%s of this "
                   "rank's share; from thread %d on, threads share PUs", pm_share_n,
                   pm_share_n == 1 ? "" : "s", (int)index);
        if (index > pm_max_index)
            pm_max_index = index;
        hwloc_bitmap_t one = hwloc_bitmap_alloc();
        if (!one || hwloc_bitmap_only(one, (unsigned)pu) != 0 ||
            hwloc_set_proc_cpubind(pm_topo, tid, one, HWLOC_CPUBIND_THREAD) != 0)
            pu = -1;
        hwloc_bitmap_free(one);
    }
    pthread_mutex_unlock(&pm_pin_lock);
    return pu;
}

/* Append "a" or "a-b" for a run of CPUs; 0 if it fit. */
static int pm_list_add(char *out, size_t len, size_t *used, int a, int b)
{
    char item[32];
    int n = a == b ? snprintf(item, sizeof item, "%s%d", *used ? "," : "", a)
                   : snprintf(item, sizeof item, "%s%d-%d", *used ? "," : "", a, b);
    if (*used + (size_t)n + 4 > len)  /* room for "..." and the NUL */
        return -1;
    memcpy(out + *used, item, (size_t)n + 1);
    *used += (size_t)n;
    return 0;
}

/* The mask as a cpulist; words of no CPU skipped whole. */
static void pm_cpulist(const cpu_set_t *set, size_t size, char *out, size_t len)
{
    const int ncpu = (int)(size * 8), word = (int)(8 * sizeof(unsigned long));
    const unsigned long *bits = (const unsigned long *)set;
    size_t used = 0;
    out[0] = '\0';
    int start = -1;
    for (int c = 0; c <= ncpu; c++) {
        if (start < 0 && c < ncpu && c % word == 0 && bits[c / word] == 0) {
            c += word - 1;
            continue;
        }
        int in = c < ncpu && CPU_ISSET_S(c, size, set);
        if (in && start < 0)
            start = c;
        if (!in && start >= 0) {
            if (pm_list_add(out, len, &used, start, c - 1) != 0) {
                snprintf(out + used, len - used, "...");
                break;
            }
            start = -1;
        }
    }
}

/* Threads mostly have their creator's mask: the last one's list is kept
 * (a thread's start pays for this). Taken with a trylock: a fork child
 * may find it held, and then formats its own. */
static struct {
    pthread_mutex_t lock;
    unsigned long mask[1024 / (8 * sizeof(unsigned long))];
    char list[64];
    int valid;
} pm_last_affinity = {.lock = PTHREAD_MUTEX_INITIALIZER};

void pm_pin_affinity(pid_t tid, char *out, size_t len)
{
    if (len == 0)
        return;
    snprintf(out, len, "?");
    unsigned long mask[sizeof pm_last_affinity.mask / sizeof(unsigned long)];
    if (sched_getaffinity(tid, sizeof mask, (cpu_set_t *)mask) == 0) {
        int cached = 0;
        if (pthread_mutex_trylock(&pm_last_affinity.lock) == 0) {
            if (pm_last_affinity.valid && len >= sizeof pm_last_affinity.list &&
                memcmp(mask, pm_last_affinity.mask, sizeof mask) == 0) {
                memcpy(out, pm_last_affinity.list, sizeof pm_last_affinity.list);
                cached = 1;
            } else {
                pm_cpulist((cpu_set_t *)mask, sizeof mask, out, len);
                if (len >= sizeof pm_last_affinity.list) {
                    memcpy(pm_last_affinity.mask, mask, sizeof mask);
                    snprintf(pm_last_affinity.list, sizeof pm_last_affinity.list, "%s", out);
                    pm_last_affinity.valid = strlen(out) < sizeof pm_last_affinity.list - 1;
                }
                cached = 1;
            }
            pthread_mutex_unlock(&pm_last_affinity.lock);
        }
        if (!cached)
            pm_cpulist((cpu_set_t *)mask, sizeof mask, out, len);
        return;
    }
    if (errno != EINVAL)
        return;
    for (int ncpu = 2048; ncpu <= (1 << 20); ncpu *= 2) {  /* more CPUs than the mask holds */
        cpu_set_t *set = CPU_ALLOC(ncpu);
        size_t size = CPU_ALLOC_SIZE(ncpu);
        if (!set)
            return;
        if (sched_getaffinity(tid, size, set) == 0) {
            pm_cpulist(set, size, out, len);
            CPU_FREE(set);
            return;
        }
        CPU_FREE(set);
        if (errno != EINVAL)
            return;
    }
}

int pm_pin_self_to(int cpu)
{
    pthread_mutex_lock(&pm_pin_lock);
    hwloc_topology_t topo = pm_topology_locked();
    hwloc_obj_t pu = topo && cpu >= 0 ? hwloc_get_pu_obj_by_os_index(topo, (unsigned)cpu) : NULL;
    int rc = -1, err = EINVAL;
    if (pu && pu->cpuset) {
        rc = hwloc_set_cpubind(topo, pu->cpuset, HWLOC_CPUBIND_THREAD);
        err = errno;
    } else if (!topo && cpu >= 0 && cpu < CPU_SETSIZE) {  /* no topology: the kernel's call */
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(cpu, &one);
        rc = sched_setaffinity(0, sizeof one, &one);
        err = errno;
    }
    if (rc == 0)
        pm_app_pins++;
    pthread_mutex_unlock(&pm_pin_lock);
    errno = err;
    return rc;
}

/* What the application bound itself, appended to the sentence. */
static void pm_describe_app(char *out, size_t len)
{
    size_t used = strlen(out);
    if (pm_app_pins && used < len)
        snprintf(out + used, len - used, "; the application bound threads itself %d time%s "
                 "(likwid_pinThread/likwid_pinProcess): its last binding per thread is in "
                 "/threads binding", pm_app_pins, pm_app_pins == 1 ? "" : "s");
}

void pm_pin_describe(char *out, size_t len)
{
    pthread_mutex_lock(&pm_pin_lock);
    const char *mode = pm_mode_names[pm_mode];
    if (pm_mode == PM_PIN_KEEP || pm_mode == PM_PIN_NONE) {
        snprintf(out, len, "%s: perfmark bound nothing; each thread's binding as found is in "
                 "/threads binding", mode);
    } else if (pm_waiting) {
        snprintf(out, len, "%s: not bound: the local rank was never known (no launcher "
                 "variable, no MPI_Init)", mode);
    } else if (pm_share_n <= 0) {
        snprintf(out, len, "%s: not bound: %s", mode, pm_failure);
    } else {
        char threads[96] = "";
        if (pm_mode == PM_PIN_THREADS)
            snprintf(threads, sizeof threads, "; threads one per PU of the share (%d thread%s "
                     "on %d PU%s%s)", pm_max_index + 1, pm_max_index ? "s" : "", pm_share_n,
                     pm_share_n == 1 ? "" : "s", pm_max_index + 1 > pm_share_n ?
                     ", oversubscribed" : "");
        char within[200] = "";
        if (pm_cpus_used[0])
            snprintf(within, sizeof within, " of CPUs %s (PERFMARK_PIN_CPUS)", pm_cpus_used);
        snprintf(out, len, "%s: local ranks bound to disjoint shares of the %d core%s%s (%d "
                 "per rank%s)%s", mode, pm_total_cores, pm_total_cores == 1 ? "" : "s", within,
                 pm_share_cores,
                 pm_local_size > pm_total_cores ? ", cores shared: more ranks than cores" : "",
                 threads);
    }
    pm_describe_app(out, len);
    pthread_mutex_unlock(&pm_pin_lock);
}

void pm_pin_before_fork(void) { pthread_mutex_lock(&pm_pin_lock); }
void pm_pin_after_fork(void) { pthread_mutex_unlock(&pm_pin_lock); }

void pm_pin_place(int cpu, struct pm_place *out)
{
    *out = (struct pm_place){-1, -1, -1};
    if (cpu < 0)
        return;
    pthread_mutex_lock(&pm_pin_lock);
    /* Without a topology loaded for pinning, sysfs answers (pm_place.c):
     * hwloc's load costs ~3.7 ms, most of it plugins placement never uses. */
    if (pm_topo_state != 1) {
        if (pm_map_state == 0) {
            pm_map = pm_place_map_load("");
            pm_map_state = pm_map ? 1 : -1;
        }
        if (pm_map) {
            pm_place_map_get(pm_map, cpu, out);
            pthread_mutex_unlock(&pm_pin_lock);
            return;
        }
    }
    hwloc_topology_t topo = pm_topology_locked();
    hwloc_obj_t pu = topo ? hwloc_get_pu_obj_by_os_index(topo, (unsigned)cpu) : NULL;
    if (pu) {
        hwloc_obj_t core = hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_CORE, pu);
        hwloc_obj_t pkg = hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_PACKAGE, pu);
        out->core = core ? (int32_t)core->logical_index : -1;
        out->package = pkg ? (int32_t)pkg->os_index : -1;
        out->numa = pu->nodeset ? (int32_t)hwloc_bitmap_first(pu->nodeset) : -1;
    }
    pthread_mutex_unlock(&pm_pin_lock);
}
