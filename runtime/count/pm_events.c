#include "pm_events.h"
#include "pm_cpu_models.h"
#include "pm_cpu_id.h"
#include "pm_topdown.h"

#include <ctype.h>
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <perfmon/pfmlib_perf_event.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/syscall.h>
#include <unistd.h>

extern const char *const pm_default_with_pmu[];

static pthread_once_t pm_pfm_once = PTHREAD_ONCE_INIT;
static int pm_pfm_status = -1;
static char pm_pfm_why[256];

#ifndef PM_LIBPFM_SONAME
#define PM_LIBPFM_SONAME "libpfm.so.4"
#endif

/* libpfm4 is loaded on first use, not linked: its 41,000 relocations cost
 * ~1.2 ms in every process it is mapped into, and under LD_PRELOAD that is
 * every process of a job (the launcher, shells, ranks that count nothing).
 * RTLD_LOCAL: its names stay out of the program's way (PAPI carries its own
 * copy of libpfm4). */
static struct {
    __typeof__(pfm_initialize) *initialize;
    __typeof__(pfm_get_os_event_encoding) *get_os_event_encoding;
    __typeof__(pfm_get_pmu_info) *get_pmu_info;
    __typeof__(pfm_get_event_next) *get_event_next;
    __typeof__(pfm_get_event_info) *get_event_info;
    __typeof__(pfm_strerror) *strerror;
} pm_pfm;

static int pm_pfm_load(void)
{
    void *lib = dlopen(PM_LIBPFM_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        snprintf(pm_pfm_why, sizeof pm_pfm_why, "%s", dlerror());
        return -1;
    }
    struct { void **slot; const char *name; } fns[] = {
        {(void **)&pm_pfm.initialize, "pfm_initialize"},
        {(void **)&pm_pfm.get_os_event_encoding, "pfm_get_os_event_encoding"},
        {(void **)&pm_pfm.get_pmu_info, "pfm_get_pmu_info"},
        {(void **)&pm_pfm.get_event_next, "pfm_get_event_next"},
        {(void **)&pm_pfm.get_event_info, "pfm_get_event_info"},
        {(void **)&pm_pfm.strerror, "pfm_strerror"},
    };
    for (size_t i = 0; i < sizeof fns / sizeof *fns; i++)
        if (!(*fns[i].slot = dlsym(lib, fns[i].name))) {
            snprintf(pm_pfm_why, sizeof pm_pfm_why, "%s has no %s", PM_LIBPFM_SONAME,
                     fns[i].name);
            return -1;
        }
    return 0;
}

static void pm_pfm_init_once(void)
{
    /* A CPU seen through PERFMARK_TEST_CPU is not the one libpfm4 detects:
     * let the tables of PMUs that are not active here encode (tests only). */
    if (pm_cpu_id()->from_override)
        setenv("LIBPFM_ENCODE_INACTIVE", "1", 0);
    if (pm_pfm_load() != 0)
        return;
    pm_pfm_status = pm_pfm.initialize() == PFM_SUCCESS ? 0 : -1;
    if (pm_pfm_status != 0)
        snprintf(pm_pfm_why, sizeof pm_pfm_why, "pfm_initialize failed");
}

int pm_events_init(void)
{
    pthread_once(&pm_pfm_once, pm_pfm_init_once);
    return pm_pfm_status;
}

int pm_pmu_present(void)
{
    DIR *d = opendir("/sys/bus/event_source/devices");
    if (!d)
        return 0;
    int found = 0;
    struct dirent *e;
    while (!found && (e = readdir(d)) != NULL)
        found = strcmp(e->d_name, "cpu") == 0 || strncmp(e->d_name, "cpu_", 4) == 0 ||
                strncmp(e->d_name, "armv", 4) == 0;
    closedir(d);
    return found;
}

int pm_paranoid_level(void)
{
    FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
    int level = 2;
    if (f) {
        if (fscanf(f, "%d", &level) != 1)
            level = 2;
        fclose(f);
    }
    return level;
}

