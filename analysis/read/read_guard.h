/*
 * read_guard.h — a time budget on reading a file through HDF5.
 *
 * HDF5 1.10 can loop for ever on a damaged file (a corrupt global heap under
 * a variable-length string: H5Aread -> H5T__conv_vlen -> H5HG_read). Nothing
 * perfmark checks beforehand can see that coming, so the reader reports its
 * progress instead, and a watcher stops a read whose progress has stalled:
 *
 *   - h5read.c calls pm_read_begin("attribute '%s' of /", ...) before each
 *     object, block of rows or attribute it reads: a step counter moves and
 *     the object is named. pm_read_end() when a public read call returns.
 *   - the watcher (report.c's parent of the crash-isolating child, or a
 *     thread of each rank under mpirun) stops the read when the counter has
 *     not moved for the stall budget. A huge file that is slow but moving is
 *     never stopped; a stuck one is stopped after seconds.
 *
 * The stall budget (docs/guide.md, "A damaged file"):
 *   --read-timeout S, else PERFMARK_READ_TIMEOUT=S, else
 *   10 s + 1 s per 100 MB of the file, doubled for the work of --format html
 *   and --by rank|thread. 0 turns the guard off.
 * PERFMARK_REPORT_TIMEOUT=S (older, kept) caps the whole read instead,
 * moving or not; unset or 0: no cap.
 */
#ifndef PM_READ_GUARD_H
#define PM_READ_GUARD_H

#include <stddef.h>
#include <sys/types.h>

/* What the reader publishes; lives in memory the watcher can see (shared
 * with the parent after fork, or the rank's own memory for its thread). */
struct pm_progress {
    unsigned long steps; /* moves at each pm_read_begin (atomics) */
    int inside;          /* 1 between pm_read_begin and pm_read_end */
    char what[200];      /* the object being read, NUL-terminated */
    char file[512];      /* the file it is in (pm_read_file) */
};

/* Where pm_read_begin publishes; NULL (the default): nowhere, no cost but
 * the call. */
void pm_read_progress_attach(struct pm_progress *p);

/* The reader is about to read the object named by fmt (printf). Test-only:
 * PERFMARK_TEST_READ_DELAY_MS=N sleeps N ms here, which makes a small file
 * "slow but moving" (tests/fuzz/check_read_guard.sh). */
void pm_read_begin(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void pm_read_end(void);
/* The file the next pm_read_begin steps are in (a diff reads two). */
void pm_read_file(const char *path);

/* --read-timeout S: seconds >= 0 (fractions allowed); -1 with no message
 * when s is not one. pm_read_timeout_set(-1): back to the environment. */
int pm_read_timeout_parse(const char *s, double *out);
void pm_read_timeout_set(double seconds);

/* The stall budget in seconds for reading `path` (0: no limit); heavy: the
 * work asked for reads or renders more per step (html, --by rank|thread). */
double pm_read_budget(const char *path, int heavy);
/* PERFMARK_REPORT_TIMEOUT in seconds, 0 when unset (no cap). */
double pm_read_total(void);

enum { PM_WATCH_OK, PM_WATCH_STALLED, PM_WATCH_TOTAL };

struct pm_watch {
    const struct pm_progress *p;
    double stall, total; /* seconds, 0: none */
    double t0, tlast;    /* monotonic: start, last move of the counter */
    unsigned long last;
    int inside_only; /* stalls count only inside a read (mpirun: see read_guard.c) */
    unsigned nap_ms;
};

void pm_watch_start(struct pm_watch *w, const struct pm_progress *p, double stall, double total,
                    int inside_only);
/* PM_WATCH_OK, or why the read must be stopped now. */
int pm_watch_expired(struct pm_watch *w);
/* Sleep a little: 1 ms at first, growing to 50 ms (short reports stay fast). */
void pm_watch_nap(struct pm_watch *w);
/* The message for a stopped read: "damaged HDF5 file: ...", one line. */
void pm_watch_message(const struct pm_watch *w, int why, char *msg, size_t len);
/* The file being read (pm_read_file), "" when none was said. */
void pm_watch_file(const struct pm_watch *w, char *out, size_t len);

/* Wait for child `pid`, which reads with progress in w's pm_progress: 0 and
 * its wait status when it ended; PM_WATCH_STALLED or PM_WATCH_TOTAL when it
 * was stopped (SIGKILL: a loop in HDF5 handles nothing else) and reaped;
 * -1 when it cannot be waited for. */
int pm_read_guard_wait(pid_t pid, struct pm_watch *w, int *status);

/* Under mpirun (no child process): a thread of this rank watches its own
 * reads and ends the process with exit status 1 and the message
 * "perfmark report: PATH: MESSAGE (rank R)" on a stall; mpirun then ends
 * the other ranks. 0, or -1 when no thread could be started (unguarded). */
int pm_read_guard_thread_start(const char *path, double stall, double total, int rank);
void pm_read_guard_thread_stop(void);

#endif /* PM_READ_GUARD_H */
