/* perfmark — the command line: report a file, list event groups, check what
 * this machine allows. libperfmark_cli.so, loaded by the `perfmark` program
 * (front.c) for every command but `run` (run.c). */
#define _GNU_SOURCE
#include "pm_cpu_models.h"
#include "pm_cpu_id.h"
#include "pm_topdown.h"
#include "cli/diff.h"
#include "pm_events.h"
#include "read_guard.h"
#include "cli/report.h"
#include "cli/report_many.h"
#include "cli/find.h"
#include "cli/run.h"
#include "model/report_mpi.h"
#include "model/report_spool.h"
#include "selftest.h"

#include <errno.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef PERFMARK_VERSION
#define PERFMARK_VERSION "unknown"
#endif

static const char pm_usage[] =
    "usage: perfmark <command> [options]\n"
    "\n"
    "Measure MPI + OpenMP programs with performance counters, per region, thread\n"
    "and rank, into one HDF5 file; then report it.\n"
    "\n"
    "commands:\n"
    "  run [options] -- CMD [ARGS...]   run CMD with perfmark preloaded\n"
    "  attach PID [options]             count a running process from outside\n"
    "  report FILE.h5... [options]      aggregate measurement files\n"
    "  diff A.h5 B.h5 [options]         the change from run A to run B per region;\n"
    "                                   exit 1 on a regression beyond --threshold\n"
    "  list                             event groups, and which events count here\n"
    "  check                            what this machine allows (PMU, paranoid, ...)\n"
    "  selftest [--keep] [--no-perf]    does counting work here? known kernels, judged\n"
    "  help [COMMAND]                   this text, or a command's\n"
    "\n"
    "perfmark COMMAND --help gives the options of COMMAND; perfmark --version the\n"
    "version alone. Version " PERFMARK_VERSION ".\n";

static const char pm_usage_attach[] =
    "usage: perfmark attach PID [--duration S] [-e LIST] [-o FILE] [--interval T] [-q]\n"
    "\n"
    "Counts process PID, already running, from outside: every thread it has and\n"
    "each new one as it appears (/proc/PID/task, looked at every 50 ms), until\n"
    "the duration ends, SIGINT or SIGTERM, or the process exits; then writes a\n"
    "normal perfmark file (a row per thread with its totals; counts over time\n"
    "with --interval) for perfmark report and diff. Nothing is loaded into the\n"
    "process and it is left running unharmed; it needs no markers (and regions\n"
    "it marks are not seen: run it under perfmark run for those).\n"
    "\n"
    "  --duration S   stop after S seconds, a number above 0 (default: when it\n"
    "                 exits, or on SIGINT)\n"
    "  -e, --events LIST  events, as for perfmark run (default: default)\n"
    "  -o, --output FILE  the file (default perfmark-attach-PID-<local time>.h5)\n"
    "  --interval T   counts over time every T (100ms, 1s), as perfmark run's\n"
    "  -q, --quiet    no messages on stderr (they are in the file)\n"
    "\n"
    "Needs the process's user (or root, or CAP_PERFMON), kernel.perf_event_paranoid\n"
    "<= 2 and kernel.yama.ptrace_scope <= 1; where refused, one message names the\n"
    "setting. Exit status: 0 written, 1 not written, 2 nothing counted (no such\n"
    "process, refused, or an option that does not parse).\n";