int pm_user_only(void) { return geteuid() != 0 && pm_paranoid_level() >= 2; }

int pm_perf_open(struct perf_event_attr *attr, int cpu, int group_fd)
{
    return pm_perf_open_task(attr, 0, cpu, group_fd);
}

int pm_perf_open_task(struct perf_event_attr *attr, int task, int cpu, int group_fd)
{
    return (int)syscall(SYS_perf_event_open, attr, task, cpu, group_fd, PERF_FLAG_FD_CLOEXEC);
}

void pm_leader_attr(struct perf_event_attr *attr, int pinned)
{
    memset(attr, 0, sizeof *attr);
    attr->size = sizeof *attr;
    attr->type = PERF_TYPE_SOFTWARE;
    attr->config = PERF_COUNT_SW_DUMMY;
    attr->disabled = 1;
    attr->pinned = pinned ? 1 : 0;
    attr->exclude_kernel = 1;  /* allowed at every paranoid level */
    attr->read_format = PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED |
                        PERF_FORMAT_TOTAL_TIME_RUNNING | PERF_FORMAT_ID;
}

/* ---- suggestions for unknown names ------------------------------------ */

/* Names people type that are not libpfm4's canonical spelling. */
static const char *const pm_common_names[] = {
    "task-clock", "cpu-clock", "page-faults", "minor-faults", "major-faults",
    "context-switches", "cpu-migrations",
    "cycles", "instructions", "branches", "branch-misses", "cache-references",
    "cache-misses", "ref-cycles", "bus-cycles", NULL,
};

static size_t pm_edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 64 || lb > 64)
        return (size_t)-1;
    size_t row[65];
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j];
            size_t cost = tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]);
            size_t best = diag + cost;
            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb];
}

struct pm_suggestions {
    const char *base;
    char name[3][PM_EVENT_NAME_LEN];
    size_t dist[3];
};

static void pm_suggest_consider(struct pm_suggestions *s, const char *candidate)
{
    size_t d = pm_edit_distance(s->base, candidate);
    size_t limit = strlen(s->base) / 3 + 1;
    if (d > limit || d == 0)
        return;
    for (int i = 0; i < 3; i++) {
        if (s->name[i][0] && strcasecmp(s->name[i], candidate) == 0)
            return;
    }
    for (int i = 0; i < 3; i++) {
        if (!s->name[i][0] || d < s->dist[i]) {
            for (int k = 2; k > i; k--) {
                s->dist[k] = s->dist[k - 1];
                memcpy(s->name[k], s->name[k - 1], PM_EVENT_NAME_LEN);
            }
            s->dist[i] = d;
            snprintf(s->name[i], PM_EVENT_NAME_LEN, "%s", candidate);
            return;
        }
    }
}

static void pm_suggest_from_libpfm(struct pm_suggestions *s)
{
    pfm_pmu_info_t pinfo;
    pfm_event_info_t einfo;
    for (int pmu = PFM_PMU_NONE; pmu < PFM_PMU_MAX; pmu++) {
        memset(&pinfo, 0, sizeof pinfo);
        pinfo.size = sizeof pinfo;
        if (pm_pfm.get_pmu_info(pmu, &pinfo) != PFM_SUCCESS || !pinfo.is_present)
            continue;
        for (int idx = pinfo.first_event; idx != -1; idx = pm_pfm.get_event_next(idx)) {
            memset(&einfo, 0, sizeof einfo);
            einfo.size = sizeof einfo;
            if (pm_pfm.get_event_info(idx, PFM_OS_NONE, &einfo) == PFM_SUCCESS)
                pm_suggest_consider(s, einfo.name);
        }
    }
}

