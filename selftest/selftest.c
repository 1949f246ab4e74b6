/* perfmark selftest: run kernels with known counts under perfmark (and perf
 * stat where installed), judge every count against what the kernel did.
 *
 * Ground truth comes from the kernels themselves, never from perf_event:
 * pages written, CPU time from CLOCK_THREAD_CPUTIME_ID, sleeps taken, CPU
 * moves seen with sched_getcpu, loop iterations and loads by construction.
 * perf stat counts whole processes, so its column is the difference between
 * a run of a kernel at twice the size and one at the size: start-up cancels. */
#define _GNU_SOURCE
#include "selftest.h"

#include "h5read.h"
#include "pm_cpu_id.h"
#include "pm_cpu_models.h"
#include "pm_events.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* Sizes: long enough that the markers' own cost is far inside the
 * tolerances, short enough that the whole selftest takes a few seconds. */
#define ST_PAGES 4000
#define ST_SPIN_MS 100
#define ST_SLEEPS 50
#define ST_HOPS 20
#define ST_LOOP 100000000L
#define ST_LOADS 2000000L
#define ST_SMALL_BYTES 16384L
/* more hardware events than any core has counters: the kernel multiplexes */
#define ST_MUX_EVENTS                                                                  \
    "instructions,cycles,branches,branch-misses,cache-references,cache-misses,"       \
    "L1-dcache-loads,L1-dcache-load-misses,L1-icache-load-misses,dTLB-load-misses,"  \
    "iTLB-load-misses,branch-loads,branch-load-misses,ref-cycles"

enum pm_st_verdict pm_st_judge(struct pm_st_check *c)
{
    int have_pm = !isnan(c->perfmark), have_perf = !isnan(c->perf);
    if (!have_pm && !have_perf) {
        if (!c->note[0])
            snprintf(c->note, sizeof c->note, "not measured");
        return c->verdict = PM_ST_SKIP;
    }
    int pm_ok = !have_pm || (c->perfmark >= c->lo && c->perfmark <= c->hi);
    int perf_ok = !have_perf || (c->perf >= c->perf_lo && c->perf <= c->perf_hi);
    int ok = pm_ok && perf_ok;
    if (!ok && !c->note[0])
        snprintf(c->note, sizeof c->note, "%s outside the expected range%s",
                 !pm_ok ? "perfmark's count" : "perf's count",
                 !pm_ok && !perf_ok ? " (perf's too)" : !pm_ok && have_perf ? " (perf's is in it)"
                                                                           : "");
    return c->verdict = ok ? PM_ST_PASS : PM_ST_FAIL;
}

double pm_st_truth(const char *out, const char *kernel, const char *key)
{
    char head[64], pat[64];
    snprintf(head, sizeof head, "truth %s ", kernel);
    snprintf(pat, sizeof pat, " %s=", key);
    for (const char *line = out; line && *line;) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        if (strncmp(line, head, strlen(head)) == 0) {
            char buf[512];
            snprintf(buf, sizeof buf, "%.*s", (int)(len < sizeof buf ? len : sizeof buf - 1), line);
            const char *at = strstr(buf, pat);
            if (at && !strstr(buf, " skipped="))
                return strtod(at + strlen(pat), NULL);
        }
        line = end ? end + 1 : NULL;
    }
    return -1;
}

double pm_st_perf_value(const char *perf_out, const char *event)
{
    for (const char *line = perf_out; line && *line;) {
        const char *end = strchr(line, '\n');
        char buf[512];
        size_t len = end ? (size_t)(end - line) : strlen(line);
        snprintf(buf, sizeof buf, "%.*s", (int)(len < sizeof buf ? len : sizeof buf - 1), line);
        line = end ? end + 1 : NULL;
        /* value,unit,event,run time,share,... */
        char *f[4] = {buf, NULL, NULL, NULL};
        for (int i = 1; i < 4 && f[i - 1]; i++) {
            char *comma = strchr(f[i - 1], ',');
            if (comma)
                *comma = '\0', f[i] = comma + 1;
        }
        if (!f[2])
            continue;
        size_t n = strlen(event);
        if (strncmp(f[2], event, n) != 0 || (f[2][n] && f[2][n] != ':'))
            continue;
        char *num_end = NULL;
        double v = strtod(f[0], &num_end);
        if (num_end == f[0])
            return NAN;  /* <not supported>, <not counted> */
        return strcmp(f[1], "msec") == 0 ? v * 1e6 : v;
    }
    return NAN;
}