static const char pm_usage_report[] =
    "usage: perfmark report FILE.h5... [--format text|csv|json|html|folded|speedscope]\n"
    "                [-o OUT]\n"
    "                [--by region|rank|thread] [--region NAME] [--top N] [--metric M]\n"
    "                [--read-timeout S] [--wide]\n"
    "       (-f F and --format=F are --format F)\n"
    "\n"
    "Several files: each is reported in turn (the options apply to each), as one\n"
    "output: text one report after another; json an array of the report objects\n"
    "({\"file\", \"error\"} for a file that could not be read); csv one table with\n"
    "a first column `file` and the union of the files' columns; html one page\n"
    "with a section per file. Exit status 1 when any file failed, after the\n"
    "others were reported.\n"
    "\n"
    "  --by B       text: region (default) is the full report; rank or thread prints\n"
    "               one table of the metric per (region, rank) or (region, thread)\n"
    "  --region R   only the regions named R (name or path) and everything below\n"
    "  --top N      only the N regions with the largest metric, largest first\n"
    "  --metric M   time (inclusive, default), excl (exclusive), visits, or an\n"
    "               event as measured (e.g. page-faults)\n"
    "  --wide       text: never cut region names (a name too long for its column\n"
    "               is otherwise cut in the middle, keeping its start and end)\n"
    "  --read-timeout S  stop reading a file that made no progress for S seconds\n"
    "               (default 10 s + 1 s per 100 MB of the file, doubled for html\n"
    "               and --by rank|thread; 0: never; at most 86400; env\n"
    "               PERFMARK_READ_TIMEOUT)\n"
    "JSON always holds every region; the choice is in its \"selection\" key.\n"
    "\n"
    "Per region (a tree by call path): visits, inclusive and exclusive wall time,\n"
    "each event as total and per-thread min/mean/max/stddev, the imbalance\n"
    "max/mean with the thread of the max, IPC where instructions and cycles were\n"
    "counted, OpenMP wait share, and data-quality flags (summary on top: how many\n"
    "cells carry each flag and where). Multiplexed values are\n"
    "scaled (raw x enabled/running), marked as estimates, with the share of time\n"
    "counted. Writes to stdout unless -o is given.\n"
    "\n"
    "Files written with the throttle also say which visits were measured: a time\n"
    "made of sampled visits (MPI polls) is an estimate (~), MPI polls read no\n"
    "counters (\"timer only\"), a THROTTLED region's counts are those of its\n"
    "visits before the throttle (*), and perfmark's own reads are estimated for\n"
    "the run (\"perfmark's reads\") and per region, beside the numbers, never\n"
    "subtracted.\n"
    "\n"
    "Files with samples (perfmark run --sample) add, per sampled event, the whole\n"
    "run and each region (its own samples and those of the regions inside it):\n"
    "samples, the estimated count (samples x period, marked ~, with its 95 %\n"
    "error 2/sqrt(n)), lost and throttled samples (SAMPLES_LOST), and the top\n"
    "functions, source lines and (with --sample-callchain) call paths with their\n"
    "share and spread across ranks (JSON: key samples); with call paths also each\n"
    "function's inclusive and self samples and the callers and callees of the\n"
    "hottest (JSON: calls), and how the paths were found (DWARF unwinding or\n"
    "frame pointers) with the samples left without callers. HTML adds a flame\n"
    "graph per sampled event: click a frame to zoom, search by name. Functions\n"
    "and lines are named from the objects the samples fell in, found by path and\n"
    "build-id, else by build-id under PERFMARK_SYMBOL_PATH and /usr/lib/debug,\n"
    "with a stripped object's debug file beside it or by build-id (C++ names\n"
    "demangled); objects not found, or rebuilt since the run, keep\n"
    "OBJECT+0xOFFSET.\n"
    "--format folded (one file) prints the sampled profile as folded stacks, the\n"
    "text flamegraph.pl, inferno and speedscope read: a line per stack, its\n"
    "region path, its callers (perfmark run --sample-callchain) and the sampled\n"
    "function joined by ';', a space, its samples; --metric names the sampled\n"
    "event (default: the first). --format speedscope (one file) writes the same\n"
    "stacks as a speedscope file (speedscope.app), a profile per sampled event.\n"
    "\n"
    "A file of several MPI ranks adds: each MPI function summed over its call\n"
    "paths (calls, bytes, time total and min/mean/max per rank, imbalance\n"
    "max/mean, the rank of the max), each rank's share of time in MPI, and the\n"
    "regions compared across ranks the same way (JSON: keys ranks, job_ranks,\n"
    "regions_by_rank, mpi_functions, mpi_share; CSV: columns appended to each\n"
    "row). A rank's value is the sum over its threads.\n"
    "\n"
    "--format html writes one self-contained page (inline CSS and SVG, no script,\n"
    "nothing loaded from the network): the flags summary, the region table, and\n"
    "charts: TopDown bars per region, a rank x region heat map of time (thread x\n"
    "region with one rank), MPI time per function and per rank, and per-thread\n"
    "bars of the heaviest regions. Open it in any browser.\n"
    "\n"
    "Large files: the cells are read a block of thread rows at a time and a rank's\n"
    "sums are dropped once its threads are in, so memory follows a block and the\n"
    "regions x events, not the file; the report waits in a temporary file\n"
    "($TMPDIR or /tmp) until complete. `mpirun -np N perfmark report FILE.h5`\n"
    "shares the blocks among N ranks (parallel HDF5 reads, sums joined on rank 0\n"
    "in a fixed order) and prints the same bytes as -np 1; rank 0 writes. MPI\n"
    "starts only under a launcher. html and --by rank|thread are made by rank 0\n"
    "alone. PERFMARK_REPORT_BLOCK=N: thread rows per block.\n"
    "\n"
    "A damaged file: HDF5 can crash or loop for ever on one. The file is read in\n"
    "a child process (under mpirun: watched by a thread of each rank); a crash,\n"
    "or a read that made no progress for the --read-timeout budget, is stopped\n"
    "and becomes one message naming the file and the object being read.\n"
    "A slow read that is moving is never stopped. PERFMARK_REPORT_TIMEOUT=S\n"
    "caps the whole read instead (unset: no cap).\n"
    "\n"
    "Exit status: 0 the report was written, 1 the file could not be reported\n"
    "(damaged, truncated, not a perfmark file: one message on stderr), 2 usage.\n";

