/* pm_attach — `perfmark attach PID`: count a process that is already
 * running (libcpc's cpc_bind_pctx, `perf stat -p`), from outside: every
 * thread it has (/proc/PID/task) and every new one as it appears, until the
 * duration ends, SIGINT/SIGTERM, or the process exits; then write a normal
 * perfmark file (thread rows and totals, counts over time with --interval).
 * Nothing is loaded into the process and nothing of it is changed: markers
 * in it are not needed (and not seen: its regions are its own business).
 *
 * The program perfmark-attach, run by `perfmark attach` (analysis/cli). It
 * links the runtime's counting, series and writer code, not its session:
 * this process measures another, never itself.
 *
 * usage: perfmark-attach PID [--duration S] [-e LIST] [-o FILE] [--interval T] [-q] */
#define _GNU_SOURCE
#include "pm_counterset.h"
#include "pm_events.h"
#include "pm_h5lib.h"
#include "pm_h5out.h"
#include "pm_log.h"
#include "pm_output.h"
#include "pm_pin.h"
#include "pm_series.h"
#include "pm_store.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define PM_ATTACH_POLL_NS 50000000ull  /* new threads are looked for this often */

static volatile sig_atomic_t pm_stop_signal;
static int pm_first_error;  /* why the first thread could not be counted */

static void pm_on_stop(int sig) { pm_stop_signal = sig; }

static uint64_t pm_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

struct pm_attached {
    struct pm_thread **t;
    int32_t n, cap;
};

/* A /proc file's first len - 1 bytes, NUL-terminated: its length, or -1
 * when it cannot be read or is empty (the task is gone). */
static ssize_t pm_read_proc(const char *path, char *buf, size_t len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, len - 1);
    close(fd);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    return n;
}

/* The CPU a thread of `pid` last ran on (field 39 of its stat), or -1. */
static int pm_task_cpu(long pid, long tid)
{
    char path[96], buf[1024];
    snprintf(path, sizeof path, "/proc/%ld/task/%ld/stat", pid, tid);
    if (pm_read_proc(path, buf, sizeof buf) < 0)
        return -1;
    char *p = strrchr(buf, ')');
    for (int field = 2; p && field < 39; field++)
        p = strchr(p + 1, ' ');
    int cpu;
    return p && sscanf(p + 1, "%d", &cpu) == 1 ? cpu : -1;
}

/* Start counting thread `tid`: a thread row whose totals start now. */
static int pm_attach_thread(struct pm_attached *a, const struct pm_eventset *set, long pid,
                            long tid, uint64_t now)
{
    if (a->n == a->cap) {
        int32_t cap = a->cap ? 2 * a->cap : 16;
        struct pm_thread **grown = realloc(a->t, (size_t)cap * sizeof *grown);
        if (!grown)
            return -1;
        a->t = grown;
        a->cap = cap;
    }
    struct pm_thread *t = calloc(1, sizeof *t);
    unsigned stride = pm_stride(set);
    if (!t || !(t->base = calloc(stride + 1, 8)) || !(t->total = calloc(stride + 1, 8)) ||
        !(t->scratch = calloc(stride + 1, 8))) {
        if (t)
            free(t->base), free(t->total);
        free(t);
        return -1;
    }
    t->index = a->n;
    t->tid = (pid_t)tid;
    t->cur = -1;
    t->stride = stride;
    t->overflow_node = -1;
    t->cpu_first = t->cpu_last = pm_task_cpu(pid, tid);
    pm_pin_affinity((pid_t)tid, t->binding, sizeof t->binding);
    pthread_mutex_init(&t->settle_lock, NULL);
    if (set->n && pm_counterset_open_task(&t->cs, set, (int)tid, -1, 0, 0) != 0) {
        int e = errno;
        free(t->base), free(t->total), free(t->scratch), free(t);
        errno = e;
        return -1;
    }
    if (set->n && pm_counterset_peek(&t->cs, t->base) != 0)
        memset(t->base, 0, stride * 8);
    t->base_generation = t->cs.generation;
    t->start_ticks = t->end_ticks = now;
    a->t[a->n++] = t;
    pm_series_add(t);
    return 0;
}