/* ---- running things ---------------------------------------------------------- */

struct pm_st {
    char self[PATH_MAX];     /* this perfmark */
    char kernels[PATH_MAX];  /* perfmark-selftest-kernels */
    char perf[PATH_MAX];     /* perf, or "" */
    char dir[PATH_MAX];      /* scratch directory */
    int keep;
    struct pm_st_check checks[32];
    int n;
};

static int pm_st_spawn(char *const argv[], const char *out_path)
{
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        int fd = open(out_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        int err = open("/dev/null", O_WRONLY | O_CLOEXEC);
        if (fd >= 0)
            dup2(fd, 1);
        if (err >= 0)
            dup2(err, 2);
        execv(argv[0], argv);
        _exit(127);
    }
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static char *pm_st_slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    char *buf = NULL;
    size_t len = 0, cap = 0;
    char chunk[4096];
    size_t got;
    while ((got = fread(chunk, 1, sizeof chunk, f)) > 0) {
        if (len + got + 1 > cap) {
            cap = (len + got + 1) * 2;
            char *grown = realloc(buf, cap);
            if (!grown)
                break;
            buf = grown;
        }
        memcpy(buf + len, chunk, got);
        len += got;
    }
    fclose(f);
    if (buf)
        buf[len] = '\0';
    return buf;
}

/* head (a command ending with the kernels' program), then the kernels'
 * arguments; stdout to out_path. The command's exit status. */
static int pm_st_run(char *const head[], int nhead, char *const kargs[], const char *out_path)
{
    char *argv[32];
    int n = 0;
    for (; n < nhead && n < 31; n++)
        argv[n] = head[n];
    for (int i = 0; kargs[i] && n < 31; i++)
        argv[n++] = kargs[i];
    argv[n] = NULL;
    return pm_st_spawn(argv, out_path);
}

/* The kernels under `perfmark run -q -e EVENTS`: their truth lines (to be
 * freed), and the file at *h5. NULL when the run failed. */
static char *pm_st_measure(struct pm_st *st, const char *name, const char *events,
                           char *const kargs[], char *h5, size_t h5len)
{
    char out[PATH_MAX + 16];
    snprintf(h5, h5len, "%s/%s.h5", st->dir, name);
    snprintf(out, sizeof out, "%s/%s.out", st->dir, name);
    char *head[] = {st->self, "run", "-q", "-e", (char *)events, "-o", h5, "--", st->kernels};
    return pm_st_run(head, 9, kargs, out) == 0 ? pm_st_slurp(out) : NULL;
}

/* Under perf stat -x, (no perfmark): the kernels' truth in *truth and
 * perf's lines returned. */
static char *pm_st_perf(struct pm_st *st, const char *name, const char *events,
                        char *const kargs[], char **truth)
{
    char out[PATH_MAX + 16], stat_out[PATH_MAX + 16];
    snprintf(out, sizeof out, "%s/%s.out", st->dir, name);
    snprintf(stat_out, sizeof stat_out, "%s/%s.stat", st->dir, name);
    char *head[] = {st->perf, "stat", "-x,", "-o", stat_out, "-e", (char *)events, "--",
                    st->kernels};
    *truth = NULL;
    if (pm_st_run(head, 9, kargs, out) != 0)
        return NULL;
    *truth = pm_st_slurp(out);
    return pm_st_slurp(stat_out);
}

/* Σ over threads of one region's count of one event, scaled by
 * enabled/running where the kernel multiplexed; NAN when absent. */
static double pm_st_count(const struct pm_file *d, const char *region, const char *event,
                          int *multiplexed)
{
    size_t r = d->R, e = d->E;
    for (size_t i = 0; i < d->R; i++)
        if (d->regions[i].parent < 0 && strcmp(d->regions[i].name, region) == 0)
            r = i;
    for (size_t i = 0; i < d->E; i++)
        if (strcmp(d->events[i].name, event) == 0)
            e = i;
    if (r == d->R || e == d->E)
        return NAN;
    double sum = 0;
    for (size_t t = 0; t < d->T; t++) {
        double v = (double)d->counts[pm_tre(d, t, r, e)];
        size_t g = (size_t)d->events[e].group;
        uint64_t ena = d->enabled_ns[pm_trg(d, t, r, g)], run = d->running_ns[pm_trg(d, t, r, g)];
        if (run && run < ena) {
            v *= (double)ena / (double)run;
            if (multiplexed)
                *multiplexed = 1;
        }
        sum += v;
    }
    return sum;
}

