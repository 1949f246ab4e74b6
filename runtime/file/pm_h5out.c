#include "pm_h5out.h"
#include "pm_thread_start.h"
#include "pm_h5enc.h"
#include "pm_h5out_samples.h"
#include "pm_h5out_node.h"
#include "pm_h5out_series.h"
#include "pm_flags.h"
#include "pm_log.h"
#include "pm_names.h"
#include "pm_pin.h"
#include "pm_topdown.h"
#include "pm_cpu_models.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- merging regions by path ------------------------------------------------- */

static uint32_t pm_merge_hash(int32_t parent, int32_t name, uint32_t mask)
{
    uint64_t key = (uint64_t)(uint32_t)(parent + 1) << 32 | (uint32_t)name;
    return (uint32_t)((key * 0x9E3779B97F4A7C15ull) >> 32) & mask;
}

static int pm_merge_grow(struct pm_merged *m)
{
    int32_t cap = m->cap ? m->cap * 2 : 256;
    int32_t *p = realloc(m->parent, (size_t)cap * sizeof *p);
    if (!p)
        return -1;
    m->parent = p;
    if (!(p = realloc(m->name, (size_t)cap * sizeof *p)))
        return -1;
    m->name = p;
    if (!(p = realloc(m->depth, (size_t)cap * sizeof *p)))
        return -1;
    m->depth = p;
    m->cap = cap;
    uint32_t size = (uint32_t)cap * 2;
    int32_t *hash = calloc(size, sizeof *hash);
    if (!hash)
        return -1;
    for (int32_t r = 0; r < m->n; r++) {
        uint32_t h = pm_merge_hash(m->parent[r], m->name[r], size - 1);
        while (hash[h])
            h = (h + 1) & (size - 1);
        hash[h] = r + 1;
    }
    free(m->hash);
    m->hash = hash;
    m->mask = size - 1;
    return 0;
}

static int32_t pm_merge_find(struct pm_merged *m, int32_t parent, int32_t name, int32_t depth)
{
    if (m->n == m->cap && pm_merge_grow(m) != 0)
        return -1;
    uint32_t h = pm_merge_hash(parent, name, m->mask);
    for (; m->hash[h]; h = (h + 1) & m->mask) {
        int32_t r = m->hash[h] - 1;
        if (m->parent[r] == parent && m->name[r] == name)
            return r;
    }
    int32_t r = m->n++;
    m->parent[r] = parent;
    m->name[r] = name;
    m->depth[r] = depth;
    m->hash[h] = r + 1;
    return r;
}

void pm_merge_free(struct pm_merged *m, int32_t nthreads)
{
    if (m->map)
        for (int32_t t = 0; t < nthreads; t++)
            free(m->map[t]);
    free(m->map), free(m->parent), free(m->name), free(m->depth), free(m->hash);
}

/* Thread node arrays list parents before children, so one pass suffices. */
int pm_merge(struct pm_merged *m, const struct pm_output *o)
{
    memset(m, 0, sizeof *m);
    if (pm_merge_grow(m) != 0 || !(m->map = calloc((size_t)o->nthreads + 1, sizeof *m->map)))
        return -1;
    for (int32_t t = 0; t < o->nthreads; t++) {
        const struct pm_thread *th = o->threads[t];
        m->map[t] = malloc(((size_t)th->nnodes + 1) * sizeof **m->map);
        if (!m->map[t])
            return -1;
        for (int32_t n = 0; n < th->nnodes; n++) {
            const struct pm_node *node = &th->nodes[n];
            int32_t parent = node->parent < 0 ? -1 : m->map[t][node->parent];
            m->map[t][n] = pm_merge_find(m, parent, node->name, (int32_t)node->depth);
            if (m->map[t][n] < 0)
                return -1;
        }
    }
    return 0;
}

/* ---- building the model --------------------------------------------------------- */

_Static_assert(PM_HOST_LEN == PM_SCHEMA_STR64, "/threads host and binding are STR64 rows");

/* Rows of a number dataset (its type from the schema row). */
static int pm_slab_put(struct pm_h5model *m, enum pm_schema_id id, const uint64_t *dims,
                       uint64_t row0, uint64_t nrows, const void *data)
{
    return pm_h5model_rows(m, id, NULL, 0, 0, dims, row0, nrows, data);
}

struct pm_h5_event {
    const char *name, *pfm_name;
    int32_t group;
    uint32_t type;
    uint64_t config, config1, config2;
    uint8_t exclude_user, exclude_kernel;
};