void pm_event_suggest(const char *bad, char *out, size_t outlen)
{
    char base[PM_EVENT_NAME_LEN];
    const char *p = strstr(bad, "::");
    snprintf(base, sizeof base, "%s", p ? p + 2 : bad);
    base[strcspn(base, ":")] = '\0';

    struct pm_suggestions s;
    memset(&s, 0, sizeof s);
    s.base = base;
    for (const struct pm_event_group_def *g = pm_event_groups; g->name; g++)
        pm_suggest_consider(&s, g->name);
    for (int i = 0; pm_common_names[i]; i++)
        pm_suggest_consider(&s, pm_common_names[i]);
    if (pm_events_init() == 0)
        pm_suggest_from_libpfm(&s);

    out[0] = '\0';
    int n = 0;
    for (int i = 0; i < 3 && s.name[i][0]; i++)
        n++;
    for (int i = 0; i < n; i++) {
        size_t used = strlen(out);
        const char *sep = i == 0 ? "" : (i == n - 1 ? " or " : ", ");
        snprintf(out + used, outlen - used, "%s%s", sep, s.name[i]);
    }
}

/* ---- encoding ------------------------------------------------------------ */

/* What every encoding gets, from the table or from libpfm4. */
static void pm_event_finish(struct pm_event *ev)
{
    /* libpfm4 leaves size at 0; the kernel needs it. */
    ev->attr.size = sizeof ev->attr;
#if defined(__aarch64__)
    /* arm64 grants user-space counter reads only to events that ask (the
     * PMU's "rdpmc" format bit, config1:1) and where perf_user_access=1;
     * elsewhere reads fall back to read(). */
    if (ev->attr.type == PERF_TYPE_RAW || ev->attr.type == PERF_TYPE_HARDWARE)
        ev->attr.config1 |= 0x2;
#endif
    ev->attr.disabled = 0;
    ev->attr.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED |
                           PERF_FORMAT_TOTAL_TIME_RUNNING | PERF_FORMAT_ID;
}

static int pm_event_name_check(const char *name, struct pm_event *ev, char *err, size_t errlen)
{
    memset(ev, 0, sizeof *ev);
    if (!*name) {
        snprintf(err, errlen, "empty event name");
        return -1;
    }
    if (strlen(name) >= sizeof ev->name) {
        snprintf(err, errlen, "event name '%.40s...' is longer than %zu bytes", name,
                 sizeof ev->name - 1);
        return -1;
    }
    snprintf(ev->name, sizeof ev->name, "%s", name);
    return 0;
}

static int pm_event_libpfm(const char *name, int user_only, struct pm_event *ev, char *err,
                           size_t errlen);

int pm_event_encode(const char *name, int user_only, struct pm_event *ev,
                    char *err, size_t errlen)
{
    if (pm_event_name_check(name, ev, err, errlen) != 0)
        return -1;
    if (pm_sw_event_encode(name, user_only, ev) != 0)
        return pm_event_libpfm(name, user_only, ev, err, errlen);
    pm_event_finish(ev);
    return 0;
}

int pm_event_encode_pfm(const char *name, int user_only, struct pm_event *ev,
                        char *err, size_t errlen)
{
    if (pm_event_name_check(name, ev, err, errlen) != 0)
        return -1;
    return pm_event_libpfm(name, user_only, ev, err, errlen);
}

