#include "pm_sample_spec.h"
#include "pm_unwind.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

/* The kernel's software clocks never fire more often than every 10 us
 * (perf_swevent_start_hrtimer), whatever the period asks. */
#define PM_HRTIMER_FLOOR_NS 10000ull
#define PM_PERIOD_MAX (1ull << 62)

int pm_sample_is_time_event(const struct perf_event_attr *attr)
{
    return attr->type == PERF_TYPE_SOFTWARE &&
           (attr->config == PERF_COUNT_SW_CPU_CLOCK || attr->config == PERF_COUNT_SW_TASK_CLOCK);
}

int pm_sample_parse_period(const char *text, int time_event, uint64_t *period, char *err,
                           size_t errlen)
{
    static const struct {
        const char *unit;
        uint64_t ns;
    } units[] = {{"ns", 1}, {"us", 1000}, {"ms", 1000000}, {"s", 1000000000}};
    *period = 0;
    if (!isdigit((unsigned char)text[0])) {
        snprintf(err, errlen, "the period '%s' is not a number", text);
        return -1;
    }
    errno = 0;
    char *end;
    unsigned long long v = strtoull(text, &end, 10);
    uint64_t scale = 1;
    if (*end) {
        size_t k = 0;
        while (k < sizeof units / sizeof *units && strcmp(end, units[k].unit) != 0)
            k++;
        if (k == sizeof units / sizeof *units) {
            snprintf(err, errlen, "the period '%s' has an unknown unit '%s' (use ns, us, ms "
                     "or s for time events, a plain count for others)", text, end);
            return -1;
        }
        if (!time_event) {
            snprintf(err, errlen, "the period '%s' is a time, but this event counts, not "
                     "time: give the number of events between samples", text);
            return -1;
        }
        scale = units[k].ns;
    }
    if (errno == ERANGE || v > PM_PERIOD_MAX / scale) {
        snprintf(err, errlen, "the period '%s' is too large", text);
        return -1;
    }
    if (v == 0) {
        snprintf(err, errlen, "a period of 0 samples nothing");
        return -1;
    }
    *period = v * scale;
    return 0;
}

uint64_t pm_sample_max_rate(void)
{
    FILE *f = fopen("/proc/sys/kernel/perf_event_max_sample_rate", "re");
    unsigned long long rate = 0;
    if (f) {
        if (fscanf(f, "%llu", &rate) != 1)
            rate = 0;
        fclose(f);
    }
    return rate;
}

uint64_t pm_sample_allowed_period(uint64_t period_ns, uint64_t max_rate)
{
    uint64_t floor = PM_HRTIMER_FLOOR_NS;
    if (max_rate) {
        uint64_t by_rate = (1000000000ull + max_rate - 1) / max_rate;
        if (by_rate > floor)
            floor = by_rate;
    }
    return period_ns < floor ? floor : period_ns;
}

uint64_t pm_sample_default_period(const struct perf_event_attr *attr)
{
    if (pm_sample_is_time_event(attr))
        return PM_SAMPLE_TIME_DEFAULT_NS;
    if (attr->type == PERF_TYPE_SOFTWARE)
        return 100;
    return 1000003;
}

void pm_sample_attr(struct perf_event_attr *attr, uint64_t period, int callchain,
                    unsigned stack_bytes, unsigned ring_bytes)
{
    attr->sample_period = period;
    attr->freq = 0;
    attr->sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP;
    if (callchain == PM_CHAIN_FP)
        attr->sample_type |= PERF_SAMPLE_CALLCHAIN;
    if (callchain == PM_CHAIN_DWARF) {
        attr->sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
        attr->sample_regs_user = PM_UNWIND_REGS_MASK;
        attr->sample_stack_user = stack_bytes;
    }
    attr->sample_id_all = 1;  /* LOST and THROTTLE records name their event too */
    attr->disabled = 1;       /* enabled once the ring is mapped */
    attr->inherit = 0;
    attr->exclude_hv = 1;
    attr->exclude_callchain_kernel = 1;
    /* Wake the drainer when half the ring is used (pm_sampler.c). */
    attr->watermark = 1;
    attr->wakeup_watermark = ring_bytes / 2 ? ring_bytes / 2 : 1;
    attr->read_format = 0;
}

static void pm_sample_note(struct pm_sample_spec *spec, const char *fmt, const char *a,
                           const char *b)
{
    if (spec->nnotes >= PM_SAMPLE_MAX_NOTES)
        return;
    snprintf(spec->notes[spec->nnotes++], PM_NOTE_LEN, fmt, a, b);
}

static const char *pm_ns_text(uint64_t ns, char *buf, size_t len)
{
    if (ns % 1000000000ull == 0)
        snprintf(buf, len, "%llus", (unsigned long long)(ns / 1000000000ull));
    else if (ns % 1000000ull == 0)
        snprintf(buf, len, "%llums", (unsigned long long)(ns / 1000000ull));
    else if (ns % 1000ull == 0)
        snprintf(buf, len, "%lluus", (unsigned long long)(ns / 1000ull));
    else
        snprintf(buf, len, "%lluns", (unsigned long long)ns);
    return buf;
}