static int pm_write_events(struct pm_h5model *m, const struct pm_eventset *set)
{
    static const struct pm_field fields[] = {
        PM_FIELD(pm_h5_event, name, EVENTS_NAME), PM_FIELD(pm_h5_event, pfm_name, EVENTS_PFM_NAME),
        PM_FIELD(pm_h5_event, group, EVENTS_GROUP), PM_FIELD(pm_h5_event, type, EVENTS_TYPE),
        PM_FIELD(pm_h5_event, config, EVENTS_CONFIG), PM_FIELD(pm_h5_event, config1, EVENTS_CONFIG1),
        PM_FIELD(pm_h5_event, config2, EVENTS_CONFIG2),
        PM_FIELD(pm_h5_event, exclude_user, EVENTS_EXCLUDE_USER),
        PM_FIELD(pm_h5_event, exclude_kernel, EVENTS_EXCLUDE_KERNEL),
    };
    struct pm_h5_event rows[PM_MAX_EVENTS];
    for (int i = 0; i < set->n; i++) {
        const struct pm_event *e = &set->ev[i];
        rows[i] = (struct pm_h5_event){e->name, e->pfm_name, e->group, e->attr.type,
                                       e->attr.config, e->attr.config1, e->attr.config2,
                                       (uint8_t)e->attr.exclude_user,
                                       (uint8_t)e->attr.exclude_kernel};
    }
    uint64_t dims[1] = {(uint64_t)set->n};
    return pm_h5model_dataset(m, PM_S_EVENTS, fields, PM_NFIELDS(fields), sizeof *rows, dims, rows);
}

/* Paths are for display; `parent` is the exact tree. Without a bound, a
 * tree nested d deep would store O(d^2) bytes of paths (10,000 levels of a
 * one-letter name: 100 MB). Longer paths keep their innermost part after
 * ".../", cut at a '/' where one is near. */
#define PM_DISPLAY_PATH_MAX 1024

static void pm_shorten_path(char *path)
{
    size_t len = strlen(path);
    if (len <= PM_DISPLAY_PATH_MAX)
        return;
    const char *tail = path + len - (PM_DISPLAY_PATH_MAX - 4);
    const char *slash = strchr(tail, '/');
    if (slash && slash - tail < PM_DISPLAY_PATH_MAX / 2)
        tail = slash + 1;
    memmove(path + 4, tail, strlen(tail) + 1);
    memcpy(path, ".../", 4);
}

struct pm_h5_region {
    const char *name;
    int32_t parent, depth;
    const char *kind, *path;
};

static int pm_write_regions(struct pm_h5model *m, const struct pm_region_desc *reg, int32_t n)
{
    static const struct pm_field fields[] = {
        PM_FIELD(pm_h5_region, name, REGIONS_NAME), PM_FIELD(pm_h5_region, parent, REGIONS_PARENT),
        PM_FIELD(pm_h5_region, depth, REGIONS_DEPTH), PM_FIELD(pm_h5_region, kind, REGIONS_KIND),
        PM_FIELD(pm_h5_region, path, REGIONS_PATH),
    };
    struct pm_h5_region *rows = calloc((size_t)n + 1, sizeof *rows);
    char **paths = calloc((size_t)n + 1, sizeof *paths);
    int rc = -1;
    if (!rows || !paths)
        goto out;
    for (int32_t r = 0; r < n; r++) {
        const char *up = reg[r].parent < 0 ? NULL : paths[reg[r].parent];
        size_t len = strlen(reg[r].name) + (up ? strlen(up) + 1 : 0) + 1;
        if (!(paths[r] = malloc(len)))
            goto out;
        snprintf(paths[r], len, "%s%s%s", up ? up : "", up ? "/" : "", reg[r].name);
        pm_shorten_path(paths[r]);
        int kind = reg[r].kind >= 0 && reg[r].kind < PM_KINDS ? reg[r].kind : PM_KIND_USER;
        rows[r] = (struct pm_h5_region){reg[r].name, reg[r].parent, reg[r].depth,
                                        pm_kind_name((enum pm_kind)kind), paths[r]};
    }
    uint64_t dims[1] = {(uint64_t)n};
    rc = pm_h5model_dataset(m, PM_S_REGIONS, fields, PM_NFIELDS(fields), sizeof *rows, dims, rows);
out:
    if (paths)
        for (int32_t r = 0; r < n; r++)
            free(paths[r]);
    free(paths), free(rows);
    return rc;
}

static int pm_write_messages(struct pm_h5model *m, const char *const *messages, size_t n)
{
    uint64_t dims[1] = {(uint64_t)n};
    return pm_h5model_dataset(m, PM_S_MESSAGES, NULL, 0, 0, dims, messages);
}