static struct pm_st_check *pm_st_add(struct pm_st *st, const char *kernel, const char *event,
                                     const char *group, double lo, double hi)
{
    if (st->n == (int)(sizeof st->checks / sizeof *st->checks))
        st->n--;
    struct pm_st_check *c = &st->checks[st->n++];
    memset(c, 0, sizeof *c);
    snprintf(c->kernel, sizeof c->kernel, "%s", kernel);
    snprintf(c->event, sizeof c->event, "%s", event);
    snprintf(c->group, sizeof c->group, "%s", group);
    c->lo = lo, c->hi = hi;
    c->perfmark = c->perf = NAN;
    return c;
}

static void pm_st_skip_all(struct pm_st *st, int from, const char *why)
{
    for (int i = from; i < st->n; i++)
        if (!st->checks[i].note[0])
            snprintf(st->checks[i].note, sizeof st->checks[i].note, "%s", why);
}

/* ---- the software events: every machine ------------------------------------ */

/* Expected ranges from a kernel's truth (size `scale` × the base size for
 * perf's differences). */
static void pm_st_sw_ranges(const char *truth, double r[4][2])
{
    double pages = pm_st_truth(truth, "touch", "pages");
    double cpu = pm_st_truth(truth, "spin", "cpu_ns");
    double sleeps = pm_st_truth(truth, "sleep", "sleeps");
    double moves = pm_st_truth(truth, "hop", "moves");
    /* a page fault per page, and a few of the markers' own at most */
    r[0][0] = pages, r[0][1] = pages + 8;
    /* task-clock and the thread's CPU clock are the same kernel time, read
     * at slightly different moments */
    r[1][0] = cpu * 0.98, r[1][1] = cpu * 1.02 + 2e6;
    /* one voluntary switch per sleep, and some preemptions */
    r[2][0] = sleeps, r[2][1] = 2 * sleeps + 20;
    /* every move seen is a migration; the scheduler may add some */
    r[3][0] = moves, r[3][1] = 2 * moves + 20;
    if (pages < 0)
        r[0][0] = r[0][1] = NAN;
    if (cpu < 0)
        r[1][0] = r[1][1] = NAN;
    if (sleeps < 0)
        r[2][0] = r[2][1] = NAN;
    if (moves < 0)
        r[3][0] = r[3][1] = NAN;
}

static const char *const pm_st_sw_kernel[4] = {"touch", "spin", "sleep", "hop"};
static const char *const pm_st_sw_event[4] = {"page-faults", "task-clock", "context-switches",
                                              "cpu-migrations"};

