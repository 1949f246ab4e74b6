#include "pm_config.h"
#include "pm_log.h"
#include "pm_names.h"
#include "pm_output.h"
#include "pm_pin.h"
#include "pm_sample_spec.h"
#include "pm_series.h"
#include "pm_unwind.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int pm_parse_bool(const char *text, int fallback, int *bad)
{
    static const char *const yes[] = {"1", "yes", "true", "on"};
    static const char *const no[] = {"0", "no", "false", "off", ""};
    for (size_t i = 0; i < sizeof yes / sizeof *yes; i++)
        if (strcasecmp(text, yes[i]) == 0)
            return 1;
    for (size_t i = 0; i < sizeof no / sizeof *no; i++)
        if (strcasecmp(text, no[i]) == 0)
            return 0;
    *bad = 1;
    return fallback;
}

int pm_parse_throttle(const char *text, struct pm_throttle *out)
{
    const struct pm_throttle defaults = {1, PM_THROTTLE_WARMUP, PM_THROTTLE_K};
    *out = defaults;
    if (strcasecmp(text, "on") == 0 || strcasecmp(text, "default") == 0)
        return 0;
    if (strcasecmp(text, "off") == 0) {
        out->on = 0;
        return 0;
    }
    char buf[128];
    if (strlen(text) >= sizeof buf)
        return -1;
    snprintf(buf, sizeof buf, "%s", text);
    char *save = NULL;
    int any = 0;
    for (char *item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(item, '=');
        if (!eq)
            goto bad;
        *eq = '\0';
        char *end;
        errno = 0;
        long v = strtol(eq + 1, &end, 10);
        if (errno || end == eq + 1 || *end || v < 1 || v > 1000000000L)
            goto bad;
        if (strcmp(item, "warmup") == 0)
            out->warmup = v;
        else if (strcmp(item, "k") == 0)
            out->k = v;
        else
            goto bad;
        any = 1;
    }
    if (any)
        return 0;
bad:
    *out = defaults;
    return -1;
}

static int pm_env_bool(const char *name, int fallback)
{
    const char *v = getenv(name);
    if (!v)
        return fallback;
    int bad = 0;
    int value = pm_parse_bool(v, fallback, &bad);
    if (bad)
        pm_msg(PM_MSG_ONCE, "%s='%.64s' is not a boolean (use 1 or 0); using %d",
               name, v, fallback);
    return value;
}

/* PERFMARK_SAMPLE_CALLCHAIN: dwarf (or a true boolean), fp, or none (or a
 * false one). */
static int pm_env_callchain(void)
{
    const char *v = getenv("PERFMARK_SAMPLE_CALLCHAIN");
    if (!v || !*v)
        return PM_CHAIN_NONE;
    if (strcasecmp(v, "dwarf") == 0)
        return PM_CHAIN_DWARF;
    if (strcasecmp(v, "fp") == 0)
        return PM_CHAIN_FP;
    if (strcasecmp(v, "none") == 0)
        return PM_CHAIN_NONE;
    int bad = 0;
    int on = pm_parse_bool(v, 0, &bad);
    if (bad)
        pm_msg(PM_MSG_ONCE, "PERFMARK_SAMPLE_CALLCHAIN='%.64s' is not dwarf, fp or none; "
               "recording no callers", v);
    return on && !bad ? PM_CHAIN_DWARF : PM_CHAIN_NONE;
}

/* A non-negative integer no larger than max, or -1 (with a message) if the
 * text is anything else. */
static long pm_env_long(const char *name, long max)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return -1;
    char *end;
    errno = 0;
    long value = strtol(v, &end, 10);
    if (errno || *end || value < 0 || value > max) {
        pm_msg(PM_MSG_ONCE, "%s='%.64s' is not an integer in 0..%ld; ignoring it", name, v, max);
        return -1;
    }
    return value;
}

