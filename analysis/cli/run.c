/* perfmark run: the job started at once, with libperfmark.so preloaded.
 * Built into the `perfmark` program itself (cli/front.c), which links
 * nothing but libc: the other commands' libraries (HDF5, MPI, libdw: ~50
 * objects, ~8 ms to load) would otherwise delay every measured job. */
#define _GNU_SOURCE
#include "cli/run.h"

#include "cli/find.h"
#include "cli/run_hooks.h"

#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

const char pm_usage_run[] =
    "usage: perfmark run [options] -- CMD [ARGS...]\n"
    "\n"
    "Runs CMD with libperfmark.so preloaded and measurement enabled. At exit the\n"
    "measured process writes one HDF5 file and prints its name.\n"
    "\n"
    "options (each sets the environment variable in brackets):\n"
    "  -e, --events LIST    event group (default, sw, ipc, topdown, branch, cache,\n"
    "                       mem, none: perfmark list) or comma list of libpfm4\n"
    "                       event names with modifiers [PERFMARK_EVENTS];\n"
    "                       topdown is level 1 on AMD Zen 4/5 unless\n"
    "                       PERFMARK_TOPDOWN_LEVELS=2 (level 2 multiplexes with it)\n"
    "  -o, --output PATH    output file, or a directory for the default name\n"
    "                       perfmark-<job id or timestamp>.h5 [PERFMARK_OUTPUT]\n"
    "  -q, --quiet          no messages on stderr (they are still in the file)\n"
    "                       [PERFMARK_QUIET]\n"
    "      --pin MODE       bind with hwloc: keep (default: the launcher's or\n"
    "                       OMP_PROC_BIND's binding, recorded), none, ranks (each\n"
    "                       local rank a disjoint share of cores), threads (and\n"
    "                       each thread one PU of its rank's share) [PERFMARK_PIN];\n"
    "                       shares come from the CPUs perfmark run may use on its\n"
    "                       host (taskset, numactl) [PERFMARK_PIN_CPUS]\n"
    "      --mpi WHICH      the MPI wrappers: auto (default: those built for the MPI\n"
    "                       each rank loads, Open MPI or the MPICH ABI: MPICH,\n"
    "                       Intel MPI, Cray MPICH, MVAPICH), openmpi or mpich (for\n"
    "                       an MPI library perfmark cannot name: it must have that\n"
    "                       ABI), none (MPI calls not measured) [PERFMARK_MPI]\n"
    "      --threads WHICH  all (default): every thread of a measured process has a\n"
    "                       row from its start, markers or not, its totals the\n"
    "                       kernel's record at its exit; own: the same, each thread\n"
    "                       with counters of its own from its start (costs more a\n"
    "                       thread); markers: a thread from its first marker or\n"
    "                       OpenMP construct [PERFMARK_THREADS]\n"
    "      --exclude-threads PATTERNS  leave threads out of the file whose name or\n"
    "                       start routine matches one of these comma-separated\n"
    "                       shell patterns ('cuda-*,*libopen-pal*'); the main thread\n"
    "                       never [PERFMARK_THREADS_EXCLUDE]\n"
    "      --detail MODE    an MPI job's file: auto (default: every rank's rows, a\n"
    "                       summary file past PERFMARK_SUMMARY_ABOVE bytes of rows),\n"
    "                       full, or summary (the statistics over every rank made\n"
    "                       in the job, the rows of a few ranks) [PERFMARK_DETAIL]\n"
    "      --pinned         pin the per-thread counter groups: a group the kernel\n"
    "                       takes away reads as lost (LOST_GENERATION) instead of\n"
    "                       being multiplexed [PERFMARK_PINNED]\n"
    "      --throttle SPEC  which visits read counters: on (default: warmup=100,k=40:\n"
    "                       after 100 visits a region shorter than 40 counter\n"
    "                       reads goes on with visits and time only, THROTTLED;\n"
    "                       MPI polls never read, TIMER_ONLY), warmup=N,k=K, or\n"
    "                       off (every visit read and timed) [PERFMARK_THROTTLE]\n"
    "      --sample LIST    also sample: a comma list of EVENT@PERIOD, the period in\n"
    "                       the event's unit (cpu-clock@1ms, page-faults@64,\n"
    "                       cycles@2000003; time events take ns/us/ms/s, and\n"
    "                       default to 1ms); samples are credited to the region\n"
    "                       open at the time and to their function and source\n"
    "                       line (named offline by perfmark report) [PERFMARK_SAMPLE]\n"
    "      --sample-callchain[=dwarf|fp]  record the callers of each sample too:\n"
    "                       dwarf (the default) unwinds a copy of the user stack\n"
    "                       with the objects' call-frame information, for code\n"
    "                       built without frame pointers; fp walks the frame\n"
    "                       pointers, cheaper where the code keeps them\n"
    "                       [PERFMARK_SAMPLE_CALLCHAIN]\n"
    "      --sample-stack BYTES  dwarf: user stack copied per sample (8192;\n"
    "                       deeper stacks need more) [PERFMARK_SAMPLE_STACK]\n"
    "      --interval T     also read every thread's counters every T (100ms, 1s;\n"
    "                       at least 1ms) from a thread of perfmark's: counts over\n"
    "                       time, with the region each thread was in [PERFMARK_INTERVAL]\n"
    "      --node           also watch every CPU of the job's cpuset on each node\n"
    "                       (one process per node): the time in the job's own\n"
    "                       processes against everything else (OS noise, other\n"
    "                       processes) and idle; needs root, CAP_PERFMON or\n"
    "                       perf_event_paranoid <= 0 [PERFMARK_NODE]\n"
    "      --count MODE     exact (default): markers read the -e events; sampled:\n"
    "                       the -e events are sampled instead (EVENT@PERIOD in -e,\n"
    "                       else 1ms for time events, 100 for other software\n"
    "                       events, 1000003 for the rest), markers read no\n"
    "                       counters, and every count is an estimate from\n"
    "                       samples, with its error: for regions too short to\n"
    "                       read [PERFMARK_COUNT]\n"
    "      --bind-cpu N     testing aid: count each thread only while it runs on\n"
    "                       CPU N, producing real MULTIPLEXED / NOT_COUNTED\n"
    "                       readings without a PMU [PERFMARK_BIND_CPU]\n"
    "\n"
    "Exit status: that of CMD; 2 without starting CMD for an unknown option or one\n"
    "missing its value, or when the output directory does not exist or is not\n"
    "writable (an option's value that does not parse is said once when CMD starts,\n"
    "and the default used); 126/127 when CMD cannot\n"
    "be run. Where the file goes when it cannot be written at the end:\n"
    "PERFMARK_FALLBACK_DIR, then $TMPDIR, /tmp, /var/tmp.\n"
    "\n"
    "Works as `perfmark run -- ./app`, `perfmark run -- mpirun ... ./app` and\n"
    "`mpirun ... perfmark run -- ./app`. Programs that only link the markers and\n"
    "are started some other way measure nothing. Sets\n"
    "OMPI_MCA_odls_base_sigkill_timeout=3 unless set: the grace between Open\n"
    "MPI's SIGTERM and SIGKILL in which killed ranks save their data. Unless -e\n"
    "none alone: while CMD runs, a process named perfmark-hooks holds one perf\n"
    "event that counts nothing, so that CMD's processes open their counters\n"
    "without waiting for the kernel to switch its perf hooks on (4-14 ms each);\n"
    "not when perfmark run is one rank of a job, nor with PERFMARK_HOOKS=0.\n";