/* The thread's totals to now (or to its end: the counters of an exited
 * thread read as they were when it ended). */
static void pm_settle(struct pm_thread *t, uint64_t now, int exited)
{
    if (t->exited)
        return;
    if (t->stride && pm_counterset_peek(&t->cs, t->scratch) == 0) {
        for (unsigned i = 0; i < t->stride; i++)
            t->total[i] = t->scratch[i] - t->base[i];
        memcpy(t->base, t->scratch, t->stride * 8);
        t->final_read = 1;
    }
    t->end_ticks = now;
    pm_series_end_thread(t);
    t->exited = exited;
    if (exited)
        pm_counterset_close(&t->cs);
}

/* Has the process ended? Gone from /proc, or a zombie its parent has not
 * reaped yet (its threads are gone, /proc/PID stays). */
static int pm_process_gone(long pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    if (pm_read_proc(path, buf, sizeof buf) < 0)
        return 1;
    const char *p = strrchr(buf, ')');
    return p && (p[2] == 'Z' || p[2] == 'X');
}

static int pm_known(const struct pm_attached *a, long tid)
{
    for (int32_t i = 0; i < a->n; i++)
        if (a->t[i]->tid == tid)
            return i;
    return -1;
}

/* Look at /proc/PID/task: new threads are attached, gone ones settled.
 * Returns the number of live threads, -1 when the process is gone. */
static int pm_scan(struct pm_attached *a, const struct pm_eventset *set, long pid, int quiet)
{
    char dir[64];
    snprintf(dir, sizeof dir, "/proc/%ld/task", pid);
    DIR *d = pm_process_gone(pid) ? NULL : opendir(dir);
    if (!d)
        return -1;
    uint64_t now = pm_now_ns();
    char seen[4096] = {0};  /* a->t index seen, for the first 4096 threads */
    int live = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        char *end;
        long tid = strtol(e->d_name, &end, 10);
        if (*end || tid <= 0)
            continue;
        int k = pm_known(a, tid);
        if (k < 0) {
            if (pm_attach_thread(a, set, pid, tid, now) != 0) {
                if (!pm_first_error)
                    pm_first_error = errno;
                if (errno != ESRCH && !quiet && a->n)
                    pm_msg(PM_MSG_COUNTERS, "cannot count thread %ld of process %ld: %s", tid,
                           pid, strerror(errno));
                continue;
            }
            k = a->n - 1;
        }
        if (k < (int)sizeof seen)
            seen[k] = 1;
        live++;
    }
    closedir(d);
    for (int32_t i = 0; i < a->n && i < (int32_t)sizeof seen; i++)
        if (!seen[i] && !a->t[i]->exited)
            pm_settle(a->t[i], now, 1);
    return live;
}

static int pm_usage(void)
{
    fputs("usage: perfmark attach PID [--duration S] [-e LIST] [-o FILE] [--interval T] [-q]\n",
          stderr);
    return 2;
}

/* Why perf_event_open refused another process, with the setting to change. */
static const char *pm_attach_refusal(int err)
{
    static char buf[512];
    int paranoid = -1;
    FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "re");
    if (f) {
        if (fscanf(f, "%d", &paranoid) != 1)
            paranoid = -1;
        fclose(f);
    }
    if (err == EACCES || err == EPERM)
        snprintf(buf, sizeof buf, "%s: counting another process needs the same user (or root, "
                 "or CAP_PERFMON) and kernel.perf_event_paranoid <= 2 (it is %d here; as root: "
                 "sysctl kernel.perf_event_paranoid=2), and ptrace read access to it "
                 "(kernel.yama.ptrace_scope <= 1)", strerror(err), paranoid);
    else
        snprintf(buf, sizeof buf, "%s", strerror(err));
    return buf;
}

