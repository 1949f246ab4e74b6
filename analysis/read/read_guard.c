/*
 * read_guard.c — a time budget on reading a file through HDF5 (read_guard.h
 * says why and how it is used; docs/guide.md, "A damaged file", for users).
 */
#define _GNU_SOURCE
#include "read_guard.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PM_STALL_FLOOR 10.0       /* seconds: no legitimate step of a small file takes this */
#define PM_STALL_PER_BYTE 1e-8    /* + 1 s per 100 MB: a step reads at most a block of the file */
#define PM_STALL_MAX 86400.0

static struct pm_progress *pm_prog;
static double pm_opt_timeout = -1; /* --read-timeout; -1: not given */

void pm_read_progress_attach(struct pm_progress *p)
{
    pm_prog = p;
}

/* The byte copy is atomic per byte: the watcher may read while the reader
 * writes (a thread under mpirun), and a torn name is harmless, a data race
 * is not. */
static void pm_put_str(char *dst, size_t cap, const char *s)
{
    size_t i = 0;

    for (; s[i] && i + 1 < cap; i++)
        __atomic_store_n(&dst[i], s[i], __ATOMIC_RELAXED);
    __atomic_store_n(&dst[i], '\0', __ATOMIC_RELAXED);
}

static void pm_get_str(const char *src, size_t cap, char *out, size_t len)
{
    size_t i = 0;

    for (; i + 1 < len && i + 1 < cap; i++)
        if ((out[i] = __atomic_load_n(&src[i], __ATOMIC_RELAXED)) == '\0')
            return;
    out[i] = '\0';
}

void pm_read_file(const char *path)
{
    if (pm_prog)
        pm_put_str(pm_prog->file, sizeof pm_prog->file, path ? path : "");
}

static unsigned pm_test_delay_ms(void)
{
    static int init;
    static unsigned ms;

    if (!init) {
        const char *s = getenv("PERFMARK_TEST_READ_DELAY_MS");
        ms = s ? (unsigned)strtoul(s, NULL, 10) : 0;
        if (ms > 10000)
            ms = 10000;
        init = 1;
    }
    return ms;
}

void pm_read_begin(const char *fmt, ...)
{
    char what[sizeof pm_prog->what];
    unsigned ms;
    va_list ap;

    if (!pm_prog)
        return;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    pm_put_str(pm_prog->what, sizeof pm_prog->what, what);
    __atomic_store_n(&pm_prog->inside, 1, __ATOMIC_RELAXED);
    __atomic_add_fetch(&pm_prog->steps, 1, __ATOMIC_RELEASE);
    if ((ms = pm_test_delay_ms()) > 0) {
        struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
        }
    }
}

void pm_read_end(void)
{
    if (!pm_prog)
        return;
    __atomic_store_n(&pm_prog->inside, 0, __ATOMIC_RELAXED);
    __atomic_add_fetch(&pm_prog->steps, 1, __ATOMIC_RELEASE);
}

int pm_read_timeout_parse(const char *s, double *out)
{
    char *end;
    double v;

    if (!s || !*s)
        return -1;
    errno = 0;
    v = strtod(s, &end);
    if (errno || end == s || (*end && strcmp(end, "s") != 0) || !isfinite(v) || v < 0 ||
        v > PM_STALL_MAX)
        return -1;
    *out = v;
    return 0;
}

void pm_read_timeout_set(double seconds)
{
    pm_opt_timeout = seconds;
}

/* An environment variable in seconds; -1 when unset, or garbage (said once:
 * the default is used then, never a guess at what was meant). */
static double pm_env_seconds(const char *name, int *said)
{
    const char *s = getenv(name);
    double v;

    if (!s || !*s)
        return -1;
    if (pm_read_timeout_parse(s, &v) == 0)
        return v;
    if (!*said) {
        fprintf(stderr, "perfmark: %s is not a number of seconds; using the default\n", name);
        *said = 1;
    }
    return -1;
}

double pm_read_budget(const char *path, int heavy)
{
    static int said;
    struct stat st;
    double v = pm_opt_timeout >= 0 ? pm_opt_timeout : pm_env_seconds("PERFMARK_READ_TIMEOUT", &said);

    if (v >= 0)
        return v;
    /* A step is one object or one block of rows: its time follows the
     * file's size at worst, never the number of steps. */
    v = PM_STALL_FLOOR;
    if (path && stat(path, &st) == 0 && st.st_size > 0)
        v += (double)st.st_size * PM_STALL_PER_BYTE;
    if (heavy)
        v *= 2;
    return v < PM_STALL_MAX ? v : PM_STALL_MAX;
}

double pm_read_total(void)
{
    static int said;
    double v = pm_env_seconds("PERFMARK_REPORT_TIMEOUT", &said);

    return v > 0 ? v : 0;
}

static double pm_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void pm_watch_start(struct pm_watch *w, const struct pm_progress *p, double stall, double total,
                    int inside_only)
{
    memset(w, 0, sizeof *w);
    w->p = p;
    w->stall = stall;
    w->total = total;
    w->inside_only = inside_only;
    w->t0 = w->tlast = pm_now();
    w->last = __atomic_load_n(&p->steps, __ATOMIC_ACQUIRE);
    w->nap_ms = 1;
}