static int pm_write_root_attrs(struct pm_h5model *m, const struct pm_output *o)
{
    const struct pm_eventset *set = o->set;
    char measured[PM_MAX_EVENTS * (PM_EVENT_NAME_LEN + 1) + 1] = "";
    for (int i = 0; i < set->n; i++) {
        size_t used = strlen(measured);
        snprintf(measured + used, sizeof measured - used, "%s%s", i ? "," : "",
                 set->ev[i].name);
    }
    int32_t version = PM_SCHEMA_VERSION, revision = PM_SCHEMA_REVISION, groups = set->ngroups, cpu = o->bind_cpu;
    int64_t pid = o->pid;
    uint8_t partial = (uint8_t)o->partial;
    int rc = pm_h5model_attr_num(m, PM_S_ROOT, PM_S_SCHEMA_VERSION, NULL, &version);
    rc |= pm_h5model_attr_num(m, PM_S_ROOT, PM_S_SCHEMA_REVISION, NULL, &revision);
    rc |= pm_h5model_attr_str(m, PM_S_ROOT, PM_S_PERFMARK_VERSION, PERFMARK_VERSION);
    rc |= pm_h5model_attr_str(m, PM_S_ROOT, PM_S_COMMAND, o->command);
    rc |= pm_h5model_attr_str(m, PM_S_ROOT, PM_S_HOST, o->host);
    rc |= pm_h5model_attr_num(m, PM_S_ROOT, PM_S_PID, NULL, &pid);
    rc |= pm_h5model_attr_str(m, PM_S_ROOT, PM_S_START_TIME, o->start_time);
    rc |= pm_h5model_attr_num(m, PM_S_ROOT, PM_S_DURATION_NS, NULL, &o->duration_ns);
    rc |= pm_h5model_attr_str(m, PM_S_ROOT, PM_S_CLOCK, o->clock);
    rc |= pm_h5model_attr_str(m, PM_S_ROOT, PM_S_EVENTS_REQUESTED, set->requested);
    rc |= pm_h5model_attr_str(m, PM_S_ROOT, PM_S_EVENTS_MEASURED, measured);
    rc |= pm_h5model_attr_str(m, PM_S_ROOT, PM_S_EVENT_GROUP, set->n ? set->group_name : "none");
    rc |= pm_h5model_attr_str(m, PM_S_ROOT, PM_S_FALLBACK, set->fallback);
    char causes[40];
    pm_fallback_cause_words(set->fallback_causes, causes, sizeof causes);
    rc |= pm_h5model_attr_str(m, PM_S_ROOT, PM_S_FALLBACK_CAUSE, causes);
    rc |= pm_h5model_attr_str(m, PM_S_ROOT, PM_S_CPU, set->cpu);
    rc |= pm_h5model_attr_num(m, PM_S_ROOT, PM_S_KERNEL_GROUPS, NULL, &groups);
    rc |= pm_h5model_attr_num(m, PM_S_ROOT, PM_S_BIND_CPU, NULL, &cpu);
    rc |= pm_h5model_attr_num(m, PM_S_ROOT, PM_S_PARTIAL, NULL, &partial);
    static const char *const td_names[] = {"", "perf_metrics", "skylake", "zen4", "arm", "atom"};
    _Static_assert(sizeof td_names / sizeof *td_names == PM_TD_NMETHODS,
                   "a topdown_method name per enum pm_td_method");
    int td = set->td_method >= 0 && set->td_method < PM_TD_NMETHODS ? set->td_method : 0;
    int32_t td_levels = td ? set->td_levels : 0;
    rc |= pm_h5model_attr_str(m, PM_S_ROOT, PM_S_TOPDOWN_METHOD, td_names[td]);
    rc |= pm_h5model_attr_num(m, PM_S_ROOT, PM_S_TOPDOWN_LEVELS, NULL, &td_levels);
    /* How the PERF_METRICS group was read (docs/topdown.md): rdpmc once any
     * thread of this process used the rdpmc mode. */
    const char *td_read = set->td_method != PM_TD_METHOD_PERF_METRICS ? "none"
                          : pm_counterset_td_rdpmc_used()            ? "rdpmc"
                                                                     : "read";
    rc |= pm_h5model_attr_str(m, PM_S_ROOT, PM_S_TOPDOWN_READ, td_read);
    rc |= pm_h5model_attr_str(m, PM_S_ROOT, PM_S_CPU_MODEL, set->model);
    rc |= pm_h5model_attr_str(m, PM_S_ROOT, PM_S_OPENMP, o->openmp ? o->openmp : "");
    rc |= pm_h5model_attr_str(m, PM_S_ROOT, PM_S_PINNING, o->pinning ? o->pinning : "");
    rc |= pm_h5model_attr_str(m, PM_S_ROOT, PM_S_THREADS_SEEN, o->threads_seen ? o->threads_seen : "");
    rc |= pm_h5model_attr_str(m, PM_S_ROOT, PM_S_THROTTLE, o->throttle ? o->throttle : "");
    int32_t rank = o->rank, ranks = o->ranks;
    rc |= pm_h5model_attr_num(m, PM_S_ROOT, PM_S_RANK, NULL, &rank);
    rc |= pm_h5model_attr_num(m, PM_S_ROOT, PM_S_RANKS, NULL, &ranks);
    return rc ? -1 : 0;
}

