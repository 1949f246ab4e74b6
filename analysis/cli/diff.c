/*
 * diff.c — the `perfmark diff A.h5 B.h5` command: options, each file read
 * once in the report's guarded child, then the diff itself in a watched
 * child of its own: the model (model/diff_model.c) built and rendered
 * (render/diff_*.c), the exit status for CI pipelines.
 */
#include "cli/diff.h"
#include "cli/report.h"
#include "model/diff_model.h"
#include "model/diff_profile.h"
#include "model/report_spool.h"
#include "read_guard.h"
#include "render/common/render_common.h"
#include "render/diff_render.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

const char pm_diff_usage[] =
    "usage: perfmark diff A.h5 B.h5 [--metric M] [--threshold PCT] [--region NAME]\n"
    "                     [--format text|csv|json] [-o OUT] [--read-timeout S]\n"
    "\n"
    "The change from run A to run B per region (matched by call path) and metric:\n"
    "time (wall, summed over threads), visits, each event measured in both files,\n"
    "and ipc when both have instructions and cycles. Columns: A, B, the change,\n"
    "the change in percent of A, and whether it is beyond the spread: the mean\n"
    "per unit changed by more than max - min over units in A or B (units are\n"
    "ranks when a file holds several ranks, else threads; '-' when neither file\n"
    "has two units in the region). The first row is the whole run (/thread\n"
    "totals). Regions in only one file are listed as such. '~' marks an\n"
    "estimate (multiplexed counters, scaled, or a time extrapolated from\n"
    "sampled visits: MPI polls), '!' an untrusted value (counts lost:\n"
    "NOT_COUNTED or LOST_GENERATION cells), '*' counts of the visits before the\n"
    "throttle only (THROTTLED); 'timer only': no counter is read there by\n"
    "design (MPI polls, TIMER_ONLY), so no count is compared. A summary file\n"
    "(PERFMARK_DETAIL=summary) is compared across all its job's ranks from the\n"
    "statistics it keeps: its regions as the full file would give them, its\n"
    "whole run and its samples not (n/a).\n"
    "\n"
    "options:\n"
    "  --metric M       show only metric M (time, visits, ipc or an event name,\n"
    "                   e.g. task-clock, page-faults); the metric --threshold\n"
    "                   checks (default time)\n"
    "  --threshold PCT  exit 1 when the metric regresses by more than PCT percent\n"
    "                   (5 or 5%)\n"
    "                   in any region or in the whole run: an increase for time,\n"
    "                   visits and events, a decrease for ipc. A region whose A\n"
    "                   value is 0 and B value is not regresses at any threshold\n"
    "  --region NAME    only regions with this name or call path (checked and\n"
    "                   shown; the whole run is then left out)\n"
    "  --format F       text (default), csv or json (also -f F)\n"
    "  -o OUT           write to OUT instead of stdout\n"
    "  --read-timeout S stop reading a file that made no progress for S seconds\n"
    "                   (as perfmark report: default 10 s + 1 s per 100 MB of the\n"
    "                   file, 0 never, env PERFMARK_READ_TIMEOUT); each file is\n"
    "                   read first in a crash-isolating child, so a damaged one\n"
    "                   is one message naming it\n"
    "\n"
    "Exit status: 0 no regression beyond the threshold (or no --threshold),\n"
    "1 a regression (each one named on stderr), 2 usage or file error (a damaged\n"
    "file included).\n";

/* ------------------------------------------------------------ command */

static int pm_usage_error(const char *fmt, const char *arg)
{
    fputs("perfmark diff: ", stderr);
    fprintf(stderr, fmt, arg);
    fputs(" (perfmark diff --help)\n", stderr);
    return 2;
}

/* HDF5 can crash or loop on a corrupt file (report.c, read_guard.c):
 * reading each file once in the report's guarded child turns that into one
 * message naming the file before the diff reads it. */
static int pm_diff_check(const char *path)
{
    char err[1024] = "";
    FILE *sink = fopen("/dev/null", "w");
    int rc;

    if (!sink) {
        fprintf(stderr, "perfmark diff: cannot open /dev/null: %s\n", strerror(errno));
        return -1;
    }
    rc = pm_report_file(path, "csv", sink, err, sizeof err);
    fclose(sink);
    if (rc == 0)
        return 0;
    fprintf(stderr, "perfmark diff: %s\n", err[0] ? err : path);
    return -1;
}

static int pm_diff_load(struct pm_diff_file *f)
{
    char err[1024] = "";

    if (pm_diff_open(f, err, sizeof err) == 0)
        return 0;
    fprintf(stderr, "perfmark diff: %s\n", err[0] ? err : f->path);
    return -1;
}