/* A checked name (ev->name set) through libpfm4. */
static int pm_event_libpfm(const char *name, int user_only, struct pm_event *ev, char *err,
                           size_t errlen)
{
    if (pm_events_init() != 0) {
        snprintf(err, errlen, "libpfm4 is not usable (%s): cannot encode '%s'", pm_pfm_why,
                 name);
        return -1;
    }

    char *fstr = NULL;
    pfm_perf_encode_arg_t arg;
    memset(&arg, 0, sizeof arg);
    arg.attr = &ev->attr;
    arg.fstr = &fstr;
    arg.size = sizeof arg;
    int plm = user_only ? PFM_PLM3 : (PFM_PLM0 | PFM_PLM3);
    int rc = pm_pfm.get_os_event_encoding(name, plm, PFM_OS_PERF_EVENT_EXT, &arg);
    if (rc != PFM_SUCCESS) {
        free(fstr);
        char close[3 * PM_EVENT_NAME_LEN + 16] = "";
        switch (rc) {
        case PFM_ERR_NOTFOUND:
            pm_event_suggest(name, close, sizeof close);
            snprintf(err, errlen, "unknown event '%s'%s%s%s", name,
                     close[0] ? " (did you mean " : "", close, close[0] ? "?)" : "");
            break;
        case PFM_ERR_ATTR:
            snprintf(err, errlen, "bad modifier in '%s' (known modifiers include u, k, "
                     "and on hardware events e, i, c=N)", name);
            break;
        case PFM_ERR_ATTR_VAL:
            snprintf(err, errlen, "bad modifier value in '%s' (e.g. c= takes 0..255)", name);
            break;
        case PFM_ERR_UMASK:
            snprintf(err, errlen, "bad or missing unit mask in '%s'", name);
            break;
        default:
            snprintf(err, errlen, "cannot encode '%s': %s", name, pm_pfm.strerror(rc));
            break;
        }
        return -1;
    }
    pm_event_finish(ev);
    snprintf(ev->pfm_name, sizeof ev->pfm_name, "%s", fstr ? fstr : name);
    free(fstr);
    return 0;
}

/* ---- building the measured set ------------------------------------------ */

__attribute__((format(printf, 2, 3)))
static void pm_note(struct pm_eventset *set, const char *fmt, ...)
{
    if (set->nnotes >= PM_MAX_EVENTS)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(set->notes[set->nnotes++], PM_NOTE_LEN, fmt, ap);
    va_end(ap);
}

const char *pm_event_open_failure(int err)
{
    switch (err) {
    case ENOENT:
        return pm_pmu_present() ? "not available on this CPU (ENOENT)"
                                : "this machine has no hardware PMU (ENOENT)";
    case EACCES:
    case EPERM:
        if (pm_user_only())  /* already user space only: :u cannot help */
            return "not permitted for a normal user at this perf_event_paranoid level (Debian "
                   "kernels at level 3 refuse perf_event_open to normal users; an administrator "
                   "can lower /proc/sys/kernel/perf_event_paranoid)";
        return "not permitted at this perf_event_paranoid level (append :u to count user "
               "space only)";
    case EOPNOTSUPP:
        return "not supported by this kernel or PMU (EOPNOTSUPP)";
    case EMFILE:
    case ENFILE:
        return "out of file descriptors";
    default:
        return strerror(err);
    }
}

/* Can the installed libpfm4 encode names of this PMU? Raw encodings always;
 * a named table only where libpfm4 has it and it is active here (or
 * LIBPFM_ENCODE_INACTIVE is set). */
int pm_pfm_pmu_encodes(const char *pmu)
{
    if (strcmp(pmu, "perf_raw") == 0)
        return 1;
    if (pm_events_init() != 0)
        return 0;
    const char *inactive = getenv("LIBPFM_ENCODE_INACTIVE");
    for (int i = PFM_PMU_NONE; i < PFM_PMU_MAX; i++) {
        pfm_pmu_info_t info;
        memset(&info, 0, sizeof info);
        info.size = sizeof info;
        if (pm_pfm.get_pmu_info(i, &info) == PFM_SUCCESS && info.name &&
            strcmp(info.name, pmu) == 0)
            return info.is_present || (inactive && *inactive && strcmp(inactive, "0") != 0);
    }
    return 0;
}

void pm_cpu_describe(char *out, size_t outlen)
{
    const struct pm_cpu_id *id = pm_cpu_id();
    const struct pm_cpu_match *match = pm_cpu_match_find(id);
    if (match)
        snprintf(out, outlen, "%s (%s)", match->cpu_name, id->text);
    else
        snprintf(out, outlen, "%s", id->text);
}

