/*
 * report.c — the entry point of the report stage: pick the format, load the
 * file in a crash-isolating child process, aggregate (report_model.c) and
 * render (report_text.c, report_csv.c, report_json.c, report_html.c).
 */
#include "cli/report.h"
#include "read_guard.h"
#include "model/by_table.h"
#include "model/report_model.h"
#include "model/report_mpi.h"
#include "model/report_stream.h"
#include "model/report_spool.h"
#include "model/folded.h"
#include "render/folded.h"
#include "render/speedscope.h"
#include "render/html/report_html.h"
#include "render/json/node_json.h"
#include "render/text/node_text.h"
#include "render/json/profile_json.h"
#include "render/text/profile_text.h"
#include "render/report_csv.h"
#include "render/json/report_json.h"
#include "render/text/report_text.h"
#include "render/json/series_json.h"
#include "render/text/series_text.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

enum pm_format { PM_FMT_TEXT, PM_FMT_CSV, PM_FMT_JSON, PM_FMT_HTML, PM_FMT_FOLDED,
                 PM_FMT_SPEEDSCOPE };

static void pm_set_err(char *err, size_t errlen, const char *path, const char *msg)
{
    if (!err || errlen == 0)
        return;
    snprintf(err, errlen, "%s%s%s", path ? path : "", path ? ": " : "", msg);
    for (char *p = err; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            *p = '?';
}

static const struct pm_report_opts *pm_opts; /* of the report being made */

int pm_report_in_process;

/* The sampled profile as folded stacks, or as a speedscope file (every
 * sampled event): no report to build, rank 0 alone. --metric names the
 * folded stacks' event (default: the first). */
static int pm_report_stacks(const char *path, enum pm_format fmt, FILE *out, char *err,
                            size_t errlen)
{
    struct pm_file d;
    char msg[512];
    if (pm_report_mpi_rank() != 0)
        return 0;
    if (pm_file_open(path, &d, 0, err, errlen) < 0)
        return -1;
    const char *want = fmt == PM_FMT_FOLDED && pm_opts ? pm_opts->metric : NULL;
    size_t e = pm_folded_event(&d, want);
    struct pm_folded *f = calloc(d.S ? d.S : 1, sizeof *f);
    int rc = -1;
    if (!f) {
        pm_set_err(err, errlen, path, "out of memory");
    } else if (d.S == 0) {
        pm_set_err(err, errlen, path, "no sampled profile: call stacks come from samples "
                   "(perfmark run --sample, with --sample-callchain for callers)");
    } else if (e == SIZE_MAX) {
        size_t len = 0;
        len += (size_t)snprintf(msg, sizeof msg, "no sampled event '%.64s' (sampled:", want);
        for (size_t k = 0; k < d.S && len < sizeof msg; k++)
            len += (size_t)snprintf(msg + len, sizeof msg - len, " %s", d.sample_events[k].name);
        if (len < sizeof msg)
            snprintf(msg + len, sizeof msg - len, ")");
        pm_set_err(err, errlen, path, msg);
    } else {
        rc = 0;
        for (size_t k = 0; rc == 0 && k < d.S; k++)
            if ((fmt == PM_FMT_SPEEDSCOPE || k == e) &&
                pm_folded_build(&d, k, &f[k], msg, sizeof msg) < 0) {
                pm_set_err(err, errlen, path, msg);
                rc = -1;
            }
        if (rc == 0 && fmt == PM_FMT_FOLDED) {
            pm_render_folded(out, &f[e]);
        } else if (rc == 0) {
            const char *base = strrchr(path, '/');
            if (pm_render_speedscope(out, &d, f, base ? base + 1 : path) < 0) {
                pm_set_err(err, errlen, path, "out of memory");
                rc = -1;
            }
        }
    }
    for (size_t k = 0; f && k < d.S; k++)
        pm_folded_free(&f[k]);
    free(f);
    pm_file_free(&d);
    return rc;
}

/* The HTML page's flame graphs: each sampled event's folded stacks as a
 * tree. 0, or -1 with a message. */
static int pm_report_flames(struct pm_report *rep, const struct pm_file *d, char *msg,
                            size_t len)
{
    if (!(rep->flame = calloc(d->S, sizeof *rep->flame))) {
        snprintf(msg, len, "out of memory");
        return -1;
    }
    rep->nflame = d->S;
    for (size_t e = 0; e < d->S; e++) {
        struct pm_folded f;
        int rc = pm_folded_build(d, e, &f, msg, len);
        if (rc == 0 && pm_flame_build(&f, &rep->flame[e]) != 0) {
            snprintf(msg, len, "out of memory");
            rc = -1;
        }
        pm_folded_free(&f);
        if (rc != 0)
            return -1;
    }
    return 0;
}

/* Load and render in the calling process. */
static int pm_report_direct(const char *path, enum pm_format fmt, FILE *out, char *err,
                            size_t errlen)
{
    struct pm_file d;
    struct pm_report rep;
    char msg[200];
    int rc = 0, sel = 0;

    /* The report streams the cells a block of threads at a time
     * (report_stream.c), shared among the ranks under mpirun; HTML and the
     * text of --by rank|thread follow single cells and are made by rank 0
     * alone, streaming too (the charts' state, by_table.c's second pass). */
    if (fmt == PM_FMT_FOLDED || fmt == PM_FMT_SPEEDSCOPE)
        return pm_report_stacks(path, fmt, out, err, errlen);
    int by = fmt == PM_FMT_TEXT && pm_opts && pm_opts->by != PM_BY_REGION;
    int html = fmt == PM_FMT_HTML;
    int shared = !html && !by && pm_report_mpi_size() > 1;
    struct pm_bycells bycells;

    if (!shared && pm_report_mpi_rank() != 0)
        return 0;
    rc = pm_file_open(path, &d, shared, err, errlen);
    if (shared && !pm_report_mpi_all(rc == 0)) { /* every rank opened it, or none goes on */
        if (rc == 0) {
            pm_set_err(err, errlen, path, "another MPI rank could not open the file");
            pm_file_free(&d);
        }
        return -1;
    }
    if (rc < 0)
        return -1;
    if ((rc = pm_report_build_stream(&rep, &d, path, html, err, errlen)) != 0) {
        /* 1: another MPI rank, whose blocks went to rank 0 */
        rc = rc > 0 ? 0 : -1;
        if (rc < 0 && err && errlen > 0 && err[0] == '\0')
            pm_set_err(err, errlen, path, "out of memory");
    } else if (d.S && !(rep.profile = pm_profile_build(&d, rep.xr.thread_rank, rep.xr.ranks,
                                                       rep.xr.nranks, msg, sizeof msg)) &&
               msg[0]) {
        pm_set_err(err, errlen, path, msg);
        rc = -1;
    } else if (html && rep.profile && pm_report_flames(&rep, &d, msg, sizeof msg) < 0) {
        pm_set_err(err, errlen, path, msg);
        rc = -1;
    } else if (d.I && !(rep.series = pm_series_build(&d, rep.xr.thread_rank, rep.xr.ranks,
                                                     rep.xr.nranks, msg, sizeof msg)) &&
               msg[0]) {
        pm_set_err(err, errlen, path, msg);
        rc = -1;
    } else if (d.NP && !(rep.node = pm_node_build(&d, msg, sizeof msg)) && msg[0]) {
        pm_set_err(err, errlen, path, msg);
        rc = -1;
    } else if (pm_opts && (sel = pm_report_select(&rep, pm_opts, msg, sizeof msg)) < 0) {
        pm_set_err(err, errlen, path, sel == -2 ? msg : "out of memory");
        rc = -1;
    } else if (by) {
        if (pm_report_by_collect(&rep, &bycells, err, errlen) < 0)
            rc = -1;
        else
            pm_render_text_by(out, &rep, &bycells);
        pm_report_by_free(&bycells);
    } else if (fmt == PM_FMT_TEXT) { /* the page: report_text.h */
        pm_render_text(out, &rep);
        pm_render_text_profile(out, &rep);
        pm_render_text_series(out, &rep);
        pm_render_text_node(out, &rep);
        pm_render_text_end(out, &rep);
    } else if (fmt == PM_FMT_CSV) {
        pm_render_csv(out, &rep);
    } else if (fmt == PM_FMT_HTML) {
        pm_render_html(out, &rep);
    } else { /* the object: report_json.h */
        pm_render_json(out, &rep);
        pm_render_json_profile(out, &rep);
        pm_render_json_series(out, &rep);
        pm_render_json_node(out, &rep);
        pm_render_json_end(out);
    }
    pm_report_free(&rep);
    pm_file_free(&d);
    return rc;
}

/* Result of the child, in memory shared with the parent; prog: what the
 * child is reading (read_guard.h), watched by the parent. */
struct pm_shared {
    int done;
    int rc;
    char err[1024];
    struct pm_progress prog;
};

/* The work asked for does more per read step (read_guard.h). */
static int pm_heavy(enum pm_format fmt)
{
    return fmt == PM_FMT_HTML || (fmt == PM_FMT_TEXT && pm_opts && pm_opts->by != PM_BY_REGION);
}

static _Noreturn void pm_child(int fd, const char *path, enum pm_format fmt, struct pm_shared *sh)
{
    FILE *w = fdopen(fd, "w");
    int rc = -1;
    int devnull = open("/dev/null", O_WRONLY);

    /* A parent killed from outside (a batch job's end) must not leave a
     * child spinning in HDF5 behind it. */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    /* glibc and HDF5 abort messages would break the one-line error contract */
    if (devnull >= 0) {
        dup2(devnull, STDERR_FILENO);
        close(devnull);
    }
    signal(SIGPIPE, SIG_DFL);
    pm_read_progress_attach(&sh->prog);
    if (!w) {
        pm_set_err(sh->err, sizeof sh->err, path, "cannot set up the report pipe");
    } else {
        rc = pm_report_direct(path, fmt, w, sh->err, sizeof sh->err);
        if (fflush(w) != 0 && rc == 0) {
            pm_set_err(sh->err, sizeof sh->err, path, "cannot write the report");
            rc = -1;
        }
    }
    sh->rc = rc;
    /* published before the pipe closes: the parent may only see EOF */
    __atomic_store_n(&sh->done, 1, __ATOMIC_SEQ_CST);
    if (w)
        fclose(w);
    _exit(rc == 0 ? 0 : 1); /* no atexit/stdio flush: those belong to the parent */
}

/* Read the child's whole report; the caller's stream only gets a complete one.
 * PM_WATCH_STALLED or PM_WATCH_TOTAL when the child stalled meanwhile
 * (read_guard.h: the pipe is polled so that a silent child cannot block the
 * parent). */
static int pm_read_all(int fd, char **buf, size_t *len, struct pm_watch *w)
{
    size_t cap = 65536;
    char *p = malloc(cap);

    *len = 0;
    *buf = NULL;
    if (!p)
        return -1;
    for (;;) {
        struct pollfd pfd = {fd, POLLIN, 0};
        ssize_t n;

        if (*len == cap) {
            char *grown = cap <= SIZE_MAX / 2 ? realloc(p, cap * 2) : NULL;
            if (!grown) {
                free(p);
                return -1;
            }
            p = grown;
            cap *= 2;
        }
        int why = pm_watch_expired(w);

        if (why != PM_WATCH_OK) {
            free(p);
            return why;
        }
        if (poll(&pfd, 1, 50) == 0)
            continue;
        n = read(fd, p + *len, cap - *len);
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (n < 0) {
            free(p);
            return -1;
        }
        if (n == 0)
            break;
        *len += (size_t)n;
    }
    *buf = p;
    return 0;
}

static void pm_child_died(const char *path, int status, char *err, size_t errlen)
{
    char msg[512];

    if (WIFSIGNALED(status))
        snprintf(msg, sizeof msg, "damaged HDF5 file: the HDF5 library crashed reading it (%s)",
                 strsignal(WTERMSIG(status)));
    else
        snprintf(msg, sizeof msg, "the report process failed unexpectedly");
    pm_set_err(err, errlen, path, msg);
}

/* The child's verdict: its own rc and message when it finished, else why
 * it died (status of the reaped child, 0 when it could not be reaped). */
static int pm_child_result(const struct pm_shared *sh, const char *path, int status, char *err,
                           size_t errlen)
{
    if (!__atomic_load_n(&sh->done, __ATOMIC_SEQ_CST)) {
        pm_child_died(path, status, err, errlen);
        return -1;
    }
    if (sh->rc != 0 && err && errlen > 0)
        snprintf(err, errlen, "%s", sh->err);
    return sh->rc;
}

static int pm_wait(pid_t pid, int *status)
{
    while (waitpid(pid, status, 0) < 0)
        if (errno != EINTR)
            return -1;
    return 0;
}

/* Stop a stalled child: SIGKILL (HDF5 in a loop handles nothing else), reap
 * it, and say what it was reading; the child's own verdict no longer counts. */
static void pm_stop_child(pid_t pid, int why, struct pm_watch *w, const char *path, char *err,
                          size_t errlen)
{
    char msg[512];
    int status;

    kill(pid, SIGKILL);
    pm_wait(pid, &status);
    pm_watch_message(w, why, msg, sizeof msg);
    pm_set_err(err, errlen, path, msg);
}

/* Wait for the child without a limit on its total time, but with one on its
 * silence (read_guard.h). 0 and its status when it ended; 1 when it was
 * stopped (message in err); -1 when it could not be waited for. */
static int pm_watch_child(pid_t pid, struct pm_watch *w, const char *path, int *status, char *err,
                          size_t errlen)
{
    char msg[512];
    int why = pm_read_guard_wait(pid, w, status);

    if (why <= 0)
        return why;
    pm_watch_message(w, why, msg, sizeof msg);
    pm_set_err(err, errlen, path, msg);
    return 1;
}

/* HDF5 1.10 can crash or spin on corrupt metadata (e.g. a damaged global
 * heap under a variable-length string): no check on our side can prevent
 * that, so the file is read in a child process and a crash becomes a
 * message. Falls back to reading in-process when fork is not possible. */
static int pm_report_isolated(const char *path, enum pm_format fmt, FILE *out, char *err,
                              size_t errlen)
{
    struct pm_shared *sh;
    struct pm_watch w;
    int fds[2], status = 0, rc, waited;
    char *buf = NULL;
    size_t len = 0;
    pid_t pid;
    FILE *spool;

    if (pm_report_in_process)
        return pm_report_direct(path, fmt, out, err, errlen);
    /* Under mpirun there is no child: a forked MPI process must not touch
     * MPI, and the ranks' blocks meet in MPI calls. A crash of HDF5 there
     * ends the job, which mpirun reports; a stall is stopped by a thread of
     * the stalled rank (read_guard.c), and mpirun then ends the others. */
    if (pm_report_mpi_size() > 1) {
        int started = pm_read_guard_thread_start(path, pm_read_budget(path, pm_heavy(fmt)),
                                                 pm_read_total(), pm_report_mpi_rank());

        rc = pm_report_direct(path, fmt, out, err, errlen);
        if (started == 0)
            pm_read_guard_thread_stop();
        return rc;
    }
    sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (sh == MAP_FAILED)
        return pm_report_direct(path, fmt, out, err, errlen);
    memset(sh, 0, sizeof *sh);
    /* The child writes the report into a temporary file, copied to `out`
     * once the child has finished well: the caller's stream only receives
     * complete reports, and neither process holds the report in memory.
     * Without a temporary file: through a pipe into memory. */
    if ((spool = pm_report_spool()) != NULL) {
        fflush(spool);
        pid = fork();
        if (pid == 0)
            pm_child(fileno(spool), path, fmt, sh); /* shares the file offset */
        if (pid < 0) {
            fclose(spool);
            munmap(sh, sizeof *sh);
            return pm_report_direct(path, fmt, out, err, errlen);
        }
        pm_watch_start(&w, &sh->prog, pm_read_budget(path, pm_heavy(fmt)), pm_read_total(), 0);
        waited = pm_watch_child(pid, &w, path, &status, err, errlen);
        rc = waited == 1 ? -1 : pm_child_result(sh, path, waited == 0 ? status : 0, err, errlen);
        if (rc == 0 && pm_report_copy(spool, out) < 0 && !ferror(out)) {
            pm_set_err(err, errlen, path, "cannot read back the report");
            rc = -1;
        }
        fclose(spool);
        munmap(sh, sizeof *sh);
        return rc;
    }
    if (pipe(fds) != 0) {
        munmap(sh, sizeof *sh);
        return pm_report_direct(path, fmt, out, err, errlen);
    }
    pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        munmap(sh, sizeof *sh);
        return pm_report_direct(path, fmt, out, err, errlen);
    }
    if (pid == 0) {
        close(fds[0]);
        pm_child(fds[1], path, fmt, sh);
    }
    close(fds[1]);
    pm_watch_start(&w, &sh->prog, pm_read_budget(path, pm_heavy(fmt)), pm_read_total(), 0);
    rc = pm_read_all(fds[0], &buf, &len, &w);
    close(fds[0]);
    if (rc > 0) { /* stalled while the report came through the pipe */
        pm_stop_child(pid, rc, &w, path, err, errlen);
        rc = -1;
    } else if (rc < 0) {
        waited = pm_wait(pid, &status);
        pm_set_err(err, errlen, path, "out of memory reading the report");
    } else {
        waited = pm_watch_child(pid, &w, path, &status, err, errlen);
        rc = waited == 1 ? -1 : pm_child_result(sh, path, waited == 0 ? status : 0, err, errlen);
    }
    if (rc == 0 && len > 0 && fwrite(buf, 1, len, out) != len)
        rc = -1; /* reported below through ferror */
    free(buf);
    munmap(sh, sizeof *sh);
    return rc;
}