/* One item "EVENT@PERIOD": encoded, its period checked; 0, or -1 with the
 * reason in why. */
static int pm_sample_item(const char *item, struct pm_sample_spec *spec, char *why,
                          size_t whylen)
{
    struct pm_sample_event *se = &spec->ev[spec->n];
    memset(se, 0, sizeof *se);
    snprintf(se->requested, sizeof se->requested, "%s", item);
    char name[PM_EVENT_NAME_LEN];
    const char *at = strchr(item, '@');
    size_t len = at ? (size_t)(at - item) : strlen(item);
    if (len >= sizeof name) {
        snprintf(why, whylen, "the event name is longer than %zu bytes", sizeof name - 1);
        return -1;
    }
    memcpy(name, item, len);
    name[len] = '\0';
    struct pm_event ev;
    if (pm_event_encode(name, pm_user_only(), &ev, why, whylen) != 0)
        return -1;
    snprintf(se->name, sizeof se->name, "%s", name);
    se->attr = ev.attr;
    se->time_event = pm_sample_is_time_event(&ev.attr);
    if (!at || !at[1]) {
        if (!se->time_event) {
            snprintf(why, whylen, "it needs a period: '%s@N' samples every N events", name);
            return -1;
        }
        se->period = PM_SAMPLE_TIME_DEFAULT_NS;
    } else if (pm_sample_parse_period(at + 1, se->time_event, &se->period, why, whylen) != 0) {
        return -1;
    }
    if (se->time_event) {
        uint64_t allowed = pm_sample_allowed_period(se->period, pm_sample_max_rate());
        if (allowed != se->period) {
            char want[32], got[32], note[PM_NOTE_LEN];
            snprintf(note, sizeof note, "sampling '%%s' every %s is faster than this kernel "
                     "allows (perf_event_max_sample_rate, and 10us for its clocks): sampling "
                     "every %s instead%%s",
                     pm_ns_text(se->period, want, sizeof want), pm_ns_text(allowed, got, sizeof got));
            pm_sample_note(spec, note, name, "");
            se->period = allowed;
        }
    }
    pm_sample_attr(&se->attr, se->period, spec->callchain, spec->stack_bytes,
                   spec->pages * 4096u);
    /* Opened for real once here, so that the reason is said once, not per
     * thread. */
    int fd = pm_perf_open(&se->attr, -1, -1);
    if (fd < 0) {
        snprintf(why, whylen, "%s", pm_event_open_failure(errno));
        return -1;
    }
    close(fd);
    for (int i = 0; i < spec->n; i++)
        if (strcmp(spec->ev[i].name, name) == 0) {
            snprintf(why, whylen, "it is already sampled (as '%s')", spec->ev[i].requested);
            return -1;
        }
    return 0;
}

void pm_sample_spec_build(const char *request, unsigned pages, int callchain,
                          unsigned stack_bytes, struct pm_sample_spec *spec)
{
    memset(spec, 0, sizeof *spec);
    snprintf(spec->requested, sizeof spec->requested, "%s", request ? request : "");
    if (!request || !*request || strcasecmp(request, "none") == 0)
        return;
    if (callchain == PM_CHAIN_DWARF) {
        char why[PM_NOTE_LEN / 2];
        if (pm_unwind_load(why, sizeof why) != 0) {
            pm_sample_note(spec, "cannot unwind call paths with DWARF (%s): recording frame-"
                           "pointer chains instead, which stop early in code built without "
                           "frame pointers%s", why, "");
            callchain = PM_CHAIN_FP;
        }
    }
    spec->callchain = callchain;
    spec->stack_bytes = stack_bytes ? stack_bytes : PM_UNWIND_STACK_DEFAULT;
    spec->pages = pages ? pages
                        : callchain == PM_CHAIN_DWARF ? PM_SAMPLE_PAGES_DWARF
                                                      : PM_SAMPLE_PAGES_DEFAULT;
    char buf[sizeof spec->requested];
    snprintf(buf, sizeof buf, "%s", request);
    char *save = NULL;
    int asked = 0;
    for (char *item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        while (*item == ' ')
            item++;
        if (!*item)
            continue;
        asked++;
        char why[PM_NOTE_LEN / 2];
        if (spec->n == PM_MAX_SAMPLE_EVENTS) {
            pm_sample_note(spec, "cannot sample '%s': at most %s events are sampled at once; "
                           "sampling goes on without it", item, "8");
            continue;
        }
        if (pm_sample_item(item, spec, why, sizeof why) != 0) {
            pm_sample_note(spec, "cannot sample '%s': %s; sampling goes on without it", item,
                           why);
            continue;
        }
        spec->n++;
    }
    if (asked && !spec->n)
        pm_sample_note(spec, "nothing of PERFMARK_SAMPLE='%s' can be sampled here: the run "
                       "goes on without sampling%s", spec->requested, "");
}