/* Why a group of hardware events cannot be measured on `cpu` (the CPU in
 * words): PM_FALLBACK_* bits, 0 when it can, and a sentence. One rule for
 * every group and CPU (docs/event-groups.md, "Fallback"). */
static unsigned pm_group_unavailable(const struct pm_event_group_def *g, const char *cpu,
                                     char *why, size_t whylen)
{
    unsigned causes = pm_pmu_present() ? 0 : PM_FALLBACK_NO_PMU;
    why[0] = '\0';
    if (g->per_model) {
        const struct pm_cpu_model *m = pm_cpu_model_detect();
        causes |= PM_FALLBACK_NO_TABLES;
        if (!m)
            snprintf(why, whylen, "perfmark has no event tables for %s", cpu);
        else if (!pm_cpu_model_group_named(m, g->name))
            snprintf(why, whylen, "perfmark's tables for %s have no '%s' group", cpu, g->name);
        else if (!pm_pfm_pmu_encodes(m->pfm_pmu))
            snprintf(why, whylen, "the installed libpfm4 has no '%s' event table for %s",
                     m->pfm_pmu, cpu);
        else
            causes &= ~(unsigned)PM_FALLBACK_NO_TABLES;
    }
    if (causes & PM_FALLBACK_NO_PMU) {
        size_t used = strlen(why);
        snprintf(why + used, whylen - used, "%sthis machine has no hardware PMU",
                 used ? ", and " : "");
    }
    return causes;
}

/* Group g falls back to sw: its clause joins the one sentence (the caller
 * ends it once, with what is measured instead), its causes the others. */
static void pm_group_fallback(struct pm_eventset *set, const char *group, unsigned causes,
                              const char *why)
{
    size_t used = strlen(set->fallback);
    snprintf(set->fallback + used, sizeof set->fallback - used, "%sgroup '%s'%s: %s",
             used ? "; " : "", group, used ? "" : " cannot be measured here", why);
    set->fallback_causes |= causes;
}

/* PERFMARK_TOPDOWN_LEVELS=2: TopDown level 2 also where it multiplexes
 * with level 1 (AMD Zen 4/5). Read here, not in pm_config.c: `perfmark
 * list` and `check` expand groups too. */
int pm_topdown_level2_asked(void)
{
    const char *v = getenv("PERFMARK_TOPDOWN_LEVELS");
    return v && strcmp(v, "2") == 0;
}

/* The events of a group that depends on the CPU model (topdown, branch,
 * cache, mem), qualified with the model's PMU; the caller has checked
 * (pm_group_unavailable) that the model has the group. */
static int pm_model_group_names(struct pm_eventset *set, const char *group,
                                char names[][PM_EVENT_NAME_LEN], const char **list)
{
    const struct pm_cpu_model *m = pm_cpu_model_detect();
    const struct pm_model_group *mg = pm_cpu_model_group_named(m, group);
    if (!mg)
        return -1;
    int topdown = strcmp(group, "topdown") == 0, levels = m->td_levels;
    int max = PM_MODEL_MAX_EVENTS;
    /* Zen 4/5 level 2 takes six more counters than there are: the two
     * groups multiplex, level 1 becomes an estimate and a region shorter
     * than a rotation loses its breakdown. Only when asked for. */
    if (topdown && m->td_method == PM_TD_METHOD_ZEN4 && !pm_topdown_level2_asked()) {
        max = PM_TD_ZEN4_L1_EVENTS;
        levels = 1;
    }
    int n = 0;
    for (int i = 0; i < max && mg->events[i].pfm; i++)
        if (pm_cpu_model_event_name(m, mg->events[i].pfm, names[n], PM_EVENT_NAME_LEN) == 0)
            list[n] = names[n], n++;
    list[n] = NULL;
    /* the report finds the group's derived metrics through the model */
    snprintf(set->model, sizeof set->model, "%s", m->name);
    if (topdown) {
        set->td_method = (int)m->td_method;
        set->td_levels = levels;
    }
    return 0;
}