/* /summary: a summary job's statistics (o->summary), or empty. */
static int pm_write_summary(struct pm_h5model *m, const struct pm_output *o)
{
    static const struct pm_h5summary none = {.layout = ""};
    const struct pm_h5summary *s = o->summary ? o->summary : &none;
    uint64_t threads = s->threads;
    uint64_t nb[1] = {s->state_len}, nk[1] = {s->nkept}, nr[1] = {s->nrefs};
    int rc = pm_h5model_attr_str(m, PM_S_ROOT, PM_S_DETAIL, o->summary ? "summary" : "full");
    rc |= pm_h5model_group(m, PM_S_SUMMARY);
    rc |= pm_h5model_attr_str(m, PM_S_SUMMARY, PM_S_SUMMARY_LAYOUT, s->layout);
    rc |= pm_h5model_attr_num(m, PM_S_SUMMARY, PM_S_SUMMARY_THREADS, NULL, &threads);
    rc |= pm_h5model_dataset(m, PM_S_SUMMARY_STATE, NULL, 0, 0, nb, s->state);
    rc |= pm_h5model_dataset(m, PM_S_SUMMARY_KEPT_RANK, NULL, 0, 0, nk, s->kept_rank);
    rc |= pm_h5model_dataset(m, PM_S_SUMMARY_KEPT_ROW, NULL, 0, 0, nk, s->kept_row);
    rc |= pm_h5model_dataset(m, PM_S_SUMMARY_REF_ROW, NULL, 0, 0, nr, s->ref_row);
    rc |= pm_h5model_dataset(m, PM_S_SUMMARY_REF_RANK, NULL, 0, 0, nr, s->ref_rank);
    rc |= pm_h5model_dataset(m, PM_S_SUMMARY_REF_THREAD, NULL, 0, 0, nr, s->ref_thread);
    /* the finished statistics as tables with named columns (empty in a
     * full file) */
    static const enum pm_schema_id tab[PM_H5SUMMARY_TABLES][2] = {
        {PM_S_SUMMARY_REGION_STAT, PM_S_SUMMARY_REGION_STAT_COLUMNS},
        {PM_S_SUMMARY_REGION_MORE, PM_S_SUMMARY_REGION_MORE_COLUMNS},
        {PM_S_SUMMARY_MPI_STAT, PM_S_SUMMARY_MPI_STAT_COLUMNS},
        {PM_S_SUMMARY_RUN_STAT, PM_S_SUMMARY_RUN_STAT_COLUMNS},
        {PM_S_SUMMARY_RANK_SHARE, PM_S_SUMMARY_RANK_SHARE_COLUMNS},
        {PM_S_SUMMARY_TOPDOWN, PM_S_SUMMARY_TOPDOWN_COLUMNS},
        {PM_S_SUMMARY_TOPDOWN_SLOTS, PM_S_SUMMARY_TOPDOWN_SLOTS_COLUMNS},
        {PM_S_SUMMARY_REGION_COUNT, PM_S_SUMMARY_REGION_COUNT_COLUMNS},
        {PM_S_SUMMARY_RUN_COUNT, PM_S_SUMMARY_RUN_COUNT_COLUMNS}};
    for (int i = 0; i < PM_H5SUMMARY_TABLES; i++) {
        const struct pm_h5table *t = &s->tab[i];
        int one = pm_schema_ndims(tab[i][0]) == 1;
        uint64_t dims[2] = {one ? t->cols : t->rows, t->cols};

        rc |= pm_h5model_dataset(m, tab[i][0], NULL, 0, 0, dims,
                                 t->u ? (const void *)t->u : (const void *)t->v);
        rc |= pm_h5model_attr_str(m, PM_S_SUMMARY, tab[i][1], t->columns ? t->columns : "");
    }
    return rc ? -1 : 0;
}

int pm_h5out_tables(struct pm_h5model *m, const struct pm_output *o,
                    const struct pm_region_desc *regions, int32_t nregions,
                    const char *const *messages, size_t nmessages,
                    const struct pm_module_desc *modules, int32_t nmodules)
{
    int rc = pm_write_root_attrs(m, o);
    rc |= pm_write_events(m, o->set);
    rc |= pm_write_regions(m, regions, nregions);
    rc |= pm_write_messages(m, messages, nmessages);
    rc |= pm_h5out_sample_tables(m, o, modules, nmodules);
    rc |= pm_h5out_series_tables(m, o);
    rc |= pm_write_summary(m, o);
    return rc ? -1 : 0;
}

/* ---- rows: threads and the per-(thread, region) arrays --------------------------- */

struct pm_h5_thread {
    int32_t rank, thread;
    int64_t pid, tid;
    char host[PM_HOST_LEN];
    int32_t cpu_first, cpu_last;
    uint8_t exited;
    int32_t open_at_end;
    int32_t core_first, core_last, package_first, package_last, numa_first, numa_last;
    char binding[PM_HOST_LEN];
    char name[PM_HOST_LEN];
    char start[PM_HOST_LEN];
    uint8_t totals_from;
};