int pm_report_file(const char *path, const char *format, FILE *out, char *err, size_t errlen)
{
    return pm_report_file_opts(path, format, NULL, out, err, errlen);
}

int pm_report_file_opts(const char *path, const char *format, const struct pm_report_opts *o,
                        FILE *out, char *err, size_t errlen)
{
    enum pm_format fmt;
    char msg[256];
    int rc;

    if (err && errlen > 0)
        err[0] = '\0';
    if (!format || strcmp(format, "text") == 0) {
        fmt = PM_FMT_TEXT;
    } else if (strcmp(format, "csv") == 0) {
        fmt = PM_FMT_CSV;
    } else if (strcmp(format, "json") == 0) {
        fmt = PM_FMT_JSON;
    } else if (strcmp(format, "html") == 0) {
        fmt = PM_FMT_HTML;
    } else if (strcmp(format, "folded") == 0) {
        fmt = PM_FMT_FOLDED;
    } else if (strcmp(format, "speedscope") == 0) {
        fmt = PM_FMT_SPEEDSCOPE;
    } else {
        snprintf(msg, sizeof msg, "unknown report format '%.64s' (use text, csv, json, html, "
                 "folded or speedscope)", format);
        pm_set_err(err, errlen, NULL, msg);
        return -1;
    }
    if (!out) {
        pm_set_err(err, errlen, path, "no output stream");
        return -1;
    }
    if (!path) {
        pm_set_err(err, errlen, NULL, "no file given");
        return -1;
    }
    pm_opts = o; /* the child inherits it through fork */
    rc = pm_report_isolated(path, fmt, out, err, errlen);
    pm_opts = NULL;
    if (fflush(out) != 0 || ferror(out)) {
        snprintf(msg, sizeof msg, "cannot write the report: %s", strerror(errno));
        if (rc == 0 || (err && err[0] == '\0'))
            pm_set_err(err, errlen, path, msg);
        rc = -1;
    }
    return rc;
}