/* Names of a request, expanding group names; returns the count. */
static int pm_request_names(const char *request, char names[][PM_EVENT_NAME_LEN], int max,
                            struct pm_eventset *set)
{
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", request);
    int n = 0, fell_back = 0;
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        while (isspace((unsigned char)*tok))
            tok++;
        char *end = tok + strlen(tok);
        while (end > tok && isspace((unsigned char)end[-1]))
            *--end = '\0';
        if (!*tok)
            continue;
        const struct pm_event_group_def *g = pm_event_group_find(tok);
        const char *const *list = NULL;
        const char *single[2] = {tok, NULL};
        static char model_names[PM_MODEL_MAX_EVENTS][PM_EVENT_NAME_LEN];
        const char *model_list[PM_MODEL_MAX_EVENTS + 1];
        char why[PM_NOTE_LEN / 2];
        unsigned causes = g && g->needs_pmu ? pm_group_unavailable(g, set->cpu, why, sizeof why)
                                            : 0;
        if (causes) {
            pm_group_fallback(set, g->name, causes, why);
            fell_back = 1;
            list = pm_event_group_find("sw")->events;
        } else if (g && g->per_model) {
            if (pm_model_group_names(set, g->name, model_names, model_list) != 0)
                continue;
            list = model_list;
        } else if (g && strcmp(g->name, "default") == 0) {
            list = pm_pmu_present() ? pm_default_with_pmu : pm_event_group_find("sw")->events;
        } else {
            list = g ? g->events : single;
        }
        for (int i = 0; list[i]; i++) {
            int dup = 0;
            for (int k = 0; k < n; k++)
                dup |= strcmp(names[k], list[i]) == 0;
            if (dup)
                continue;
            if (n == max) {
                pm_note(set, "more than %d events requested; '%s' and later ones are ignored",
                        PM_MAX_EVENTS, list[i]);
                goto done;
            }
            snprintf(names[n++], PM_EVENT_NAME_LEN, "%s", list[i]);
        }
    }
done:
    if (fell_back) {  /* the groups' clauses, then what is measured instead */
        size_t used = strlen(set->fallback);
        snprintf(set->fallback + used, sizeof set->fallback - used,
                 "; measuring the 'sw' group instead");
    }
    return n;
}

/* The kernel counts Intel's TopDown metrics only in a group led by the
 * slots fixed counter (config 0x400 on the core PMU); such an event leads its
 * group itself instead of the dummy. */
static int pm_open_leader(const struct pm_event *ev)
{
    struct perf_event_attr attr;
    if (ev) {
        attr = ev->attr;
        attr.disabled = 1;
    } else {
        pm_leader_attr(&attr, 0);
    }
    return pm_perf_open(&attr, -1, -1);
}

/* Why events were dropped, for one sentence per reason. */
struct pm_drops {
    int n;
    char name[PM_MAX_EVENTS][PM_EVENT_NAME_LEN];
    char why[PM_MAX_EVENTS][160];
};

static void pm_drops_note(struct pm_eventset *set, const struct pm_drops *d)
{
    int done[PM_MAX_EVENTS] = {0};
    for (int i = 0; i < d->n; i++) {
        if (done[i])
            continue;
        char names[PM_NOTE_LEN] = "";
        int count = 0;
        for (int k = i; k < d->n; k++) {
            if (done[k] || strcmp(d->why[k], d->why[i]) != 0)
                continue;
            done[k] = 1;
            size_t used = strlen(names);
            if (used < 300)
                snprintf(names + used, sizeof names - used, "%s'%s'", count ? ", " : "",
                         d->name[k]);
            count++;
        }
        pm_note(set, "event%s %s dropped: %s", count > 1 ? "s" : "", names, d->why[i]);
    }
}

/* Open the encoded events as real groups on this thread: members join the
 * current group until the kernel refuses one (EINVAL/ENOSPC: it cannot be
 * scheduled with the others); then a new group starts. An event that fails
 * even alone is dropped; `d` collects why. */