static void pm_st_software(struct pm_st *st)
{
    char pages[16], spin[16], sleeps[16], hops[16];
    snprintf(pages, sizeof pages, "%d", ST_PAGES);
    snprintf(spin, sizeof spin, "%d", ST_SPIN_MS);
    snprintf(sleeps, sizeof sleeps, "%d", ST_SLEEPS);
    snprintf(hops, sizeof hops, "%d", ST_HOPS);
    char *kargs[] = {"touch", pages, "spin", spin, "sleep", sleeps, "hop", hops, NULL};
    char h5[PATH_MAX + 8], err[512];
    char *truth = pm_st_measure(st, "sw", "sw", kargs, h5, sizeof h5);
    double r[4][2];
    pm_st_sw_ranges(truth ? truth : "", r);
    struct pm_file d;
    memset(&d, 0, sizeof d);
    int loaded = truth && pm_file_load(h5, &d, err, sizeof err) == 0;
    int first = st->n;
    for (int k = 0; k < 4; k++) {
        struct pm_st_check *c = pm_st_add(st, pm_st_sw_kernel[k], pm_st_sw_event[k], "sw",
                                          r[k][0], r[k][1]);
        if (isnan(r[k][0]))
            snprintf(c->note, sizeof c->note, "%s",
                     k == 3 ? "one CPU allowed: no migration to make" : "the kernel did not run");
        else if (k >= 2 && pm_user_only())
            /* the kernel counts both in kernel mode: user space only reads 0 */
            snprintf(c->note, sizeof c->note, "counted in kernel mode, which a normal user at "
                     "perf_event_paranoid %d may not count (root, or the setting <= 1, may)",
                     pm_paranoid_level());
        else if (loaded)
            c->perfmark = pm_st_count(&d, pm_st_sw_kernel[k], pm_st_sw_event[k], NULL);
    }
    if (!truth)
        pm_st_skip_all(st, first, "perfmark run failed");
    else if (!loaded)
        pm_st_skip_all(st, first, err);
    pm_file_free(&d);
    free(truth);
    if (!st->perf[0])
        return;

    /* perf stat: each kernel at its size and twice its size, the difference */
    const char *perf_events = "task-clock,page-faults,context-switches,cpu-migrations";
    char *sizes[4] = {pages, spin, sleeps, hops};
    for (int k = 0; k < 4; k++) {
        struct pm_st_check *c = &st->checks[first + k];
        if (isnan(c->lo) || c->note[0])
            continue;
        char twice[16];
        snprintf(twice, sizeof twice, "%ld", 2 * atol(sizes[k]));
        char *a1[] = {(char *)pm_st_sw_kernel[k], sizes[k], NULL};
        char *a2[] = {(char *)pm_st_sw_kernel[k], twice, NULL};
        char name1[32], name2[32];
        snprintf(name1, sizeof name1, "perf-%s-1", pm_st_sw_kernel[k]);
        snprintf(name2, sizeof name2, "perf-%s-2", pm_st_sw_kernel[k]);
        char *t1 = NULL, *t2 = NULL;
        char *s1 = pm_st_perf(st, name1, perf_events, a1, &t1);
        char *s2 = pm_st_perf(st, name2, perf_events, a2, &t2);
        if (s1 && s2 && t1 && t2) {
            /* x2 − x1 with x in each run's range, plus what start-up and exit
             * may vary by between two runs of the same program */
            static const double slack[4] = {32, 5e6, 20, 20};
            double r1[4][2], r2[4][2];
            pm_st_sw_ranges(t1, r1);
            pm_st_sw_ranges(t2, r2);
            c->perf_lo = r2[k][0] - r1[k][1] - slack[k];
            c->perf_hi = r2[k][1] - r1[k][0] + slack[k];
            c->perf = pm_st_perf_value(s2, pm_st_sw_event[k]) -
                      pm_st_perf_value(s1, pm_st_sw_event[k]);
        }
        free(s1), free(s2), free(t1), free(t2);
    }
}

/* ---- hardware events: machines with a PMU ------------------------------------ */

static struct pm_file *pm_st_load(const char *h5, struct pm_file *d, char *err, size_t errlen)
{
    memset(d, 0, sizeof *d);
    return pm_file_load(h5, d, err, errlen) == 0 ? d : NULL;
}

/* perf's difference of a loop run at N and 2N iterations, for an event. */
static double pm_st_perf_loop(struct pm_st *st, const char *event)
{
    char n1[24], n2[24];
    snprintf(n1, sizeof n1, "%ld", ST_LOOP);
    snprintf(n2, sizeof n2, "%ld", 2 * ST_LOOP);
    char *a1[] = {"loop", n1, NULL}, *a2[] = {"loop", n2, NULL};
    char *t1 = NULL, *t2 = NULL;
    char *s1 = pm_st_perf(st, "perf-loop-1", event, a1, &t1);
    char *s2 = pm_st_perf(st, "perf-loop-2", event, a2, &t2);
    double v = s1 && s2 ? pm_st_perf_value(s2, event) - pm_st_perf_value(s1, event) : NAN;
    free(s1), free(s2), free(t1), free(t2);
    return v;
}