static const char pm_usage_list[] =
    "usage: perfmark list\n"
    "\n"
    "Prints the CPU perfmark sees, the named event groups, their events for this\n"
    "CPU, and whether each event can be counted on this machine (and why not).\n"
    "PERFMARK_TEST_CPU=intel:F:M[:S] | amd:F:M | arm:MIDR shows another CPU's tables\n"
    "(for tests; docs/event-groups.md).\n";

static const char pm_usage_check[] =
    "usage: perfmark check\n"
    "\n"
    "Reports the CPU (from CPUID or the MIDR), hardware PMU presence,\n"
    "perf_event_paranoid, rdpmc, the NMI watchdog, TopDown and the clock, and what\n"
    "perfmark does about each.\n";

static const char pm_usage_selftest[] =
    "usage: perfmark selftest [--keep] [--no-perf]\n"
    "\n"
    "perfmark's own verdict on whether counting works on this machine. Kernels\n"
    "with known counts run under perfmark: pages written (page-faults), CPU time\n"
    "(task-clock), sleeps (context-switches), CPU moves (cpu-migrations), and where\n"
    "a hardware PMU exists a loop of known length (instructions, branches), pointer\n"
    "chases (cache misses), a multiplexed set, the TopDown sum and the rdpmc and\n"
    "read() modes. Where `perf` is installed, perf stat counts the same kernels.\n"
    "Prints a table with the expectation, perfmark's and perf's counts and a\n"
    "verdict per check and per group. Exit status 0 when every check that could\n"
    "run passed, 1 when one failed.\n"
    "\n"
    "  --keep      keep the measurement files (their directory is printed)\n"
    "  --no-perf   do not run perf stat\n";

/* ---- report ---------------------------------------------------------------- */

static int pm_report_write(const char *file, const char *format, const struct pm_report_opts *opts,
                           const char *out_path);

static int pm_report_write_many(const char *const *files, int n, const char *format,
                                const struct pm_report_opts *opts, const char *out_path);
/* perfmark attach: perfmark-attach (runtime/watch/pm_attach.c) beside this
 * program, or in ../libexec/perfmark, with the same arguments. */
static int pm_cmd_attach(int argc, char **argv)
{
    char path[PATH_MAX];
    if (pm_cli_find_program("perfmark-attach", path, sizeof path) == 0) {
        argv[0] = path;
        execv(path, argv);
    }
    (void)argc;
    fprintf(stderr, "perfmark attach: cannot find perfmark-attach next to this program\n");
    return 2;
}