static void pm_probe_and_group(struct pm_eventset *set, struct pm_event *cand, int ncand,
                               struct pm_drops *d)
{
    int leader[PM_MAX_GROUPS], fds[PM_MAX_EVENTS], nfds = 0;
    int ngroups = 0, members = 0;
    set->n = 0;
    d->n = 0;
    memset(set->led_by_event, 0, sizeof set->led_by_event);

    for (int i = 0; i < ncand; i++) {
        int leads = pm_event_must_lead(&cand[i]);
        for (int attempt = 0; attempt < 2; attempt++) {
            if (ngroups == 0 || leads || (attempt == 1 && members > 0)) {
                if (ngroups == PM_MAX_GROUPS)
                    break;
                leader[ngroups] = pm_open_leader(leads ? &cand[i] : NULL);
                if (leader[ngroups] < 0 && !leads) {
                    pm_note(set, "cannot open a counter group leader (%s); counting nothing",
                            strerror(errno));
                    goto done;
                }
                if (leader[ngroups] >= 0) {
                    set->led_by_event[ngroups] = leads;
                    ngroups++;
                    members = 0;
                }
            } else if (attempt == 1) {
                break;  /* already alone in a fresh group: retrying will not help */
            }
            int fd = -1;
            /* ngroups > 0: a leading event whose own group failed to open
             * (no PMU) may come before any group exists */
            if (leads && ngroups > 0 && leader[ngroups - 1] >= 0 &&
                set->led_by_event[ngroups - 1] && members == 0) {
                fd = leader[ngroups - 1];  /* the event is the leader */
            } else if (!leads) {
                struct perf_event_attr attr = cand[i].attr;
                fd = pm_perf_open(&attr, -1, leader[ngroups - 1]);
                if (fd >= 0)
                    fds[nfds++] = fd;
            }
            if (fd >= 0) {
                members++;
                set->ev[set->n] = cand[i];
                set->ev[set->n].group = ngroups - 1;
                set->n++;
                break;
            }
            int e = errno;
            int retry = !leads && (e == EINVAL || e == ENOSPC || e == E2BIG) && members > 0;
            if (!retry) {
                snprintf(d->name[d->n], sizeof d->name[d->n], "%s", cand[i].name);
                snprintf(d->why[d->n], sizeof d->why[d->n], "%s",
                         e == ENOSPC || e == EINVAL
                             ? "cannot be scheduled, even alone in its own group"
                             : pm_event_open_failure(e));
                d->n++;
                break;
            }
        }
    }
done:
    /* A trailing leader without members would cost a read for nothing. */
    set->ngroups = set->n ? set->ev[set->n - 1].group + 1 : 0;
    for (int i = 0; i < nfds; i++)
        close(fds[i]);
    for (int g = 0; g < ngroups; g++)
        close(leader[g]);
}

static int pm_encode_names(struct pm_eventset *set, char names[][PM_EVENT_NAME_LEN], int n,
                           struct pm_event *cand)
{
    int user_only = pm_user_only();
    int ncand = 0;
    char err[PM_NOTE_LEN];
    for (int i = 0; i < n; i++) {
        if (pm_event_encode(names[i], user_only, &cand[ncand], err, sizeof err) == 0)
            ncand++;
        else
            pm_note(set, "%s; it is not measured", err);
    }
    return ncand;
}