/* Started under perfmark (and so measuring itself)? Its environment says
 * so: PERFMARK_ENABLE=1, or libperfmark in LD_PRELOAD without
 * PERFMARK_ENABLE=0 (the runtime's own rule, pm_session.c). */
static int pm_already_measured(long pid)
{
    char path[64], buf[65536];
    snprintf(path, sizeof path, "/proc/%ld/environ", pid);
    ssize_t n = pm_read_proc(path, buf, sizeof buf);
    if (n < 0)
        return 0;
    int enable = -1, preload = 0;
    for (char *v = buf; v < buf + n; v += strlen(v) + 1) {
        if (strncmp(v, "PERFMARK_ENABLE=", 16) == 0)
            enable = strcmp(v + 16, "1") == 0 || strcmp(v + 16, "yes") == 0;
        else if (strncmp(v, "LD_PRELOAD=", 11) == 0)
            preload = strstr(v, "libperfmark") != NULL;
    }
    return enable == 1 || (enable < 0 && preload);
}

static void pm_command_of(long pid, char *out, size_t len)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/cmdline", pid);
    ssize_t n = pm_read_proc(path, out, len);
    if (n < 0) {
        out[0] = '\0';
        return;
    }
    for (ssize_t i = 0; i < n - 1; i++)
        if (!out[i])
            out[i] = ' ';
}