static int pm_diff_in_child; /* the diff runs in pm_diff_fork's child */

static void pm_diff_say(const char *file, const char *msg)
{
    fputs("perfmark diff: ", stderr);
    for (const char *c = file; *c; c++) /* one line, whatever the name holds */
        fputc((unsigned char)*c < 0x20 || *c == 0x7f ? '?' : *c, stderr);
    fprintf(stderr, ": %s\n", msg);
}

/* The diff itself reads both files through HDF5 again, and on a file that
 * passed the check HDF5 can still corrupt its own memory and crash or loop
 * later (seen under ASan with fuzz_mutants). So it runs in a child too,
 * watched like the report's (read_guard.h), its messages held in a
 * temporary file until it is known to have ended well. Returns -1 in the
 * child (go on with the diff), else the exit status for the parent. */
static int pm_diff_fork(const struct pm_diff *df)
{
    struct pm_progress *prog;
    struct pm_watch w;
    FILE *errs = pm_report_spool();
    int status = 0, why;
    double b0 = pm_read_budget(df->f[0].path, 0), b1 = pm_read_budget(df->f[1].path, 0);
    pid_t pid;

    prog = mmap(NULL, sizeof *prog, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (prog == MAP_FAILED || !errs) {
        if (errs)
            fclose(errs);
        if (prog != MAP_FAILED)
            munmap(prog, sizeof *prog);
        return -1; /* unguarded, as before */
    }
    memset(prog, 0, sizeof *prog);
    fflush(stdout);
    fflush(stderr);
    pid = fork();
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        signal(SIGPIPE, SIG_DFL);
        dup2(fileno(errs), STDERR_FILENO);
        pm_read_progress_attach(prog);
        pm_diff_in_child = 1;
        return -1;
    }
    if (pid < 0) {
        fclose(errs);
        munmap(prog, sizeof *prog);
        return -1;
    }
    pm_watch_start(&w, prog, b0 > b1 ? b0 : b1, pm_read_total(), 0);
    why = pm_read_guard_wait(pid, &w, &status);
    if (why > 0 || (why == 0 && WIFSIGNALED(status))) {
        char file[sizeof prog->file], msg[512];

        pm_watch_file(&w, file, sizeof file);
        if (why > 0)
            pm_watch_message(&w, why, msg, sizeof msg);
        else
            snprintf(msg, sizeof msg, "damaged HDF5 file: the HDF5 library crashed reading it "
                     "(%s)", strsignal(WTERMSIG(status)));
        pm_diff_say(file[0] ? file : df->f[1].path, msg);
        status = 2;
    } else if (why < 0) {
        fprintf(stderr, "perfmark diff: cannot wait for the diff process: %s\n", strerror(errno));
        status = 2;
    } else {
        fflush(errs);
        pm_report_copy(errs, stderr);
        status = WEXITSTATUS(status);
    }
    fclose(errs);
    munmap(prog, sizeof *prog);
    return status;
}