static int pm_write_threads(struct pm_h5model *m, const struct pm_output *o, const struct pm_slab *s)
{
    static const struct pm_field fields[] = {
        PM_FIELD(pm_h5_thread, rank, THREADS_RANK), PM_FIELD(pm_h5_thread, thread, THREADS_THREAD),
        PM_FIELD(pm_h5_thread, pid, THREADS_PID), PM_FIELD(pm_h5_thread, tid, THREADS_TID),
        PM_FIELD(pm_h5_thread, host, THREADS_HOST), PM_FIELD(pm_h5_thread, cpu_first, THREADS_CPU_FIRST),
        PM_FIELD(pm_h5_thread, cpu_last, THREADS_CPU_LAST), PM_FIELD(pm_h5_thread, exited, THREADS_EXITED),
        PM_FIELD(pm_h5_thread, open_at_end, THREADS_OPEN_AT_END),
        PM_FIELD(pm_h5_thread, core_first, THREADS_CORE_FIRST), PM_FIELD(pm_h5_thread, core_last, THREADS_CORE_LAST),
        PM_FIELD(pm_h5_thread, package_first, THREADS_PACKAGE_FIRST),
        PM_FIELD(pm_h5_thread, package_last, THREADS_PACKAGE_LAST),
        PM_FIELD(pm_h5_thread, numa_first, THREADS_NUMA_FIRST), PM_FIELD(pm_h5_thread, numa_last, THREADS_NUMA_LAST),
        PM_FIELD(pm_h5_thread, binding, THREADS_BINDING), PM_FIELD(pm_h5_thread, name, THREADS_NAME),
        PM_FIELD(pm_h5_thread, start, THREADS_START),
        PM_FIELD(pm_h5_thread, totals_from, THREADS_TOTALS_FROM),
    };
    struct pm_h5_thread *rows = calloc((size_t)o->nthreads + 1, sizeof *rows);
    if (!rows)
        return -1;
    for (int32_t i = 0; i < o->nthreads; i++) {
        const struct pm_thread *t = o->threads[i];
        struct pm_place first, last;
        pm_pin_place(t->cpu_first, &first);
        pm_pin_place(t->cpu_last, &last);
        rows[i] = (struct pm_h5_thread){o->rank, t->index, o->pid, t->tid, "", t->cpu_first,
                                        t->cpu_last, (uint8_t)t->exited, t->open_at_end,
                                        first.core, last.core, first.package, last.package,
                                        first.numa, last.numa, "", "", "",
                                        (uint8_t)t->totals_from};
        snprintf(rows[i].host, sizeof rows[i].host, "%s", o->host);
        snprintf(rows[i].binding, sizeof rows[i].binding, "%s", t->binding);
        snprintf(rows[i].name, sizeof rows[i].name, "%s", t->name);
        pm_thread_start_name(pm_thread_start_fn(t), rows[i].start, sizeof rows[i].start);
    }
    uint64_t dims[1] = {s->thread_total};
    int rc = pm_h5model_rows(m, PM_S_THREADS, fields, PM_NFIELDS(fields), sizeof *rows, dims,
                             s->thread_offset, (uint64_t)o->nthreads, rows);
    free(rows);
    return rc;
}

/* TopDown from PERF_METRICS is quantised to 1/255 per read window: a cell
 * with too few slots per window gets SHORT (pm_td_is_short) and the report
 * leaves it out of ratios. */
static void pm_flag_short(const struct pm_eventset *set, uint64_t cells, const uint64_t *counts,
                          const uint64_t *windows, const uint64_t *visits, uint32_t *flags)
{
    if (set->td_method != PM_TD_METHOD_PERF_METRICS)
        return;
    int slots = -1;
    for (int e = 0; e < set->n && slots < 0; e++)
        if (pm_event_must_lead(&set->ev[e]))
            slots = e;
    for (uint64_t c = 0; slots >= 0 && c < cells; c++)
        if (visits[c] && pm_td_is_short(counts[c * (uint64_t)set->n + (uint64_t)slots],
                                        windows[c]))
            flags[c] |= PM_FLAG_SHORT;
}

/* The event whose count is CPU time (task-clock, else cpu-clock), or -1:
 * what perfmark's reads add to a region shows there. */
static int pm_cpu_time_event(const struct pm_eventset *set)
{
    static const char *const names[] = {"task-clock", "cpu-clock"};
    for (size_t k = 0; k < sizeof names / sizeof *names; k++)
        for (int e = 0; e < set->n; e++)
            if (strcmp(set->ev[e].name, names[k]) == 0)
                return e;
    return -1;
}

/* OVERHEAD: perfmark's reads are more than PM_OVERHEAD_SHARE of a cell's
 * counts. Each counted visit carries half of its enter and half of its exit
 * reading in its CPU time (the kernel samples the counters mid-call), and
 * every reading nested inside it in full; its wall time leaves its own
 * readings out. So the estimate is (reads + counted visits) × cost against
 * CPU time where an event measures it, else reads × cost against wall. */
static void pm_flag_overhead(const struct pm_output *o, uint64_t T, uint64_t R,
                             const uint64_t *counts, const uint64_t *wall,
                             const uint64_t *reads, const uint64_t *counted, uint32_t *flags)
{
    if (o->read_cost_ns <= 0)
        return;
    const uint64_t E = (uint64_t)o->set->n;
    int cpu = pm_cpu_time_event(o->set);
    for (uint64_t c = 0; c < T * R; c++) {
        double own, base;
        if (cpu >= 0) {
            own = (double)(reads[c] + counted[c]) * o->read_cost_ns;
            base = (double)counts[c * E + (uint64_t)cpu];
        } else {
            own = (double)reads[c] * o->read_cost_ns;
            base = (double)wall[c];
        }
        if (own > 0 && own > PM_OVERHEAD_SHARE * base)
            flags[c] |= PM_FLAG_OVERHEAD;
    }
}

/* The per-(thread, region) arrays, as the file lays them out. */
struct pm_cells {
    uint64_t *visits, *wall, *bytes, *bytes_unknown, *windows, *counts, *ena, *run;
    uint64_t *reads, *timer_visits, *timed_visits, *throttled_from;
    uint32_t *flags;
};

static void pm_cells_free(struct pm_cells *c)
{
    free(c->visits), free(c->wall), free(c->bytes), free(c->bytes_unknown), free(c->windows);
    free(c->counts), free(c->ena), free(c->run), free(c->reads), free(c->timer_visits);
    free(c->timed_visits), free(c->throttled_from), free(c->flags);
}