static void pm_st_hardware(struct pm_st *st, int pmu)
{
    const double n = (double)ST_LOOP, loads = (double)ST_LOADS;
    int first = st->n;
    /* the markers add a few thousand instructions and branches; skid and
     * interrupts a little more: 1 % + a constant */
    struct pm_st_check *ins = pm_st_add(st, "loop", "instructions", "hw", 2 * n, 2 * n * 1.01 + 2e5);
    struct pm_st_check *br = pm_st_add(st, "loop", "branches", "hw", n, n * 1.01 + 1e5);
    /* a dependent chase over 4 × the LLC misses it on (nearly) every load;
     * over 16 KiB, once warm, L1D (nearly) never */
    struct pm_st_check *llc = pm_st_add(st, "chase_large", "cache-misses", "hw", 0.5 * loads,
                                        1.5 * loads + 1e5);
    struct pm_st_check *l1 = pm_st_add(st, "chase_small", "L1-dcache-load-misses", "hw", 0,
                                       0.02 * loads + 1e4);
    struct pm_st_check *mux = pm_st_add(st, "loop", "instructions", "multiplexed", 2 * n * 0.9,
                                        2 * n * 1.1 + 2e5);
    const struct pm_cpu_model *m = pm_cpu_model_detect();
    const struct pm_model_group *td = pm_cpu_model_group(m, PM_GROUP_TOPDOWN);
    struct pm_st_check *tds = pm_st_add(st, "loop", "TopDown sum / slots", "topdown", 0.98, 1.02);
    struct pm_st_check *rd = pm_st_add(st, "loop", "slots, rdpmc / read()", "topdown", 0.98, 1.02);
    if (!pmu) {
        pm_st_skip_all(st, first, "no hardware PMU on this machine");
        return;
    }
    char h5[PATH_MAX + 8], err[512], loop[24];
    snprintf(loop, sizeof loop, "%ld", ST_LOOP);
    struct pm_file d;
    char *kl[] = {"loop", loop, NULL};
    char *truth = pm_st_measure(st, "hw", "instructions,branches", kl, h5, sizeof h5);
    if (truth && pm_st_load(h5, &d, err, sizeof err)) {
        ins->perfmark = pm_st_count(&d, "loop", "instructions", NULL);
        br->perfmark = pm_st_count(&d, "loop", "branches", NULL);
        pm_file_free(&d);
    }
    free(truth);
    if (st->perf[0]) {
        ins->perf_lo = 2 * n - 2e5, ins->perf_hi = 2 * n * 1.01 + 2e5;
        br->perf_lo = n - 1e5, br->perf_hi = n * 1.01 + 1e5;
        ins->perf = pm_st_perf_loop(st, "instructions");
        br->perf = pm_st_perf_loop(st, "branches");
    }

    long llc_bytes = sysconf(_SC_LEVEL3_CACHE_SIZE);
    long big = llc_bytes > 0 ? 4 * llc_bytes : 0;
    big = big < (256L << 20) ? 256L << 20 : big > (2048L << 20) ? 2048L << 20 : big;
    char bigs[24], smalls[24], loadss[24];
    snprintf(bigs, sizeof bigs, "%ld", big);
    snprintf(smalls, sizeof smalls, "%ld", ST_SMALL_BYTES);
    snprintf(loadss, sizeof loadss, "%ld", ST_LOADS);
    char *kc[] = {"chase_large", bigs, loadss, "chase_small", smalls, loadss, NULL};
    truth = pm_st_measure(st, "cache", "cache-misses,L1-dcache-load-misses", kc, h5, sizeof h5);
    if (truth && pm_st_load(h5, &d, err, sizeof err)) {
        if (pm_st_truth(truth, "chase_large", "loads") > 0)
            llc->perfmark = pm_st_count(&d, "chase_large", "cache-misses", NULL);
        else
            snprintf(llc->note, sizeof llc->note, "could not allocate %ld bytes", big);
        l1->perfmark = pm_st_count(&d, "chase_small", "L1-dcache-load-misses", NULL);
        pm_file_free(&d);
    }
    free(truth);

    truth = pm_st_measure(st, "mux", ST_MUX_EVENTS, kl, h5, sizeof h5);
    if (truth && pm_st_load(h5, &d, err, sizeof err)) {
        int multiplexed = 0;
        mux->perfmark = pm_st_count(&d, "loop", "instructions", &multiplexed);
        if (!multiplexed)
            snprintf(mux->note, sizeof mux->note, "the kernel did not multiplex (enough counters)");
        pm_file_free(&d);
    }
    free(truth);

    if (!td || !m) {
        pm_st_skip_all(st, first + 5, "no TopDown table for this CPU");
        return;
    }
    if (m->td_method != PM_TD_METHOD_PERF_METRICS && m->td_method != PM_TD_METHOD_ZEN4) {
        pm_st_skip_all(st, first + 5, "this TopDown method is 100 % by construction");
        return;
    }
    /* the group's events, as the file names them, in the table's order */
    char names[PM_MODEL_MAX_EVENTS][PM_EVENT_NAME_LEN];
    int ne = pm_model_group_nevents(td);
    for (int i = 0; i < ne; i++)
        pm_cpu_model_event_name(m, td->events[i].pfm, names[i], sizeof names[i]);
    double slots_mode[2] = {NAN, NAN};
    for (int mode = 0; mode < 2; mode++) {
        setenv("PERFMARK_TOPDOWN_READ", mode ? "read" : "auto", 1);
        truth = pm_st_measure(st, mode ? "td-read" : "td", "topdown", kl, h5, sizeof h5);
        unsetenv("PERFMARK_TOPDOWN_READ");
        if (!truth || !pm_st_load(h5, &d, err, sizeof err)) {
            free(truth);
            continue;
        }
        double v[PM_MODEL_MAX_EVENTS];
        for (int i = 0; i < ne; i++)
            v[i] = pm_st_count(&d, "loop", names[i], NULL);
        double slots, sum = 0;
        if (m->td_method == PM_TD_METHOD_PERF_METRICS) {
            slots = v[0];  /* slots, then the four level-1 metrics (slot counts) */
            for (int i = 1; i <= 4; i++)
                sum += v[i];
        } else {
            slots = 6 * v[0];  /* Zen 4: cycles; fe, be, smt per slot; ops dispatched */
            sum = v[1] + v[2] + v[3] + v[4];
        }
        slots_mode[mode] = slots;
        if (mode == 0 && slots > 0)
            tds->perfmark = sum / slots;
        pm_file_free(&d);
        free(truth);
    }
    if (m->td_method == PM_TD_METHOD_PERF_METRICS && slots_mode[1] > 0)
        rd->perfmark = slots_mode[0] / slots_mode[1];
    else if (m->td_method != PM_TD_METHOD_PERF_METRICS)
        snprintf(rd->note, sizeof rd->note, "only PERF_METRICS has an rdpmc mode");
}