int pm_diff_main(int argc, char **argv)
{
    struct pm_diff df;
    const char *files[2] = {NULL, NULL}, *metric = NULL, *format = "text", *out_path = NULL;
    char *text = NULL;
    size_t nfiles = 0, len = 0;
    FILE *mem;
    int rc = 2;

    memset(&df, 0, sizeof df);
    df.mshow = PM_DIFF_NONE;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

        if (!strcmp(a, "--metric") || !strcmp(a, "--threshold") || !strcmp(a, "--region") ||
            !strcmp(a, "--format") || !strcmp(a, "-f") || !strcmp(a, "-o") ||
            !strcmp(a, "--read-timeout")) {
            if (!v)
                return pm_usage_error("%s needs a value", a);
            i++;
            if (!strcmp(a, "--read-timeout")) {
                double s;

                if (pm_read_timeout_parse(v, &s) < 0)
                    return pm_usage_error("--read-timeout takes seconds from 0 to 86400, not '%s'", v);
                pm_read_timeout_set(s);
            } else if (!strcmp(a, "--metric")) {
                metric = v;
            } else if (!strcmp(a, "--region")) {
                df.region = v;
            } else if (!strcmp(a, "-o")) {
                out_path = v;
            } else if (!strcmp(a, "--threshold")) {
                char *end;

                errno = 0;
                df.threshold = strtod(v, &end);
                if (errno || end == v || (*end && strcmp(end, "%")) || !isfinite(df.threshold) ||
                    df.threshold < 0)
                    return pm_usage_error("--threshold takes a percentage >= 0, not '%s'", v);
                df.has_threshold = 1;
            } else {
                format = v;
            }
        } else if (a[0] == '-' && a[1]) {
            return pm_usage_error("unknown option '%s'", a);
        } else if (nfiles < 2) {
            files[nfiles++] = a;
        } else {
            return pm_usage_error("two files only ('%s' is a third)", a);
        }
    }
    if (nfiles < 2)
        return pm_usage_error("%s", "give two files: perfmark diff A.h5 B.h5");
    if (strcmp(format, "text") && strcmp(format, "csv") && strcmp(format, "json"))
        return pm_usage_error("unknown format '%s' (text, csv or json)", format);
    if (df.has_threshold && !metric)
        metric = "time";
    for (int i = 0; i < 2; i++) {
        df.f[i].path = files[i];
        if (pm_diff_check(files[i]) < 0)
            goto out;
    }
    if ((rc = pm_diff_fork(&df)) >= 0)
        goto out; /* the child's verdict */
    rc = 2;
    for (int i = 0; i < 2; i++)
        if (pm_diff_load(&df.f[i]) < 0)
            goto out;
    if (pm_diff_units(&df) < 0)
        goto oom;
    int in_order[2];
    for (int i = 0; i < 2; i++) {
        in_order[i] = pm_diff_units_in_order(&df.f[i]);
        if (!in_order[i] && !df.f[i].d.summary) { /* threads out of rank order: the cells into memory */
            char err[1024] = "";

            if (pm_diff_load_cells(&df.f[i], err, sizeof err) < 0) {
                fprintf(stderr, "perfmark diff: %s\n", err);
                goto out;
            }
        }
    }
    /* after any reload: the metrics point at the files' event names */
    if (pm_diff_metrics(&df) < 0)
        goto oom;
    for (int i = 0; i < 2; i++) {
        char err[1024] = "";
        int s;

        if (df.f[i].d.summary)
            s = pm_diff_summary_sides(&df, i, err, sizeof err);
        else
            s = in_order[i] ? pm_diff_stream(&df, i, err, sizeof err) : 0;
        if (s < 0) {
            if (s == -1)
                goto oom;
            fprintf(stderr, "perfmark diff: %s\n", err);
            goto out;
        }
    }
    if (metric) {
        if (pm_diff_select_metric(&df, metric) < 0) {
            fprintf(stderr, "perfmark diff: no metric '%s' in both files (", metric);
            for (size_t m = 0; m < df.nm; m++)
                fprintf(stderr, "%s%s", m ? ", " : "", df.m[m].name);
            fprintf(stderr, ")\n");
            goto out;
        }
    }
    if (pm_diff_build(&df) < 0)
        goto oom;
    {
        char err[1024] = "";
        /* a summary file's samples are the kept ranks' only: not compared */
        if (!df.f[0].d.summary && !df.f[1].d.summary)
            df.prof = pm_diff_profiles(&df, err, sizeof err);
        if (!df.prof && err[0]) {
            fprintf(stderr, "perfmark diff: the sampled profiles: %s\n", err);
            goto out;
        }
    }
    if (df.region && df.npairs == 0) {
        fputs("perfmark diff: no region named '", stderr);
        pm_text_name(stderr, df.region, 80);
        fputs("' in either file\n", stderr);
        goto out;
    }
    mem = open_memstream(&text, &len);
    if (!mem)
        goto oom;
    if (!strcmp(format, "json"))
        pm_render_diff_json(mem, &df);
    else if (!strcmp(format, "csv"))
        pm_render_diff_csv(mem, &df);
    else
        pm_render_diff_text(mem, &df);
    if (fclose(mem) != 0)
        goto oom;
    {
        FILE *out = out_path ? fopen(out_path, "w") : stdout;
        int ok = out && fwrite(text, 1, len, out) == len;

        ok = (out && out != stdout ? fclose(out) == 0 : fflush(stdout) == 0) && ok;
        if (!ok) {
            fprintf(stderr, "perfmark diff: cannot write %s: %s\n",
                    out_path ? out_path : "standard output", strerror(errno));
            goto out;
        }
    }
    pm_render_diff_regressions(stderr, &df);
    rc = df.nregress > 0 ? 1 : 0;
    goto out;
oom:
    fprintf(stderr, "perfmark diff: out of memory\n");
out:
    free(text);
    pm_diff_profile_free(df.prof);
    pm_diff_free(&df);
    if (pm_diff_in_child) {
        fflush(stdout);
        fflush(stderr);
        _exit(rc); /* the parent's atexit handlers and streams are its own */
    }
    return rc;
}
