/* pm_events — event names to perf_event_attr, through libpfm4.
 *
 * A request (PERFMARK_EVENTS) is a group name from the table in
 * pm_event_groups.c or a comma list of libpfm4 event names with modifiers
 * (u, k, e, i, c=N, ...). pm_eventset_build() encodes each name, then opens
 * the events for real on the calling thread to learn which ones this machine
 * counts and how many fit in one kernel group; what does not work is dropped
 * with a reason, and a request of which nothing works falls back to `sw`. */
#ifndef PM_EVENTS_H
#define PM_EVENTS_H

#include <linux/perf_event.h>
#include <stddef.h>
#include <stdio.h>

#define PM_MAX_EVENTS 32
#define PM_MAX_GROUPS 8
#define PM_EVENT_NAME_LEN 128
#define PM_NOTE_LEN 768

struct pm_event_group_def {
    const char *name;
    const char *description;
    int needs_pmu;               /* hardware events: counts only where a PMU exists */
    int per_model;               /* events come from the CPU-model tables (pm_cpu_models.c) */
    const char *events[8];       /* NULL-terminated */
};

/* The table, terminated by an entry whose name is NULL. */
extern const struct pm_event_group_def pm_event_groups[];
const struct pm_event_group_def *pm_event_group_find(const char *name);

struct pm_event {
    char name[PM_EVENT_NAME_LEN];  /* as the user (or group table) wrote it */
    char pfm_name[256];            /* libpfm4's fully qualified name */
    struct perf_event_attr attr;   /* attr.size set, disabled = 0 */
    int group;                     /* kernel group index, after pm_eventset_build */
};

struct pm_eventset {
    int n;
    struct pm_event ev[PM_MAX_EVENTS];  /* ordered by group */
    int ngroups;
    char group_name[64];        /* table group measured, or "custom" */
    char requested[1024];
    char fallback[PM_NOTE_LEN]; /* why the request was replaced, or "" */
    unsigned fallback_causes;   /* PM_FALLBACK_* bits: why (part of) the request was replaced */
    int led_by_event[PM_MAX_GROUPS]; /* group led by its first event (TopDown slots) */
    int td_method;              /* enum pm_td_method when the topdown group is measured */
    int td_levels;
    char model[32];             /* CPU model whose tables were used, or "" */
    char cpu[160];              /* the CPU perfmark sees (pm_cpu_describe) */
    int nnotes;                 /* problems to tell the user about */
    char notes[PM_MAX_EVENTS][PM_NOTE_LEN];
};

/* Why a request was replaced (pm_eventset.fallback_causes), and the words
 * the file's `fallback_cause` attribute spells them with. */
enum {
    PM_FALLBACK_NO_TABLES = 1,   /* no event table for this CPU and group */
    PM_FALLBACK_NO_PMU = 2,      /* the machine has no hardware PMU */
    PM_FALLBACK_NOT_COUNTED = 4, /* nothing requested could be opened, another reason */
};
static inline void pm_fallback_cause_words(unsigned causes, char *out, size_t len)
{
    snprintf(out, len, "%s%s%s%s%s", causes & PM_FALLBACK_NO_TABLES ? "no_tables" : "",
             (causes & PM_FALLBACK_NO_TABLES) && (causes & ~1u) ? " " : "",
             causes & PM_FALLBACK_NO_PMU ? "no_pmu" : "",
             (causes & PM_FALLBACK_NO_PMU) && (causes & PM_FALLBACK_NOT_COUNTED) ? " " : "",
             causes & PM_FALLBACK_NOT_COUNTED ? "not_counted" : "");
}

/* libpfm4 loaded (dlopen, on first use) and pfm_initialize() run, once;
 * 0 or -1 (libpfm4 missing or unusable: timer only). */
int pm_events_init(void);
/* 1 if the kernel exposes a CPU PMU (cpu, cpu_core, cpu_atom, armv8...). */
int pm_pmu_present(void);
/* PERFMARK_TOPDOWN_LEVELS=2: TopDown level 2 also where its events
 * multiplex with level 1's (AMD Zen 4/5); by default only level 1 there. */
int pm_topdown_level2_asked(void);
/* kernel.perf_event_paranoid (2, the kernel's default, when unreadable). */
int pm_paranoid_level(void);
/* 1 when this process may only count user space (paranoid >= 2, unprivileged). */
int pm_user_only(void);

/* Encode one event. Returns 0, or -1 with a sentence in err naming the
 * problem (unknown event + close matches, bad modifier, bad value). The
 * kernel's software events by their plain names come from perfmark's own
 * table (pm_sw_events.c), everything else from libpfm4. */
int pm_event_encode(const char *name, int user_only, struct pm_event *ev,
                    char *err, size_t errlen);
/* The same through libpfm4 only (the unit test holds the table to it). */
int pm_event_encode_pfm(const char *name, int user_only, struct pm_event *ev,
                        char *err, size_t errlen);
/* A software event of the table into ev->attr and ev->pfm_name (the rest
 * of ev untouched): 0, or -1 when the name is not in the table. */
int pm_sw_event_encode(const char *name, int user_only, struct pm_event *ev);

/* Up to three known event or group names close to `bad`, as "a, b or c",
 * or "" when nothing is close. */
void pm_event_suggest(const char *bad, char *out, size_t outlen);

/* Resolve, probe and group a request. Never fails: the worst outcome is an
 * empty set (timer only) with notes saying why. */
void pm_eventset_build(const char *request, struct pm_eventset *set);

/* Does `name` count on this machine? 1, or 0 with the reason in why. */
int pm_event_probe(const char *name, char *why, size_t whylen);
/* 1 if the installed libpfm4 can encode names of this PMU here (raw
 * encodings always; a named table where libpfm4 has it and it is active, or
 * LIBPFM_ENCODE_INACTIVE is set). */
int pm_pfm_pmu_encodes(const char *pmu);
/* The CPU perfmark sees, in words: "AMD Zen 4 (AMD family 0x19 model 0x11
 * stepping 1)". */
void pm_cpu_describe(char *out, size_t outlen);
/* A sentence for a perf_event_open errno. */
const char *pm_event_open_failure(int err);

/* 1 if the event must lead its kernel group (TopDown slots). */
static inline int pm_event_must_lead(const struct pm_event *ev)
{
    return ev->attr.type == PERF_TYPE_RAW && ev->attr.config == 0x400;
}
/* Drop the TopDown method when its slots counter did not open. */
void pm_topdown_check(struct pm_eventset *set);

/* The attr of a group leader: a disabled software dummy. */
void pm_leader_attr(struct perf_event_attr *attr, int pinned);

/* Open one event on the calling thread (cpu -1 or a CPU, leader fd or -1). */
int pm_perf_open(struct perf_event_attr *attr, int cpu, int group_fd);
/* The same on thread `task` (0: the calling thread; perfmark attach). */
int pm_perf_open_task(struct perf_event_attr *attr, int task, int cpu, int group_fd);

#endif