static int pm_cmd_report(int argc, char **argv)
{
    const char *file = NULL, *format = "text", *out_path = NULL;
    const char **files = calloc((size_t)argc + 1, sizeof *files);
    int nfiles = 0;
    struct pm_report_opts opts = {PM_BY_REGION, NULL, 0, NULL, 0};
    if (!files) {
        fprintf(stderr, "perfmark report: out of memory\n");
        return 1;
    }
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if ((!strcmp(a, "--format") || !strcmp(a, "-f")) && i + 1 < argc)
            format = argv[++i];
        else if (!strcmp(a, "--by") && i + 1 < argc) {
            const char *b = argv[++i];
            if (!strcmp(b, "region"))
                opts.by = PM_BY_REGION;
            else if (!strcmp(b, "rank"))
                opts.by = PM_BY_RANK;
            else if (!strcmp(b, "thread"))
                opts.by = PM_BY_THREAD;
            else {
                fprintf(stderr, "perfmark report: --by takes region, rank or thread, not '%s'\n", b);
                return 2;
            }
        } else if (!strcmp(a, "--region") && i + 1 < argc)
            opts.region = argv[++i];
        else if (!strcmp(a, "--metric") && i + 1 < argc)
            opts.metric = argv[++i];
        else if (!strcmp(a, "--top") && i + 1 < argc) {
            char *end;
            errno = 0;
            unsigned long long n = strtoull(argv[++i], &end, 10);
            if (errno || *end || n == 0 || argv[i][0] == '-') {
                fprintf(stderr, "perfmark report: --top takes a positive number, not '%s'\n",
                        argv[i]);
                return 2;
            }
            opts.top = (size_t)n;
        }
        else if (!strcmp(a, "--read-timeout") && i + 1 < argc) {
            double s;
            if (pm_read_timeout_parse(argv[++i], &s) < 0) {
                fprintf(stderr, "perfmark report: --read-timeout takes seconds from 0 to "
                        "86400, not '%s'\n", argv[i]);
                return 2;
            }
            pm_read_timeout_set(s);
        }
        else if (!strcmp(a, "--wide"))
            opts.wide = 1;
        else if (!strncmp(a, "--format=", 9))
            format = a + 9;
        else if (!strcmp(a, "-o") && i + 1 < argc)
            out_path = argv[++i];
        else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "perfmark report: unknown option '%s'\n\n%s", a, pm_usage_report);
            return 2;
        } else {
            if (!file)
                file = a;
            files[nfiles++] = a; /* argc bounds it */
        }
    }
    if (!file) {
        fprintf(stderr, "perfmark report: no file given\n\n%s", pm_usage_report);
        return 2;
    }
    if (strcmp(format, "text") && strcmp(format, "csv") && strcmp(format, "json") &&
        strcmp(format, "html") && strcmp(format, "folded") && strcmp(format, "speedscope")) {
        fprintf(stderr, "perfmark report: unknown format '%s' (text, csv, json, html, folded "
                "or speedscope)\n", format);
        return 2;
    }
    if ((strcmp(format, "folded") == 0 || strcmp(format, "speedscope") == 0) && nfiles > 1) {
        fprintf(stderr, "perfmark report: --format %s takes one file (%d given)\n", format,
                nfiles);
        return 2;
    }
    /* Under mpirun the ranks share the work and rank 0 alone writes. */
    pm_report_mpi_init();
    int rc = nfiles == 1 ? pm_report_write(file, format, &opts, out_path)
                         : pm_report_write_many(files, nfiles, format, &opts, out_path);
    free(files);
    return pm_report_mpi_end(rc);
}

/* Several files: each reported in turn (report_many.c), everything to stdout
 * or -o; 1 when any could not be reported, after reporting the others. */
static int pm_report_write_many(const char *const *files, int n, const char *format,
                                const struct pm_report_opts *opts, const char *out_path)
{
    int write = pm_report_mpi_rank() == 0;
    FILE *out = !write ? NULL : out_path ? fopen(out_path, "w") : stdout;
    if (write && !out) {
        fprintf(stderr, "perfmark report: cannot write %s: %s\n", out_path, strerror(errno));
        return 1;
    }
    int failed = pm_report_many(files, n, format, opts, out, write);
    if (write && (out != stdout ? fclose(out) != 0 : fflush(stdout) != 0)) {
        fprintf(stderr, "perfmark report: cannot write %s: %s\n",
                out_path ? out_path : "standard output", strerror(errno));
        return 1;
    }
    return failed != 0;
}