int pm_cli_wants_help(int argc, char **argv)
{
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0)
            return 0;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
            return 1;
    }
    return 0;
}

/* ---- run ------------------------------------------------------------------ */

/* The runtime to preload: PERFMARK_LIBRARY, else libperfmark.so beside. */
static int pm_find_runtime(char *out, size_t len)
{
    const char *env = getenv("PERFMARK_LIBRARY");
    if (env && *env) {
        snprintf(out, len, "%s", env);
        return access(out, R_OK);
    }
    return pm_cli_find_library("libperfmark.so", out, len);
}

/* Does an LD_PRELOAD list already hold a libperfmark.so (any path or
 * version suffix)? Then `run` keeps the list as it is. */
static int pm_preloads_runtime(const char *list)
{
    for (const char *p = list; *p;) {
        size_t n = strcspn(p, ": ");
        const char *base = p;
        for (const char *q = p; q < p + n; q++)
            if (*q == '/')
                base = q + 1;
        if ((size_t)(p + n - base) >= 14 && strncmp(base, "libperfmark.so", 14) == 0)
            return 1;
        p += n;
        p += strspn(p, ": ");
    }
    return 0;
}

/* Where the file will go: the directory of PERFMARK_OUTPUT (the directory
 * itself when it names one), or the working directory, in `dir`. NULL if
 * this process can create files there, else what is wrong. */
static const char *pm_output_dir_problem(char *dir, size_t len, char *why, size_t whylen)
{
    const char *out = getenv("PERFMARK_OUTPUT");
    struct stat st;
    if (!out || !*out)
        snprintf(dir, len, ".");
    else if (out[strlen(out) - 1] == '/' || (stat(out, &st) == 0 && S_ISDIR(st.st_mode)))
        snprintf(dir, len, "%s", out);
    else if (strrchr(out, '/'))
        snprintf(dir, len, "%.*s", strrchr(out, '/') == out ? 1 : (int)(strrchr(out, '/') - out),
                 out);
    else
        snprintf(dir, len, ".");
    if (stat(dir, &st) != 0)
        return errno == ENOENT ? "does not exist" : strerror(errno);
    if (!S_ISDIR(st.st_mode))
        return "is not a directory";
    /* access() says yes to root almost everywhere (/proc, say): create a
     * file to be sure, and remove it. */
    char probe[PATH_MAX + 32];
    snprintf(probe, sizeof probe, "%s/.perfmark-check-XXXXXX", dir);
    int fd = mkstemp(probe);
    if (fd < 0) {
        snprintf(why, whylen, "cannot take a file (%s)", strerror(errno));
        return why;
    }
    close(fd);
    unlink(probe);
    return NULL;
}