int pm_watch_expired(struct pm_watch *w)
{
    unsigned long steps = __atomic_load_n(&w->p->steps, __ATOMIC_ACQUIRE);
    double now = pm_now();

    if (steps != w->last) {
        w->last = steps;
        w->tlast = now;
    } else if (w->inside_only && !__atomic_load_n(&w->p->inside, __ATOMIC_RELAXED)) {
        w->tlast = now; /* not reading: waiting for another rank is not a stall */
    }
    if (w->total > 0 && now - w->t0 > w->total)
        return PM_WATCH_TOTAL;
    if (w->stall > 0 && now - w->tlast > w->stall)
        return PM_WATCH_STALLED;
    return PM_WATCH_OK;
}

void pm_watch_nap(struct pm_watch *w)
{
    struct timespec ts = {0, (long)w->nap_ms * 1000000L};

    nanosleep(&ts, NULL);
    if (w->nap_ms < 50)
        w->nap_ms = w->nap_ms * 2 > 50 ? 50 : w->nap_ms * 2;
}

void pm_watch_message(const struct pm_watch *w, int why, char *msg, size_t len)
{
    char what[sizeof w->p->what], where[sizeof what + 32];

    pm_get_str(w->p->what, sizeof w->p->what, what, sizeof what);
    if (!what[0])
        snprintf(where, sizeof where, "opening the file");
    else if (__atomic_load_n(&w->p->inside, __ATOMIC_RELAXED))
        snprintf(where, sizeof where, "reading %s", what);
    else
        snprintf(where, sizeof where, "after reading %s", what);
    if (why == PM_WATCH_TOTAL)
        snprintf(msg, len, "damaged HDF5 file: still %s after %.3g s (PERFMARK_REPORT_TIMEOUT); "
                 "stopped", where, w->total);
    else
        snprintf(msg, len, "damaged HDF5 file: no progress for %.3g s %s (the HDF5 library loops "
                 "on damaged data); stopped (--read-timeout S to wait longer)", w->stall, where);
}

void pm_watch_file(const struct pm_watch *w, char *out, size_t len)
{
    pm_get_str(w->p->file, sizeof w->p->file, out, len);
}

int pm_read_guard_wait(pid_t pid, struct pm_watch *w, int *status)
{
    for (;;) {
        pid_t r = waitpid(pid, status, WNOHANG);
        int why;

        if (r == pid)
            return 0;
        if (r < 0 && errno != EINTR)
            return -1;
        if ((why = pm_watch_expired(w)) != PM_WATCH_OK) {
            kill(pid, SIGKILL);
            while (waitpid(pid, status, 0) < 0 && errno == EINTR) {
            }
            return why;
        }
        pm_watch_nap(w);
    }
}

/* ------------------------------------------------------ mpirun: a thread */

/* Under mpirun a rank cannot fork a reader (a forked MPI process must not
 * use MPI), so a thread of the rank watches the rank's own reads. It counts
 * a stall only inside a read (inside_only): a rank that waits in an MPI call
 * for a slower rank is not reading, and must not be stopped for it. The
 * stuck rank ends with exit status 1; mpirun then ends the others, so no
 * rank waits for ever on it. */
static struct {
    pthread_t th;
    int running, stop;
    struct pm_progress prog;
    struct pm_watch w;
    char line[1536];
} pm_guard;

static void *pm_guard_main(void *arg)
{
    (void)arg;
    while (!__atomic_load_n(&pm_guard.stop, __ATOMIC_ACQUIRE)) {
        int why = pm_watch_expired(&pm_guard.w);

        if (why != PM_WATCH_OK) {
            char msg[512];
            size_t n = strlen(pm_guard.line);

            pm_watch_message(&pm_guard.w, why, msg, sizeof msg);
            snprintf(pm_guard.line + n, sizeof pm_guard.line - n, "%s", msg);
            n = strlen(pm_guard.line);
            for (size_t i = 0; i < n; i++)
                if ((unsigned char)pm_guard.line[i] < 0x20 || pm_guard.line[i] == 0x7f)
                    pm_guard.line[i] = '?';
            snprintf(pm_guard.line + n, sizeof pm_guard.line - n, "\n");
            /* one write: the line is not interleaved with another rank's */
            if (write(STDERR_FILENO, pm_guard.line, strlen(pm_guard.line)) < 0) {
            }
            _exit(1); /* the read holds HDF5's locks: nothing else may run */
        }
        pm_watch_nap(&pm_guard.w);
    }
    return NULL;
}

int pm_read_guard_thread_start(const char *path, double stall, double total, int rank)
{
    if (stall <= 0 && total <= 0)
        return 0;
    memset(&pm_guard.prog, 0, sizeof pm_guard.prog);
    snprintf(pm_guard.line, sizeof pm_guard.line, "perfmark report: %s: rank %d: ",
             path ? path : "", rank);
    pm_watch_start(&pm_guard.w, &pm_guard.prog, stall, total, 1);
    pm_guard.stop = 0;
    pm_read_progress_attach(&pm_guard.prog);
    if (pthread_create(&pm_guard.th, NULL, pm_guard_main, NULL) != 0) {
        pm_read_progress_attach(NULL);
        return -1;
    }
    pm_guard.running = 1;
    return 0;
}

void pm_read_guard_thread_stop(void)
{
    if (!pm_guard.running)
        return;
    __atomic_store_n(&pm_guard.stop, 1, __ATOMIC_RELEASE);
    pthread_join(pm_guard.th, NULL);
    pm_read_progress_attach(NULL);
    pm_guard.running = 0;
}