/* ---- the verdict ----------------------------------------------------------------- */

static void pm_st_num(char *out, size_t len, double v)
{
    if (isnan(v))
        snprintf(out, len, "-");
    else if (fabs(v) < 10 && v != floor(v))
        snprintf(out, len, "%.3f", v);
    else
        snprintf(out, len, "%.0f", v);
}

static int pm_st_print(struct pm_st *st)
{
    int pass = 0, fail = 0, skip = 0;
    printf("\n%-12s %-22s %-11s %-23s %-12s %-12s %s\n", "kernel", "event", "group", "expected",
           "perfmark", "perf", "verdict");
    for (int i = 0; i < st->n; i++) {
        struct pm_st_check *c = &st->checks[i];
        enum pm_st_verdict v = pm_st_judge(c);
        char lo[24], hi[24], pm[24], pf[24], range[48];
        pm_st_num(lo, sizeof lo, c->lo);
        pm_st_num(hi, sizeof hi, c->hi);
        pm_st_num(pm, sizeof pm, c->perfmark);
        pm_st_num(pf, sizeof pf, c->perf);
        snprintf(range, sizeof range, "%s..%s", lo, hi);
        printf("%-12s %-22s %-11s %-23s %-12s %-12s %s%s%s\n", c->kernel, c->event, c->group,
               isnan(c->lo) ? "-" : range, pm, pf,
               v == PM_ST_PASS ? "PASS" : v == PM_ST_FAIL ? "FAIL" : "skip",
               c->note[0] ? ": " : "", c->note);
        pass += v == PM_ST_PASS, fail += v == PM_ST_FAIL, skip += v == PM_ST_SKIP;
    }
    /* per group: a group passes when none of its checks fails and one ran */
    printf("\n");
    static const char *const groups[] = {"sw", "hw", "multiplexed", "topdown"};
    for (size_t g = 0; g < sizeof groups / sizeof *groups; g++) {
        int gp = 0, gf = 0;
        for (int i = 0; i < st->n; i++)
            if (!strcmp(st->checks[i].group, groups[g]))
                gp += st->checks[i].verdict == PM_ST_PASS, gf += st->checks[i].verdict == PM_ST_FAIL;
        printf("%-12s %s\n", groups[g], gf ? "FAIL" : gp ? "PASS" : "not checked here");
    }
    printf("\nperfmark selftest: %s (%d passed, %d failed, %d skipped)\n",
           fail ? "FAIL" : pass ? "PASS" : "NOTHING CHECKED", pass, fail, skip);
    return fail || !pass ? 1 : 0;
}