/* Was this `perfmark run` started by a launcher as one rank of a job
 * (`mpirun ... perfmark run -- ./app`, `srun perfmark run ...`)? */
static int pm_started_as_rank(void)
{
    static const char *const rank_vars[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK",
                                            "SLURM_STEP_ID", "MV2_COMM_WORLD_RANK",
                                            "MPI_LOCALRANKID", "PALS_RANKID"};
    for (size_t i = 0; i < sizeof rank_vars / sizeof *rank_vars; i++)
        if (getenv(rank_vars[i]))
            return 1;
    return 0;
}

/* PERFMARK_PIN_CPUS="HOST:LIST" from this process's affinity, for the
 * ranks and threads modes when the user did not set it: a `taskset` or
 * `numactl` around `perfmark run` bounds the shares of this host, as it
 * bounds every process started here (runtime/place/pm_pin.c). */
static void pm_export_pin_cpus(void)
{
    const char *mode = getenv("PERFMARK_PIN"), *set = getenv("PERFMARK_PIN_CPUS");
    cpu_set_t cpus;
    char host[256] = "", list[400] = ""; /* host:list fits PERFMARK_PIN_CPUS's 512 bytes */
    size_t used = 0;

    /* under a launcher (`mpirun ... perfmark run`), this process is a rank and
     * its affinity the launcher's binding of it, which pinning replaces */
    if (pm_started_as_rank())
        return;
    if (!mode || (strcmp(mode, "ranks") && strcmp(mode, "threads")) || (set && *set) ||
        sched_getaffinity(0, sizeof cpus, &cpus) != 0 || gethostname(host, sizeof host - 1) != 0)
        return;
    for (int c = 0; c < CPU_SETSIZE; c++) {
        if (!CPU_ISSET(c, &cpus) || (c > 0 && CPU_ISSET(c - 1, &cpus)))
            continue;  /* not the first CPU of a run */
        int last = c;
        while (last + 1 < CPU_SETSIZE && CPU_ISSET(last + 1, &cpus))
            last++;
        int n = last > c ? snprintf(list + used, sizeof list - used, "%s%d-%d", used ? "," : "",
                                    c, last)
                         : snprintf(list + used, sizeof list - used, "%s%d", used ? "," : "", c);
        if (n < 0 || (size_t)n >= sizeof list - used)
            return;  /* too fragmented to pass on: every allowed CPU, as without it */
        used += (size_t)n;
    }
    if (used) {
        char value[sizeof host + sizeof list + 2];
        snprintf(value, sizeof value, "%s:%s", host, list);
        setenv("PERFMARK_PIN_CPUS", value, 1);
    }
}

/* Should this run hold the kernel's perf hooks on (cli/run_hooks.c)? Only
 * where the job's processes open per-task perf events: not with -e none
 * alone (timer-only regions read none; node mode opens CPU-wide events,
 * which need no hooks). Not as one rank among many (`mpirun ... perfmark
 * run`): each would start its own, a few ms before its rank's first open,
 * where `perfmark run -- mpirun` starts one while mpirun starts. Not with
 * PERFMARK_HOOKS=0. */
static int pm_wants_hooks_held(void)
{
    const char *events = getenv("PERFMARK_EVENTS"), *sample = getenv("PERFMARK_SAMPLE"),
               *hooks = getenv("PERFMARK_HOOKS");
    if ((hooks && strcmp(hooks, "0") == 0) || pm_started_as_rank())
        return 0;
    return !events || strcmp(events, "none") != 0 ||
           (sample && *sample && strcasecmp(sample, "none") != 0);
}