int main(int argc, char **argv)
{
    long pid = 0;
    double duration = 0;
    const char *events = "default", *output = NULL, *interval = NULL, *pid_arg = NULL;
    int quiet = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--duration") && v) {
            /* A typo must not turn "stop after S" into "run until it exits". */
            char *end = NULL;
            duration = strtod(v, &end);
            if (end == v || *end || !isfinite(duration) || duration <= 0) {
                fprintf(stderr, "perfmark attach: --duration wants a number of seconds above 0, "
                        "not '%s'; nothing was counted\n", v);
                return 2;
            }
            i++;
        } else if ((!strcmp(a, "-e") || !strcmp(a, "--events")) && v)
            events = v, i++;
        else if ((!strcmp(a, "-o") || !strcmp(a, "--output")) && v)
            output = v, i++;
        else if (!strcmp(a, "--interval") && v)
            interval = v, i++;
        else if (!strcmp(a, "-q") || !strcmp(a, "--quiet"))
            quiet = 1;
        else if (a[0] != '-' && !pid_arg)
            pid_arg = a;
        else
            return pm_usage();
    }
    if (!pid_arg)
        return pm_usage();
    char *end = NULL;
    errno = 0;
    pid = strtol(pid_arg, &end, 10);
    if (end == pid_arg || *end || errno || pid <= 0) {
        fprintf(stderr, "perfmark attach: '%s' is not a process id (a whole number above 0); "
                "nothing was counted\n", pid_arg);
        return 2;
    }
    pm_log_set_quiet(quiet);
    char proc[64];
    snprintf(proc, sizeof proc, "/proc/%ld", pid);
    struct stat st;
    if (stat(proc, &st) != 0) {
        fprintf(stderr, "perfmark attach: no process %ld\n", pid);
        return 2;
    }
    uint64_t interval_ns = 0;
    if (interval) {
        char why[160];
        if (pm_series_parse_interval(interval, &interval_ns, why, sizeof why) != 0) {
            fprintf(stderr, "perfmark attach: --interval %s\n", why);
            return 2;
        }
    }
    char command[2048];
    pm_command_of(pid, command, sizeof command);  /* now: it may be gone at the end */
    if (pm_already_measured(pid))
        pm_msg(PM_MSG_ONCE, "process %ld already runs under perfmark (libperfmark.so is loaded "
               "in it): its own file will have its regions; this one counts it from outside, "
               "as a second, independent measurement", pid);

    static struct pm_eventset set;
    pm_eventset_build(events, &set);

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = pm_on_stop;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);

    uint64_t start = pm_now_ns();
    time_t wall = time(NULL);
    struct tm tm;
    char start_time[32], stamp[32];
    gmtime_r(&wall, &tm);
    strftime(start_time, sizeof start_time, "%Y-%m-%dT%H:%M:%SZ", &tm);
    localtime_r(&wall, &tm);
    strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
    if (interval_ns && pm_series_start(interval_ns, pm_stride(&set), NULL, 0) != 0)
        pm_msg(PM_MSG_ONCE, "cannot start reading every interval (%s): no counts over time",
               strerror(errno));

    struct pm_attached a = {0};
    int live = pm_scan(&a, &set, pid, quiet);
    if (live <= 0 || a.n == 0) {
        fprintf(stderr, "perfmark attach: cannot count process %ld: %s\n", pid,
                live < 0 ? "it is gone" : pm_attach_refusal(pm_first_error ? pm_first_error
                                                                           : EACCES));
        return 2;
    }
    /* what became of the events: said once counting works (a refusal is
     * one message, above) */
    for (int i = 0; i < set.nnotes; i++)
        pm_msg(PM_MSG_ONCE, "%s", set.notes[i]);
    if (set.fallback[0])
        pm_msg(PM_MSG_ONCE, "%s", set.fallback);
    if (!quiet)
        fprintf(stderr, "perfmark attach: counting process %ld (%d thread(s), events: %s)%s\n",
                pid, live, set.n ? set.group_name : "none",
                duration > 0 ? "" : " until it exits or SIGINT/SIGTERM");
    const char *why_end = "the duration ended";
    for (;;) {
        struct timespec nap = {0, (long)PM_ATTACH_POLL_NS};
        nanosleep(&nap, NULL);
        if (pm_stop_signal) {
            why_end = pm_stop_signal == SIGINT ? "SIGINT" : "SIGTERM";
            break;
        }
        if (pm_scan(&a, &set, pid, quiet) < 0) {
            why_end = "the process exited";
            break;
        }
        if (duration > 0 && (double)(pm_now_ns() - start) / 1e9 >= duration)
            break;
    }
    pm_series_stop();
    uint64_t now = pm_now_ns();
    for (int32_t i = 0; i < a.n; i++)
        pm_settle(a.t[i], now, 0);
    pm_msg(PM_MSG_FILE_ONLY, "perfmark attach %ld: counted %d thread(s) from outside until %s",
           pid, (int)a.n, why_end);

    char host[256] = "", want[PATH_MAX];
    gethostname(host, sizeof host - 1);
    if (output)
        snprintf(want, sizeof want, "%s", output);
    else
        snprintf(want, sizeof want, "perfmark-attach-%ld-%s.h5", pid, stamp);
    struct pm_output o = {
        .set = &set, .threads = a.t, .nthreads = a.n, .ns_per_tick = 1.0,
        .command = command, .host = host, .start_time = start_time, .clock = "monotonic",
        .pid = pid, .duration_ns = now - start, .bind_cpu = -1, .rank = 0, .ranks = 1,
        .openmp = "", .pinning = "attach: counted from outside, bound nothing",
        .threads_seen = "attach: every thread of the process, counted from outside from the attach",
        .throttle = "", .series = pm_series_get(),
    };
    void *image = NULL;
    size_t len = 0;
    char err[512];
    if (pm_h5out_image(&o, pm_h5lib_image, &image, &len, err, sizeof err) != 0) {
        fprintf(stderr, "perfmark attach: could not build the file: %s\n", err);
        return 1;
    }
    struct pm_store_result r;
    const char *fallback = getenv("PERFMARK_FALLBACK_DIR");
    if (pm_store_bytes(want, image, len, fallback ? fallback : "", &r) != 0) {
        fprintf(stderr, "perfmark attach: %s; no other place took the data either\n", r.why);
        free(image);
        return 1;
    }
    free(image);
    if (!quiet)
        fprintf(stderr, "perfmark attach: wrote %s (%d thread(s), until %s) — see: perfmark "
                "report %s\n", r.final, (int)a.n, why_end, r.final);
    return 0;
}
