/* pm_sample_spec — what to sample: PERFMARK_SAMPLE ("EVENT@PERIOD,...")
 * turned into perf_event_attr templates for each thread's sampler
 * (pm_sampler.h), checked against what the kernel allows here.
 *
 * The period is in the event's unit: nanoseconds for the time events
 * (cpu-clock, task-clock), where ns/us/ms/s may be written; a count for every
 * other event. Nothing here stops the run: an unknown event, a period of 0
 * or one the kernel refuses each get one sentence (kept in `notes`) and the
 * event is dropped or its period moved to the nearest allowed one. */
#ifndef PM_SAMPLE_SPEC_H
#define PM_SAMPLE_SPEC_H

#include "pm_events.h"

#include <linux/perf_event.h>
#include <stddef.h>
#include <stdint.h>

#define PM_MAX_SAMPLE_EVENTS 8
/* How callers are found (PERFMARK_SAMPLE_CALLCHAIN): none; the kernel walks
 * the frame pointers; or perfmark unwinds a copy of the user stack with the
 * objects' DWARF CFI (pm_unwind.h). */
enum pm_chain_mode { PM_CHAIN_NONE, PM_CHAIN_FP, PM_CHAIN_DWARF };
/* Data pages of a ring that holds copied stacks, unless PERFMARK_SAMPLE_PAGES
 * says: 32 samples of 8 KiB. */
#define PM_SAMPLE_PAGES_DWARF 64
#define PM_SAMPLE_MAX_NOTES 16
/* Data pages of each thread's ring buffer, unless PERFMARK_SAMPLE_PAGES says. */
#define PM_SAMPLE_PAGES_DEFAULT 16
/* A time event without a period samples every millisecond. */
#define PM_SAMPLE_TIME_DEFAULT_NS 1000000ull

struct pm_sample_event {
    char name[PM_EVENT_NAME_LEN];       /* the event, as written before '@' */
    char requested[PM_EVENT_NAME_LEN + 32]; /* the whole item, as written */
    struct perf_event_attr attr;        /* encoded; sampling fields set by pm_sample_attr */
    uint64_t period;                    /* in the event's unit (ns for time events) */
    int time_event;                     /* 1: the period is nanoseconds of CPU time */
};

struct pm_sample_spec {
    int n;
    struct pm_sample_event ev[PM_MAX_SAMPLE_EVENTS];
    unsigned pages;                     /* data pages per thread ring, a power of two */
    int callchain;                      /* PM_CHAIN_*: PERFMARK_SAMPLE_CALLCHAIN as it can be had */
    unsigned stack_bytes;               /* PM_CHAIN_DWARF: user stack copied per sample */
    int counting;                       /* sampled counting: these samples are the counts
                                           (PERFMARK_COUNT=sampled; markers read nothing) */
    char requested[1024];               /* PERFMARK_SAMPLE as given */
    int nnotes;
    char notes[PM_SAMPLE_MAX_NOTES][PM_NOTE_LEN];
};

/* Parse a period: digits with, for a time event, an optional unit ns, us,
 * ms or s (no unit: ns). 0 and a value, or -1 with a sentence in err. A
 * period of 0, a unit on a counting event, or a value past 2^62 is an error. */
int pm_sample_parse_period(const char *text, int time_event, uint64_t *period, char *err,
                           size_t errlen);

/* 1 if the encoded event's unit is time (its period is in nanoseconds). */
int pm_sample_is_time_event(const struct perf_event_attr *attr);

/* The kernel's limit on samples per second (perf_event_max_sample_rate), or
 * 0 when it cannot be read. */
uint64_t pm_sample_max_rate(void);

/* A time event's period moved up to what max_rate (samples per second)
 * allows, and to the kernel's floor of 10 us for its software clocks; the
 * period unchanged when it is allowed already. */
uint64_t pm_sample_allowed_period(uint64_t period_ns, uint64_t max_rate);

/* Set the sampling fields of an encoded event's attr: period, what each
 * sample records (the event's id and the user IP; the call chain if asked),
 * disabled until the ring is mapped, the ring's wake-up mark. */
void pm_sample_attr(struct perf_event_attr *attr, uint64_t period, int callchain,
                    unsigned stack_bytes, unsigned ring_bytes);

/* The period of an event sampled for counting (PERFMARK_COUNT=sampled)
 * when the request gives none: 1 ms of CPU for time events, 1000003 for
 * hardware events (about a millisecond of cycles or instructions at 1 GHz),
 * 100 for other software events (page-faults, context-switches). */
uint64_t pm_sample_default_period(const struct perf_event_attr *attr);

/* Parse and check the request; events this machine cannot sample are dropped
 * with a note. `request` "" or "none" samples nothing. `pages`, `callchain`
 * (PM_CHAIN_*) and `stack_bytes` come from the configuration (0: the
 * defaults). DWARF call paths without the unwinder become frame-pointer
 * chains, with a note. */
void pm_sample_spec_build(const char *request, unsigned pages, int callchain,
                          unsigned stack_bytes, struct pm_sample_spec *spec);
/* "none", "fp" or "dwarf" (inline: the writer, linked into perfmark-attach
 * without the spec, names it too). */
static inline const char *pm_chain_mode_name(int mode)
{
    return mode == PM_CHAIN_DWARF ? "dwarf" : mode == PM_CHAIN_FP ? "fp" : "none";
}

#endif