static int pm_cells_alloc(struct pm_cells *c, uint64_t cells, uint64_t E, uint64_t G)
{
    *c = (struct pm_cells){0};
    uint64_t **per_cell[] = {&c->visits, &c->wall, &c->bytes, &c->bytes_unknown, &c->windows,
                             &c->reads, &c->timer_visits, &c->timed_visits, &c->throttled_from};
    int ok = 1;
    for (size_t i = 0; i < sizeof per_cell / sizeof *per_cell; i++)
        ok &= (*per_cell[i] = calloc(cells + 1, 8)) != NULL;
    ok &= (c->flags = calloc(cells + 1, 4)) != NULL;
    ok &= (c->counts = calloc(cells * E + 1, 8)) != NULL;
    ok &= (c->ena = calloc(cells * G + 1, 8)) != NULL;
    ok &= (c->run = calloc(cells * G + 1, 8)) != NULL;
    if (!ok)
        pm_cells_free(c);
    return ok ? 0 : -1;
}

/* One node's visits as the file counts them: all, taken without a reading,
 * and timed (pm_thread.h, enum pm_mode). */
static void pm_node_visits(const struct pm_thread *th, int32_t n, uint64_t *all, uint64_t *timer,
                           uint64_t *timed)
{
    const struct pm_node *node = &th->nodes[n];
    const struct pm_node_cold *cold = &th->cold[n];
    *all = node->visits + cold->folded;
    /* A begin folded into a bucket's open visit lies inside a timed visit:
     * the bucket's time covers it. */
    *timed = *all - (node->mode == PM_MODE_POLL ? node->untimed : 0);
    if (!th->stride)
        *timer = 0;
    else if (node->mode == PM_MODE_POLL)
        *timer = *all;
    else if (cold->throttled_from)
        *timer = node->visits + 1 - cold->throttled_from + cold->folded;
    else
        *timer = cold->folded;
}

static int pm_write_cells(struct pm_h5model *m, const struct pm_output *o, int32_t *const *map,
                          const struct pm_slab *s)
{
    const uint64_t T = (uint64_t)o->nthreads, R = s->regions;
    const uint64_t E = (uint64_t)o->set->n, G = (uint64_t)o->set->ngroups;
    const unsigned stride = pm_stride(o->set);
    struct pm_cells c;
    if (pm_cells_alloc(&c, T * R, E, G) != 0)
        return -1;
    uint64_t *counted = calloc(T * R + 1, 8);
    int rc = -1;
    if (!counted)
        goto out;
    for (uint64_t t = 0; t < T; t++) {
        const struct pm_thread *th = o->threads[t];
        for (int32_t n = 0; n < th->nnodes; n++) {
            uint64_t cell = t * R + (uint64_t)map[t][n];
            const struct pm_node *node = &th->nodes[n];
            const struct pm_node_cold *cold = &th->cold[n];
            const uint64_t *acc = th->acc + (size_t)n * stride;
            uint64_t all, timer, timed;
            pm_node_visits(th, n, &all, &timer, &timed);
            c.visits[cell] += all;
            c.timer_visits[cell] += timer;
            c.timed_visits[cell] += timed;
            counted[cell] += all - timer;
            c.throttled_from[cell] = cold->throttled_from;
            c.reads[cell] += node->reads;
            c.bytes[cell] += cold->bytes;
            c.bytes_unknown[cell] += cold->bytes_unknown;
            if (node->mode != PM_MODE_POLL)
                c.windows[cell] += node->windows;
            c.wall[cell] += (uint64_t)((double)node->ticks * o->ns_per_tick + 0.5);
            c.flags[cell] |= node->flags | (o->partial ? PM_FLAG_PARTIAL : 0) |
                             (pm_sampler_node_lost(&th->smp, n) ? PM_FLAG_SAMPLES_LOST : 0);
            for (uint64_t e = 0; e < E; e++)
                c.counts[cell * E + e] += acc[e];
            for (uint64_t g = 0; g < G; g++) {
                c.ena[cell * G + g] += acc[E + g];
                c.run[cell * G + g] += acc[E + G + g];
            }
        }
    }
    pm_flag_short(o->set, T * R, c.counts, c.windows, c.visits, c.flags);
    pm_flag_overhead(o, T, R, c.counts, c.wall, c.reads, counted, c.flags);
    if (pm_h5model_group(m, PM_S_REGION) != 0)
        goto out;
    const uint64_t d2[2] = {s->thread_total, R}, d3e[3] = {s->thread_total, R, E},
                  d3g[3] = {s->thread_total, R, G};
    const uint64_t row0 = s->thread_offset;
    const struct {
        enum pm_schema_id id;
        const uint64_t *data;
    } per_cell[] = {
        {PM_S_REGION_VISITS, c.visits}, {PM_S_REGION_WALL_NS, c.wall},
        {PM_S_REGION_BYTES, c.bytes}, {PM_S_REGION_BYTES_UNKNOWN, c.bytes_unknown},
        {PM_S_REGION_WINDOWS, c.windows}, {PM_S_REGION_READS, c.reads},
        {PM_S_REGION_TIMER_VISITS, c.timer_visits}, {PM_S_REGION_TIMED_VISITS, c.timed_visits},
        {PM_S_REGION_THROTTLED_FROM, c.throttled_from},
    };
    rc = 0;
    for (size_t i = 0; i < sizeof per_cell / sizeof *per_cell; i++)
        rc |= pm_slab_put(m, per_cell[i].id, d2, row0, T, per_cell[i].data);
    rc |= pm_slab_put(m, PM_S_REGION_COUNTS, d3e, row0, T, c.counts);
    rc |= pm_slab_put(m, PM_S_REGION_ENABLED_NS, d3g, row0, T, c.ena);
    rc |= pm_slab_put(m, PM_S_REGION_RUNNING_NS, d3g, row0, T, c.run);
    rc |= pm_slab_put(m, PM_S_REGION_FLAGS, d2, row0, T, c.flags);
    for (size_t i = 0; i < sizeof pm_flag_names / sizeof *pm_flag_names; i++) {
        uint32_t bit = pm_flag_names[i].bit;
        rc |= pm_h5model_attr_num(m, PM_S_REGION_FLAGS, PM_S_REGION_FLAG_NAME,
                                  pm_flag_names[i].name, &bit);
    }
out:
    pm_cells_free(&c);
    free(counted);
    return rc ? -1 : 0;
}