static int pm_report_write(const char *file, const char *format, const struct pm_report_opts *opts,
                           const char *out_path)
{
    /* Render into a temporary file first (into memory if there is none): a
     * failed report leaves no half output file, and a large report costs
     * disk, not memory. */
    char *text = NULL, err[1024] = "";
    size_t len = 0;
    FILE *spool = pm_report_spool();
    FILE *mem = spool ? spool : open_memstream(&text, &len);
    if (!mem) {
        fprintf(stderr, "perfmark report: out of memory\n");
        return 1;
    }
    int rc = pm_report_file_opts(file, format, opts, mem, err, sizeof err);
    if (!spool)
        fclose(mem);
    if (pm_report_mpi_rank() != 0 || rc != 0) { /* another rank's share went to rank 0 */
        if (pm_report_mpi_rank() == 0)
            fprintf(stderr, "perfmark report: %s\n", err);
        if (spool)
            fclose(spool);
        free(text);
        return rc != 0;
    }
    FILE *out = out_path ? fopen(out_path, "w") : stdout;
    int ok = out && (spool ? pm_report_copy(spool, out) == 0 : fwrite(text, 1, len, out) == len);
    ok = (out && out != stdout ? fclose(out) == 0 : fflush(stdout) == 0) && ok;
    if (spool)
        fclose(spool);
    free(text);
    if (!ok) {
        fprintf(stderr, "perfmark report: cannot write %s: %s\n",
                out_path ? out_path : "standard output", strerror(errno));
        return 1;
    }
    return 0;
}

/* ---- list ------------------------------------------------------------------ */

static void pm_list_event(const char *name)
{
    char why[PM_NOTE_LEN];
    int ok = pm_event_probe(name, why, sizeof why);
    printf("         %-18s %s%s\n", name, ok ? "counts here" : "no: ", ok ? "" : why);
}

/* Groups whose events depend on the CPU model: the detected model's row. */
static void pm_list_model_group(const char *group)
{
    const struct pm_cpu_model *m = pm_cpu_model_detect();
    const struct pm_model_group *mg = pm_cpu_model_group_named(m, group);
    if (!mg && m) {
        printf("         here: not defined for %s (%s): measures 'sw' instead\n", m->name,
               m->description);
        return;
    }
    if (!mg) {
        char cpu[160];
        pm_cpu_describe(cpu, sizeof cpu);
        printf("         here: no tables for %s: measures 'sw' instead\n", cpu);
        return;
    }
    printf("         here: %s tables (%s)\n", m->name, m->description);
    for (int i = 0; i < PM_MODEL_MAX_EVENTS && mg->events[i].pfm; i++) {
        char name[PM_EVENT_NAME_LEN];
        if (strcmp(group, "topdown") == 0 && m->td_method == PM_TD_METHOD_ZEN4 &&
            i == PM_TD_ZEN4_L1_EVENTS)
            printf("         level 2, %s (PERFMARK_TOPDOWN_LEVELS=2; multiplexed with level 1):\n",
                   pm_topdown_level2_asked() ? "measured" : "not measured unless asked");
        if (pm_cpu_model_event_name(m, mg->events[i].pfm, name, sizeof name) == 0)
            pm_list_event(name);
    }
}

/* The CPU perfmark sees, and whether PERFMARK_TEST_CPU chose it. */
static void pm_print_cpu(void)
{
    char cpu[160];
    pm_cpu_describe(cpu, sizeof cpu);
    printf("CPU:          %s%s\n", cpu,
           pm_cpu_id()->from_override ? " [PERFMARK_TEST_CPU, not this machine's]" : "");
    if (pm_cpu_id_override_error()[0])
        printf("              %s\n", pm_cpu_id_override_error());
}

static int pm_cmd_list(void)
{
    int pmu = pm_pmu_present();
    pm_print_cpu();
    printf("\n");
    printf("Event groups (PERFMARK_EVENTS or perfmark run -e):\n\n");
    for (const struct pm_event_group_def *g = pm_event_groups; g->name; g++) {
        printf("%-8s %s\n", g->name, g->description);
        if (strcmp(g->name, "default") == 0)
            printf("         here: %s\n", pmu ? "ipc + task-clock + page-faults"
                                              : "sw (this machine has no hardware PMU)");
        if (g->per_model)
            pm_list_model_group(g->name);
        for (int i = 0; g->events[i]; i++)
            pm_list_event(g->events[i]);
    }
    printf("\nAny libpfm4 event name works too, with modifiers (u, k, and on hardware\n"
           "events e, i, c=N), e.g. -e task-clock,page-faults:u. See docs/event-groups.md.\n");
    return 0;
}

/* ---- check ------------------------------------------------------------------- */

static int pm_read_int(const char *path, int *value)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    int ok = fscanf(f, "%d", value) == 1;
    fclose(f);
    return ok ? 0 : -1;
}