int pm_cmd_run(int argc, char **argv)
{
    int i = 1;
    for (; i < argc && strcmp(argv[i], "--") != 0; i++) {
        const char *a = argv[i];
        const char *value = i + 1 < argc ? argv[i + 1] : NULL;
        if ((!strcmp(a, "-e") || !strcmp(a, "--events")) && value) {
            setenv("PERFMARK_EVENTS", value, 1), i++;
        } else if ((!strcmp(a, "-o") || !strcmp(a, "--output")) && value) {
            setenv("PERFMARK_OUTPUT", value, 1), i++;
        } else if (!strcmp(a, "--pin") && value) {
            setenv("PERFMARK_PIN", value, 1), i++;
        } else if (!strcmp(a, "--threads") && value) {
            setenv("PERFMARK_THREADS", value, 1), i++;
        } else if (!strcmp(a, "--exclude-threads") && value) {
            setenv("PERFMARK_THREADS_EXCLUDE", value, 1), i++;
        } else if (!strcmp(a, "--detail") && value) {
            setenv("PERFMARK_DETAIL", value, 1), i++;
        } else if (!strcmp(a, "--mpi") && value) {
            setenv("PERFMARK_MPI", value, 1), i++;
        } else if (!strcmp(a, "--throttle") && value) {
            setenv("PERFMARK_THROTTLE", value, 1), i++;
        } else if (!strcmp(a, "--sample") && value) {
            setenv("PERFMARK_SAMPLE", value, 1), i++;
        } else if (!strcmp(a, "--interval") && value) {
            setenv("PERFMARK_INTERVAL", value, 1), i++;
        } else if (!strcmp(a, "--node")) {
            setenv("PERFMARK_NODE", "1", 1);
        } else if (!strcmp(a, "--count") && value) {
            setenv("PERFMARK_COUNT", value, 1), i++;
        } else if (!strcmp(a, "--sample-callchain")) {
            setenv("PERFMARK_SAMPLE_CALLCHAIN", "dwarf", 1);
        } else if (!strncmp(a, "--sample-callchain=", 19)) {
            setenv("PERFMARK_SAMPLE_CALLCHAIN", a + 19, 1);
        } else if (!strcmp(a, "--sample-stack") && value) {
            setenv("PERFMARK_SAMPLE_STACK", value, 1), i++;
        } else if (!strcmp(a, "--bind-cpu") && value) {
            setenv("PERFMARK_BIND_CPU", value, 1), i++;
        } else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
            setenv("PERFMARK_QUIET", "1", 1);
        } else if (!strcmp(a, "--pinned")) {
            setenv("PERFMARK_PINNED", "1", 1);
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(pm_usage_run, stdout);  /* only among run's own options */
            return 0;
        } else if (a[0] != '-') {
            break;  /* `perfmark run ./app` without `--` */
        } else {
            fprintf(stderr, "perfmark run: unknown option '%s'\n\n%s", a, pm_usage_run);
            return 2;
        }
    }
    if (i < argc && strcmp(argv[i], "--") == 0)
        i++;
    if (i >= argc) {
        fprintf(stderr, "perfmark run: no command given\n\n%s", pm_usage_run);
        return 2;
    }
    pm_export_pin_cpus();
    /* Found out now, not after hours of compute. */
    char dir[PATH_MAX], why[256];
    const char *problem = pm_output_dir_problem(dir, sizeof dir, why, sizeof why);
    if (problem) {
        fprintf(stderr, "perfmark run: the output directory %s %s (-o or PERFMARK_OUTPUT); "
                "nothing was started\n", dir, problem);
        return 2;
    }
    char lib[PATH_MAX];
    if (pm_find_runtime(lib, sizeof lib) != 0) {
        fprintf(stderr, "perfmark run: cannot find libperfmark.so next to this program "
                "(set PERFMARK_LIBRARY); running %s unmeasured\n", argv[i]);
    } else {
        /* Ours first; the user's own entries kept (an entry that already
         * is our library is not repeated). */
        const char *old = getenv("LD_PRELOAD");
        char *preload = NULL;
        if (old && *old && pm_preloads_runtime(old))
            preload = strdup(old);
        else if (old && *old) {
            if (asprintf(&preload, "%s:%s", lib, old) < 0)
                preload = NULL;
        } else {
            preload = strdup(lib);
        }
        if (preload)
            setenv("LD_PRELOAD", preload, 1);  /* setenv copies it */
        free(preload);
        setenv("PERFMARK_ENABLE", "1", 1);
        /* When Open MPI kills a job (another rank aborted or died) it sends
         * SIGTERM and, 1 s later by default, SIGKILL; perfmark writes each
         * rank's data in between, which can take longer than 1 s on a busy
         * node. 3 s is enough there; more would cost every abnormally ending
         * job time, as Open MPI waits the grace out even for ranks already
         * gone (the user's own setting wins). */
        setenv("OMPI_MCA_odls_base_sigkill_timeout", "3", 0);
        char pid[32];
        snprintf(pid, sizeof pid, "%ld", (long)getpid());
        setenv("PERFMARK_PID", pid, 1);
        if (pm_wants_hooks_held())
            pm_run_hold_perf_hooks();
    }
    execvp(argv[i], argv + i);
    fprintf(stderr, "perfmark run: cannot run '%s': %s\n", argv[i], strerror(errno));
    return errno == ENOENT ? 127 : 126;
}