/* Split stride-word readings into counts [N,E], enabled [N,G], running [N,G]
 * and write them as rows [row0, row0 + rows) of `total`, as datasets ids[0..2]. */
static int pm_write_readings(struct pm_h5model *m, const enum pm_schema_id ids[3],
                             const struct pm_eventset *set, uint64_t total,
                             uint64_t row0, uint64_t rows, const uint64_t *const *readings)
{
    const uint64_t E = (uint64_t)set->n, G = (uint64_t)set->ngroups;
    uint64_t *counts = calloc(rows * E + 1, 8), *ena = calloc(rows * G + 1, 8),
             *run = calloc(rows * G + 1, 8);
    int rc = -1;
    if (counts && ena && run) {
        for (uint64_t r = 0; r < rows; r++) {
            memcpy(counts + r * E, readings[r], E * 8);
            memcpy(ena + r * G, readings[r] + E, G * 8);
            memcpy(run + r * G, readings[r] + E + G, G * 8);
        }
        uint64_t de[2] = {total, E}, dg[2] = {total, G};
        rc = pm_slab_put(m, ids[0], de, row0, rows, counts);
        rc |= pm_slab_put(m, ids[1], dg, row0, rows, ena);
        rc |= pm_slab_put(m, ids[2], dg, row0, rows, run);
    }
    free(counts), free(ena), free(run);
    return rc ? -1 : 0;
}

static int pm_write_totals(struct pm_h5model *m, const struct pm_output *o, const struct pm_slab *s)
{
    uint64_t T = (uint64_t)o->nthreads, N = o->totals ? 1 : 0;
    const uint64_t **readings = calloc(T + 1, sizeof *readings);
    uint64_t *wall = calloc(T + 1, sizeof *wall), *reads = calloc(T + 1, sizeof *reads);
    double *cost = calloc(T + 1, sizeof *cost);
    uint32_t *flags = calloc(T + 1, sizeof *flags);
    int rc = -1;
    if (!readings || !wall || !flags || !reads || !cost)
        goto out;
    for (uint64_t t = 0; t < T; t++) {
        const struct pm_thread *th = o->threads[t];
        readings[t] = th->total;
        reads[t] = th->reads;
        cost[t] = o->read_cost_ns;
        wall[t] = (uint64_t)((double)(th->end_ticks - th->start_ticks) * o->ns_per_tick);
        flags[t] = th->total_flags | (o->partial ? PM_FLAG_PARTIAL : 0) |
                   (pm_sampler_node_lost(&th->smp, -1) ? PM_FLAG_SAMPLES_LOST : 0);
    }
    static const enum pm_schema_id thread_ids[3] = {
        PM_S_THREAD_COUNTS, PM_S_THREAD_ENABLED_NS, PM_S_THREAD_RUNNING_NS};
    static const enum pm_schema_id rank_ids[3] = {PM_S_RANK_COUNTS, PM_S_RANK_ENABLED_NS,
                                                  PM_S_RANK_RUNNING_NS};
    rc = pm_h5model_group(m, PM_S_THREAD) != 0
             ? -1
             : pm_write_readings(m, thread_ids, o->set, s->thread_total, s->thread_offset, T,
                                 readings);
    uint64_t d1[1] = {s->thread_total};
    rc |= pm_slab_put(m, PM_S_THREAD_WALL_NS, d1, s->thread_offset, T, wall);
    rc |= pm_slab_put(m, PM_S_THREAD_FLAGS, d1, s->thread_offset, T, flags);
    rc |= pm_slab_put(m, PM_S_THREAD_READS, d1, s->thread_offset, T, reads);
    rc |= pm_slab_put(m, PM_S_THREAD_READ_COST_NS, d1, s->thread_offset, T, cost);
    const uint64_t *rank[1] = {o->totals};
    int32_t rank_id[1] = {o->rank};
    rc |= pm_h5model_group(m, PM_S_RANKGRP) != 0
              ? -1
              : pm_write_readings(m, rank_ids, o->set, s->rank_total, s->rank_offset, N, rank);
    uint64_t dn[1] = {s->rank_total};
    rc |= pm_slab_put(m, PM_S_RANK_RANK, dn, s->rank_offset, N, rank_id);
out:
    free(readings), free(wall), free(flags), free(reads), free(cost);
    return rc ? -1 : 0;
}