static void pm_check_rdpmc(int pmu)
{
    if (!pmu) {
        printf("rdpmc:        not applicable (no hardware counters)\n"
               "              perfmark reads counters with read() (~0.3 us per group).\n");
        return;
    }
    struct pm_event ev;
    char err[PM_NOTE_LEN];
    int cap = -1;
    if (pm_event_encode("instructions", pm_user_only(), &ev, err, sizeof err) == 0) {
        int fd = pm_perf_open(&ev.attr, -1, -1);
        if (fd >= 0) {
            struct perf_event_mmap_page *p =
                mmap(NULL, (size_t)sysconf(_SC_PAGESIZE), PROT_READ, MAP_SHARED, fd, 0);
            if (p != MAP_FAILED) {
                cap = (int)p->cap_user_rdpmc;
                munmap(p, (size_t)sysconf(_SC_PAGESIZE));
            }
            close(fd);
        }
    }
    int sysfs = -1;
    pm_read_int("/sys/bus/event_source/devices/cpu/rdpmc", &sysfs);
    printf("rdpmc:        %s (sysfs rdpmc=%d)\n", cap == 1 ? "granted" : "not granted", sysfs);
    printf("              perfmark reads %s.\n", cap == 1
               ? "hardware counters with rdpmc from user space (no syscall)"
               : "counters with read(); echo 2 > /sys/bus/event_source/devices/cpu/rdpmc "
                 "allows rdpmc");
}

static void pm_check_topdown(int pmu)
{
    static const char *const method[] = {
        "none", "PERF_METRICS (slots + metric events)", "generic events (Skylake method)",
        "pipeline utilisation (Zen 4 method)", "slot accounting (Arm Neoverse method)",
        "TOPDOWN_*.ALL_P slot events (Intel E-core method)"};
    _Static_assert(sizeof method / sizeof *method == PM_TD_NMETHODS,
                   "a name per enum pm_td_method");
    const struct pm_cpu_model *m = pm_cpu_model_detect();
    if (!m) {
        printf("TopDown:      not available: perfmark has no tables for this CPU;\n"
               "              -e topdown measures the 'sw' group instead and says so.\n");
        return;
    }
    int td = m->td_method >= 0 && m->td_method < PM_TD_NMETHODS ? (int)m->td_method : 0;
    if (td == PM_TD_METHOD_NONE || !pm_cpu_model_group(m, PM_GROUP_TOPDOWN)) {
        printf("TopDown:      not available: CPU model %s (%s) has no TopDown method;\n"
               "              -e topdown measures the 'sw' group instead and says so.\n"
               "              %s\n",
               m->name, m->description, m->note ? m->note : "");
        return;
    }
    printf("TopDown:      %s: CPU model %s (%s), method %s, level%s %s\n",
           pmu ? "available" : "not available", m->name, m->description, method[td],
           m->td_levels > 1 ? "s 1-" : " ", m->td_levels > 1 ? "2" : "1");
    if (!pmu)
        printf("              this machine has no hardware PMU (the model comes from CPUID/MIDR);\n"
               "              -e topdown falls back to the 'sw' group and says so.\n");
    if (m->hybrid)
        printf("              hybrid CPU: TopDown is counted on P-cores only.\n");
}

static void pm_check_mpi(void);

static void pm_check_mpi(void);

static int pm_cmd_check(void)
{
    int pmu = pm_pmu_present();
    printf("perfmark %s on this machine\n\n", PERFMARK_VERSION);
    pm_print_cpu();
    printf("hardware PMU: %s\n", pmu ? "present" : "absent");
    printf("              %s\n", pmu
               ? "hardware events (cycles, instructions, TopDown) can be counted."
               : "only software events count here (VM, container or no PMU driver);\n"
                 "              perfmark falls back to the 'sw' group and says so in the file.");
    int paranoid = 2;
    if (pm_read_int("/proc/sys/kernel/perf_event_paranoid", &paranoid) != 0)
        printf("paranoid:     unknown (no /proc/sys/kernel/perf_event_paranoid)\n");
    else
        printf("paranoid:     perf_event_paranoid=%d, running as %s\n              %s\n",
               paranoid, geteuid() == 0 ? "root" : "a normal user",
               geteuid() == 0 ? "root counts user and kernel space."
               : paranoid >= 3 ? "level 3 may forbid perf_event_open for users: perfmark "
                                 "then measures time only."
               : paranoid >= 2 ? "user space only: perfmark counts with exclude_kernel=1 "
                                 "(context-switches then read 0)."
                               : "user and kernel space can be counted.");
    pm_check_rdpmc(pmu);
    int nmi = -1;
    if (pm_read_int("/proc/sys/kernel/nmi_watchdog", &nmi) != 0)
        printf("NMI watchdog: not present\n");
    else
        printf("NMI watchdog: %s\n              %s\n", nmi ? "on" : "off",
               nmi && pmu ? "it holds one hardware counter: large groups multiplex sooner "
                            "(sysctl kernel.nmi_watchdog=0 frees it)."
                          : "no counter is taken from perfmark.");
    char why[PM_NOTE_LEN];
    int sw = pm_event_probe("task-clock", why, sizeof why);
    printf("software:     %s\n", sw ? "task-clock, page-faults, ... count here"
                                    : why);
    pm_check_topdown(pmu);
    printf("clock:        region wall time from %s\n",
           "rdtsc where the TSC is invariant, else CLOCK_MONOTONIC");
    pm_check_mpi();
    return 0;
}