void pm_eventset_build(const char *request, struct pm_eventset *set)
{
    static char names[PM_MAX_EVENTS][PM_EVENT_NAME_LEN];
    static struct pm_event cand[PM_MAX_EVENTS];
    static struct pm_drops drops;
    memset(set, 0, sizeof *set);
    snprintf(set->requested, sizeof set->requested, "%s", request);

    const struct pm_event_group_def *g = pm_event_group_find(request);
    snprintf(set->group_name, sizeof set->group_name, "%s", g ? g->name : "custom");
    if (g && strcmp(g->name, "default") == 0 && !pm_pmu_present()) {
        snprintf(set->group_name, sizeof set->group_name, "sw");
        snprintf(set->fallback, sizeof set->fallback,
                 "this machine has no hardware PMU: the default group measures software "
                 "events (sw) instead of cycles and instructions");
        set->fallback_causes = PM_FALLBACK_NO_PMU;
    }
    pm_cpu_describe(set->cpu, sizeof set->cpu);
    if (pm_cpu_id()->from_override)
        pm_note(set, "PERFMARK_TEST_CPU: perfmark sees %s instead of this machine's CPU (a "
                "setting for tests)", pm_cpu_id()->text);
    else if (pm_cpu_id_override_error()[0])
        pm_note(set, "%s", pm_cpu_id_override_error());

    int n = pm_request_names(request, names, PM_MAX_EVENTS, set);
    if (g && g->needs_pmu && set->fallback_causes)  /* the group itself fell back */
        snprintf(set->group_name, sizeof set->group_name, "sw");
    if (n > 0 && pm_user_only())  /* else kernel time vanishes from counts unexplained */
        pm_note(set, "not root and perf_event_paranoid=%d: counting user space only "
                "(exclude_kernel; the kernel's share of each event is not counted)",
                pm_paranoid_level());
    int ncand = pm_encode_names(set, names, n, cand);
    pm_probe_and_group(set, cand, ncand, &drops);
    if (set->n > 0 || n == 0) {
        pm_drops_note(set, &drops);
        pm_topdown_check(set);
        return;
    }

    /* Nothing requested can be counted: measure sw rather than nothing, and
     * say so in one sentence with the reason. */
    char dropped[512] = "";
    for (int i = 0; i < n; i++) {
        size_t used = strlen(dropped);
        snprintf(dropped + used, sizeof dropped - used, "%s%s", i ? ", " : "", names[i]);
    }
    char why[200];
    snprintf(why, sizeof why, "%s", drops.n ? drops.why[0] : "they could not be encoded");
    n = pm_request_names("sw", names, PM_MAX_EVENTS, set);
    ncand = pm_encode_names(set, names, n, cand);
    pm_probe_and_group(set, cand, ncand, &drops);
    pm_drops_note(set, &drops);
    set->td_method = 0;
    set->fallback_causes = pm_pmu_present() ? PM_FALLBACK_NOT_COUNTED : PM_FALLBACK_NO_PMU;
    snprintf(set->group_name, sizeof set->group_name, "%s", set->n ? "sw" : "none");
    snprintf(set->fallback, sizeof set->fallback,
             "%s%s%snone of the requested events (%.300s) can be counted here: %s; measuring %s "
             "instead", g ? "group '" : "", g ? g->name : "", g ? "': " : "", dropped, why,
             set->n ? "the 'sw' group" : "time only (software events failed too)");
}

/* TopDown needs its slots leader: without it the breakdown cannot be made. */
void pm_topdown_check(struct pm_eventset *set)
{
    if (set->td_method != PM_TD_METHOD_PERF_METRICS)
        return;
    int have_slots = 0;
    for (int i = 0; i < set->n; i++)
        have_slots |= pm_event_must_lead(&set->ev[i]);
    if (!have_slots) {
        pm_note(set, "the TopDown slots counter could not be opened: no TopDown breakdown "
                "(the other events are still counted)");
        set->td_method = 0;
    }
}

int pm_event_probe(const char *name, char *why, size_t whylen)
{
    struct pm_event ev;
    if (pm_event_encode(name, pm_user_only(), &ev, why, whylen) != 0)
        return 0;
    int fd = pm_perf_open(&ev.attr, -1, -1);
    if (fd < 0) {
        snprintf(why, whylen, "%s", pm_event_open_failure(errno));
        return 0;
    }
    close(fd);
    why[0] = '\0';
    return 1;
}