int pm_h5out_rows(struct pm_h5model *m, const struct pm_output *o, int32_t *const *map,
                  const struct pm_slab *slab)
{
    int rc = pm_write_threads(m, o, slab);
    rc |= pm_write_cells(m, o, map, slab);
    rc |= pm_write_totals(m, o, slab);
    rc |= pm_h5out_sample_rows(m, o, map, slab);
    rc |= pm_h5out_series_rows(m, o, map, slab);
    rc |= pm_h5out_node_rows(m, o, slab);
    return rc ? -1 : 0;
}

/* ---- one process, one file --------------------------------------------------------- */

void pm_slab_local_sparse(struct pm_slab *slab, const struct pm_output *o,
                          const struct pm_sample_rows *r)
{
    size_t rows = 0, process_rows = 0, cpus = 0, procs = 0, cpu_rows = 0;
    pm_series_counts(o, &rows, &process_rows);
    pm_node_counts(o, &cpus, &procs, &cpu_rows);
    const size_t n[PM_SPARSE_N] = {r ? r->nhits : 0, r ? r->nchains : 0, r ? r->nframes : 0,
                                   rows, process_rows, cpus, procs, cpu_rows};
    for (int k = 0; k < PM_SPARSE_N; k++) {
        slab->sparse_offset[k] = slab->sparse_base[k] = 0;
        slab->sparse_total[k] = (uint64_t)n[k];
    }
    slab->thread_base = 0;
}

int pm_h5out_encode(const struct pm_h5model *m, int force_own, pm_h5out_large_fn large,
                    void **image, size_t *len, char *err, size_t errlen)
{
    if (!pm_h5model_ok(m)) {
        snprintf(err, errlen, "out of memory building the file (or a writer bug: an item "
                 "out of step with the schema table)");
        return -1;
    }
    int own = pm_h5enc_available() && (force_own || !large || pm_h5enc_fits(m));
    if (!own) {
        if (!large) {
            snprintf(err, errlen, "no encoder for this host (perfmark's needs a little-endian "
                     "one) and no HDF5 library to write the file");
            return -1;
        }
        if (large(m, image, len, err, errlen) == 0)
            return 0;
        if (!pm_h5enc_available())
            return -1;
        /* Never lose the data for want of a library: perfmark's encoder
         * writes any size, only without chunks and compression. */
        pm_msg(PM_MSG_ONCE, "%s; perfmark wrote the file itself instead (uncompressed)", err);
    }
    if (pm_h5enc_image(m, image, len) != 0) {
        snprintf(err, errlen, "cannot encode the file (%s)", strerror(errno));
        return -1;
    }
    return 0;
}

int pm_h5out_image(const struct pm_output *o, pm_h5out_large_fn large, void **image, size_t *len,
                   char *err, size_t errlen)
{
    *image = NULL;
    *len = 0;
    struct pm_merged m;
    struct pm_region_desc *regions = NULL;
    const char **messages = calloc(pm_msg_count() + 1, sizeof *messages);
    int rc = pm_merge(&m, o);
    if (rc == 0 && messages && (regions = calloc((size_t)m.n + 1, sizeof *regions))) {
        for (int32_t r = 0; r < m.n; r++)
            regions[r] = (struct pm_region_desc){pm_name_get(m.name[r]), m.parent[r],
                                                 m.depth[r], (int)pm_name_kind(m.name[r])};
    }
    if (rc != 0 || !regions || !messages) {
        pm_merge_free(&m, o->nthreads);
        free(regions), free(messages);
        snprintf(err, errlen, "out of memory preparing the file");
        return -1;
    }
    for (size_t i = 0; i < pm_msg_count(); i++)
        messages[i] = pm_msg_get(i);

    struct pm_sample_rows samples;
    if (pm_sample_rows_build(o, m.map, &samples) != 0) {
        pm_merge_free(&m, o->nthreads);
        free(regions), free(messages);
        snprintf(err, errlen, "out of memory preparing the samples");
        return -1;
    }
    struct pm_h5model file;
    pm_h5model_init(&file);
    struct pm_slab slab = {.thread_offset = 0, .thread_total = (uint64_t)o->nthreads,
                           .rank_offset = 0, .rank_total = o->totals ? 1 : 0,
                           .regions = (uint64_t)m.n, .samples = &samples};
    pm_slab_local_sparse(&slab, o, &samples);
    rc = pm_h5out_tables(&file, o, regions, m.n, messages, pm_msg_count(), samples.modules,
                         samples.nmodules);
    rc |= pm_h5out_rows(&file, o, m.map, &slab);
    if (rc == 0)
        rc = pm_h5out_encode(&file, o->partial, large, image, len, err, errlen);
    else
        snprintf(err, errlen, "out of memory building the file");
    pm_h5model_free(&file);
    pm_merge_free(&m, o->nthreads);
    pm_sample_rows_free(&samples);
    free(regions), free(messages);
    return rc ? -1 : 0;
}