static int pm_st_find(struct pm_st *st)
{
    ssize_t n = readlink("/proc/self/exe", st->self, sizeof st->self - 1);
    if (n <= 0)
        return -1;
    st->self[n] = '\0';
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", st->self);
    char *slash = strrchr(dir, '/');
    if (!slash)
        return -1;
    *slash = '\0';
    const char *env = getenv("PERFMARK_SELFTEST_KERNELS");
    const char *rel[] = {"perfmark-selftest-kernels", "../libexec/perfmark/perfmark-selftest-kernels"};
    if (env && *env) {
        snprintf(st->kernels, sizeof st->kernels, "%s", env);
        if (access(st->kernels, X_OK) == 0)
            goto found;
        return -1;
    }
    for (size_t i = 0; i < sizeof rel / sizeof *rel; i++) {
        snprintf(st->kernels, sizeof st->kernels, "%s/%s", dir, rel[i]);
        if (access(st->kernels, X_OK) == 0)
            goto found;
    }
    return -1;
found:
    st->perf[0] = '\0';
    const char *path = getenv("PATH");
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", path ? path : "/usr/bin:/bin");
    char *save = NULL;
    for (char *p = strtok_r(buf, ":", &save); p; p = strtok_r(NULL, ":", &save)) {
        snprintf(st->perf, sizeof st->perf, "%s/perf", p);
        if (access(st->perf, X_OK) == 0)
            return 0;
    }
    st->perf[0] = '\0';
    return 0;
}

static void pm_st_cleanup(struct pm_st *st)
{
    if (st->keep) {
        printf("files kept in %s\n", st->dir);
        return;
    }
    /* our own mkdtemp directory, flat: its files, then it */
    DIR *dir = opendir(st->dir);
    struct dirent *e;
    char path[PATH_MAX + 256];
    while (dir && (e = readdir(dir)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof path, "%s/%s", st->dir, e->d_name);
        unlink(path);
    }
    if (dir)
        closedir(dir);
    if (rmdir(st->dir) != 0)
        printf("(could not remove %s: %s)\n", st->dir, strerror(errno));
}

int pm_selftest_main(int argc, char **argv)
{
    static struct pm_st st;
    memset(&st, 0, sizeof st);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--keep"))
            st.keep = 1;
        else if (!strcmp(argv[i], "--no-perf"))
            st.perf[0] = '\1';
        else {
            fprintf(stderr, "perfmark selftest: unknown option '%s' (see perfmark selftest --help)\n",
                    argv[i]);
            return 2;
        }
    }
    int no_perf = st.perf[0] == '\1';
    if (pm_st_find(&st) != 0) {
        fprintf(stderr, "perfmark selftest: cannot find perfmark-selftest-kernels next to this "
                        "program (or PERFMARK_SELFTEST_KERNELS)\n");
        return 2;
    }
    if (no_perf)
        st.perf[0] = '\0';
    const char *tmp = getenv("TMPDIR");
    snprintf(st.dir, sizeof st.dir, "%s/perfmark-selftest-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(st.dir)) {
        fprintf(stderr, "perfmark selftest: cannot make a directory in %s: %s\n",
                tmp && *tmp ? tmp : "/tmp", strerror(errno));
        return 2;
    }
    int pmu = pm_pmu_present();
    char cpu[160];
    pm_cpu_describe(cpu, sizeof cpu);
    printf("perfmark selftest: does counting work on this machine?\n\n");
    printf("CPU:   %s%s\n", cpu, pm_cpu_id()->from_override ? " [PERFMARK_TEST_CPU]" : "");
    printf("PMU:   %s\n", pmu ? "present: hardware events are checked"
                              : "absent: no hardware PMU on this machine; only the software "
                                "events are checked");
    printf("perf:  %s\n", st.perf[0] ? st.perf : "not used (not installed, or --no-perf)");
    printf("Each kernel does a known amount of work inside a region; perfmark's count\n"
           "of that region must fall in the expected range. perf counts whole processes:\n"
           "its column is a run at twice the size minus a run at the size.\n");
    fflush(stdout);
    pm_st_software(&st);
    pm_st_hardware(&st, pmu);
    int rc = pm_st_print(&st);
    pm_st_cleanup(&st);
    return rc;
}