static void pm_env_string(const char *name, char *dst, size_t size, const char *fallback)
{
    const char *v = getenv(name);
    if (!v || !*v)
        v = fallback;
    if (strlen(v) >= size) {
        pm_msg(PM_MSG_ONCE, "%s is %zu bytes long, more than %zu; using '%s'", name,
               strlen(v), size - 1, fallback);
        v = fallback;
    }
    snprintf(dst, size, "%s", v);
}

void pm_config_read(struct pm_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->quiet = pm_env_bool("PERFMARK_QUIET", 0);
    pm_log_set_quiet(cfg->quiet);
    cfg->enable_set = getenv("PERFMARK_ENABLE") != NULL;
    cfg->enable = pm_env_bool("PERFMARK_ENABLE", 0);
    long pid = pm_env_long("PERFMARK_PID", 1L << 30);
    cfg->launch_pid = pid < 0 ? 0 : pid;
    pm_env_string("PERFMARK_EVENTS", cfg->events, sizeof cfg->events, "default");
    pm_env_string("PERFMARK_OUTPUT", cfg->output, sizeof cfg->output, "");
    pm_env_string("PERFMARK_SUMMARY_OUTPUT", cfg->summary_output, sizeof cfg->summary_output, "");
    pm_env_string("PERFMARK_FALLBACK_DIR", cfg->fallback_dir, sizeof cfg->fallback_dir, "");
    cfg->bind_cpu = (int)pm_env_long("PERFMARK_BIND_CPU", 1 << 20);
    cfg->pinned = pm_env_bool("PERFMARK_PINNED", 0);
    long max_regions = pm_env_long("PERFMARK_MAX_REGIONS", 100000000L);
    cfg->max_regions = max_regions > 0 ? (int)max_regions : PM_DEFAULT_MAX_REGIONS;
    /* auto: the TopDown group through rdpmc where the kernel grants it;
     * read: always read() (docs/topdown.md, "Long regions and precision") */
    const char *td_read = getenv("PERFMARK_TOPDOWN_READ");
    cfg->topdown_rdpmc = 1;
    if (td_read && *td_read) {
        if (strcmp(td_read, "read") == 0)
            cfg->topdown_rdpmc = 0;
        else if (strcmp(td_read, "auto") != 0)
            pm_msg(PM_MSG_ONCE, "PERFMARK_TOPDOWN_READ='%.64s' is not auto or read; using auto",
                   td_read);
    }
    cfg->job_gather_max = pm_env_long("PERFMARK_JOB_GATHER_MAX", 1L << 40);
    cfg->summary_above = pm_env_long("PERFMARK_SUMMARY_ABOVE", 1L << 50);
    cfg->summary_keep = pm_env_long("PERFMARK_SUMMARY_KEEP", 1L << 40);
    const char *detail = getenv("PERFMARK_DETAIL");
    cfg->detail = PM_DETAIL_AUTO;
    if (detail && *detail) {
        if (strcmp(detail, "full") == 0)
            cfg->detail = PM_DETAIL_FULL;
        else if (strcmp(detail, "summary") == 0)
            cfg->detail = PM_DETAIL_SUMMARY;
        else if (strcmp(detail, "auto") != 0)
            pm_msg(PM_MSG_ONCE, "PERFMARK_DETAIL='%.64s' is not auto, full or summary; using auto",
                   detail);
    }
    const char *threads = getenv("PERFMARK_THREADS");
    cfg->threads_at_birth = 1;
    if (threads && *threads) {
        if (strcmp(threads, "markers") == 0)
            cfg->threads_at_birth = 0;
        else if (strcmp(threads, "own") == 0)
            cfg->threads_own = 1;
        else if (strcmp(threads, "all") != 0)
            pm_msg(PM_MSG_ONCE, "PERFMARK_THREADS='%.64s' is not all, own or markers; counting "
                   "every thread from its start", threads);
    }
    pm_env_string("PERFMARK_THREADS_EXCLUDE", cfg->threads_exclude, sizeof cfg->threads_exclude,
                  "");
    cfg->thread_ring_kb = pm_env_long("PERFMARK_THREAD_RING_KB", 1L << 20);
    if (cfg->thread_ring_kb <= 0)
        cfg->thread_ring_kb = 512;
    const char *throttle = getenv("PERFMARK_THROTTLE");
    if (pm_parse_throttle(throttle && *throttle ? throttle : "on", &cfg->throttle) != 0)
        pm_msg(PM_MSG_ONCE, "PERFMARK_THROTTLE='%.64s' is not on, off or warmup=N,k=K "
               "(N, K ≥ 1); using warmup=%d,k=%d", throttle, PM_THROTTLE_WARMUP, PM_THROTTLE_K);
    pm_env_string("PERFMARK_SAMPLE", cfg->sample, sizeof cfg->sample, "");
    const char *interval = getenv("PERFMARK_INTERVAL");
    if (interval && *interval && strcmp(interval, "0") != 0) {
        char why[160];
        uint64_t ns = 0;
        if (pm_series_parse_interval(interval, &ns, why, sizeof why) == 0)
            cfg->interval_ns = ns;
        else
            pm_msg(PM_MSG_ONCE, "PERFMARK_INTERVAL: %s; no counts over time are kept", why);
    }
    cfg->series_memory_mb = pm_env_long("PERFMARK_SERIES_MEMORY", 1L << 20);
    cfg->node = pm_env_bool("PERFMARK_NODE", 0);
    const char *count = getenv("PERFMARK_COUNT");
    if (count && *count) {
        if (strcasecmp(count, "sampled") == 0)
            cfg->count_sampled = 1;
        else if (strcasecmp(count, "exact") != 0)
            pm_msg(PM_MSG_ONCE, "PERFMARK_COUNT='%.64s' is not exact or sampled; counting "
                   "exactly", count);
    }
    long pages = pm_env_long("PERFMARK_SAMPLE_PAGES", 1L << 16);
    if (pages == 0 || (pages > 0 && (pages & (pages - 1)))) {
        pm_msg(PM_MSG_ONCE, "PERFMARK_SAMPLE_PAGES=%ld is not a power of two ≥ 1; using the "
               "default", pages);
        pages = -1;
    }
    cfg->sample_pages = pages > 0 ? (unsigned)pages : 0;
    cfg->sample_callchain = pm_env_callchain();
    long stack = pm_env_long("PERFMARK_SAMPLE_STACK", PM_UNWIND_STACK_MAX);
    if (stack >= 0 && (stack < 64 || stack % 8)) {
        pm_msg(PM_MSG_ONCE, "PERFMARK_SAMPLE_STACK=%ld is not a multiple of 8 in 64..%u; "
               "copying %u bytes of stack per sample", stack, PM_UNWIND_STACK_MAX,
               PM_UNWIND_STACK_DEFAULT);
        stack = -1;
    }
    cfg->sample_stack = stack > 0 ? (unsigned)stack : 0;
    cfg->sample_max_sites = pm_env_long("PERFMARK_SAMPLE_MAX_SITES", 1L << 30);
    const char *pin_cpus = getenv("PERFMARK_PIN_CPUS");
    cfg->pin_cpus[0] = '\0';
    if (pin_cpus && strlen(pin_cpus) >= sizeof cfg->pin_cpus) /* cut, it would be another list */
        pm_msg(PM_MSG_ONCE, "PERFMARK_PIN_CPUS is longer than %zu bytes; shares from every CPU "
               "this process may use", sizeof cfg->pin_cpus - 1);
    else if (pin_cpus)
        snprintf(cfg->pin_cpus, sizeof cfg->pin_cpus, "%s", pin_cpus);
    const char *pin = getenv("PERFMARK_PIN");
    cfg->pin = PM_PIN_KEEP;
    if (pin && *pin) {
        int mode = pm_pin_parse(pin);
        if (mode < 0)
            pm_msg(PM_MSG_ONCE, "PERFMARK_PIN='%.64s' is not one of keep, none, ranks, threads; "
                   "keeping the binding as found", pin);
        else
            cfg->pin = mode;
    }
}