/* Which MPIs this install measures: the wrapper libraries beside it
 * (wrappers/mpi/: one per MPI ABI, loaded by each process for its MPI). */
static void pm_check_mpi(void)
{
    static const struct { const char *lib, *what; } abis[] = {
        {"libperfmark_mpi_openmpi.so", "Open MPI"},
        {"libperfmark_mpi_mpich.so", "the MPICH ABI (MPICH, Intel MPI, Cray MPICH, MVAPICH)"},
    };
    char path[PATH_MAX], have[512] = "";
    for (size_t i = 0; i < sizeof abis / sizeof *abis; i++)
        if (pm_cli_find_library(abis[i].lib, path, sizeof path) == 0)
            snprintf(have + strlen(have), sizeof have - strlen(have), "%s%s",
                     have[0] ? ", " : "", abis[i].what);
    printf("MPI:          %s\n              %s\n",
           have[0] ? have : "no MPI wrapper library beside libperfmark.so",
           have[0] ? "each process uses the wrappers of the MPI it loads; any other MPI runs "
                     "unmeasured, said once (perfmark run --mpi)."
                   : "MPI programs run, their MPI calls unmeasured.");
}

/* Every command but a plain `run`, which the `perfmark` program (front.c)
 * runs before loading this library. */
__attribute__((visibility("default"))) int pm_cli_main(int argc, char **argv)
{
    if (argc < 2) {
        fputs(pm_usage, stderr);
        return 2;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h")) {
        fputs(pm_usage, stdout);
        return 0;
    }
    if (!strcmp(cmd, "--version")) {
        printf("perfmark %s\n", PERFMARK_VERSION);
        return 0;
    }
    struct { const char *name, *usage; } usages[] = {
        {"run", pm_usage_run}, {"report", pm_usage_report}, {"attach", pm_usage_attach},
        {"list", pm_usage_list}, {"check", pm_usage_check}, {"diff", pm_diff_usage},
        {"selftest", pm_usage_selftest},
    };
    if (!strcmp(cmd, "help")) {
        for (size_t i = 0; argc > 2 && i < sizeof usages / sizeof *usages; i++)
            if (!strcmp(argv[2], usages[i].name)) {
                fputs(usages[i].usage, stdout);
                return 0;
            }
        fputs(pm_usage, stdout);
        return 0;
    }
    for (size_t i = 0; i < sizeof usages / sizeof *usages; i++)
        if (!strcmp(cmd, usages[i].name) && pm_cli_wants_help(argc - 2, argv + 2)) {
            fputs(usages[i].usage, stdout);
            return 0;
        }
    if (!strcmp(cmd, "attach"))
        return pm_cmd_attach(argc - 1, argv + 1);
    if (!strcmp(cmd, "report"))
        return pm_cmd_report(argc - 1, argv + 1);
    if (!strcmp(cmd, "diff"))
        return pm_diff_main(argc - 1, argv + 1);
    if (!strcmp(cmd, "list"))
        return pm_cmd_list();
    if (!strcmp(cmd, "check"))
        return pm_cmd_check();
    if (!strcmp(cmd, "selftest"))
        return pm_selftest_main(argc - 1, argv + 1);
    fprintf(stderr, "perfmark: unknown command '%s'\n\n%s", cmd, pm_usage);
    return 2;
}
