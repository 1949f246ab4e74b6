#define _GNU_SOURCE
#include "pm_session.h"
#include "pm_session_out.h"
#include "pm_clock.h"
#include "pm_config.h"
#include "pm_emergency.h"
#include "pm_exit_counts.h"
#include "pm_output.h"
#include "pm_own_thread.h"
#include "pm_thread_start.h"
#include "pm_thread_exits.h"
#include "pm_log.h"
#include "pm_modules.h"
#include "pm_node.h"
#include "pm_names.h"
#include "pm_on_written.h"
#include "pm_pin.h"
#include "pm_rank.h"
#include "pm_sample_drainer.h"
#include "pm_sample_spec.h"
#include "pm_series.h"
#include "pm_shim_check.h"
#include "pm_store.h"
#include "pm_summary.h"
#include "pm_writer.h"

#include <dirent.h>
#include <dlfcn.h>
#include <fnmatch.h>
#include <link.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <sys/prctl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

/* Exported for the MPI wrapper libraries' inline poll path (pm_auto.h). */
__attribute__((visibility("default"))) volatile int pm_state;

static struct pm_config pm_cfg;
static struct pm_eventset pm_set;
static struct pm_sample_spec pm_sample;  /* PERFMARK_SAMPLE as it can be had here */
static struct pm_counterset pm_process_set;
static pthread_mutex_t pm_start_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t pm_threads_lock = PTHREAD_MUTEX_INITIALIZER;
static struct pm_thread **pm_threads;
static int32_t pm_nthreads, pm_threads_cap;
static int32_t pm_nadopted;  /* threads running when perfmark started, not yet taken over */
/* A thread counted from its birth that has not entered a region yet: its
 * state is set up and registered, but pm_self stays NULL so that its first
 * marker or construct takes the slow path, where it is pinned. */
static __thread struct pm_thread *pm_born __attribute__((tls_model("initial-exec")));
/* PERFMARK_PIN=threads binds threads in the order they first enter a region
 * or construct (threads that never do, a library's helpers, are not bound). */
static int32_t pm_pin_slots;
static pthread_key_t pm_thread_key;
static char pm_start_time[32];
static char pm_stamp[32];
static uint64_t pm_start_mono;
static int pm_fork_child;
/* pm_exit_counts_open failed: threads open their own counters at birth. */
static int pm_exit_failed;
/* The calling thread carries the process-wide set: threads it starts
 * inherit it, so the kernel reports them at their exit. Others (adopted
 * threads, a thread other than the one that started a LAZY session) pass
 * nothing on: their threads open counters of their own. */
static __thread int pm_carrier;

static pid_t pm_own_pid;  /* the measured process (a vfork child is not) */
static int pm_output_dir;  /* PERFMARK_OUTPUT named a directory at start */
static char pm_command[2048];
static struct pm_rank_info pm_rank;
static int pm_partial;  /* the data stops short of the program's end */
static char pm_ompt_runtime[128];  /* set when OMPT started our tool */
static int pm_openmp_gomp;         /* libgomp's constructs measured (wrappers/gomp) */
static char pm_mpi_abi[16];        /* the ABI of the MPI measured here, or "" */
static char pm_mpi_what[256];      /* that MPI library, as the dispatcher found it */
static uint64_t pm_read_cost_ticks;  /* one reading of a thread's groups (pm_calibrate_reads) */
static char pm_throttle_text[64];    /* root attribute `throttle` */
/* Less free space than this where the file goes is said at start: even a
 * small job's file is ~20-100 KiB, a large one megabytes. */
#define PM_OUTPUT_ROOM_MIN ((uint64_t)1 << 20)
static void pm_describe_openmp(char *out, size_t len);
static void pm_adopt_running(void);
static void pm_write_outputs(struct pm_comm *job);
static void pm_session_emergency(int sig);
static struct pm_out_where pm_where(void);

static char pm_start_cwd[PM_PATH_MAX];  /* relative outputs resolve here, not
                                          where the program chdir'ed to */

/* If the process resolves perfmark_region_begin in another object, another
 * copy of libperfmark (linked from one prefix, preloaded from another) owns
 * the markers; this copy must stay out of the way. */
int pm_markers_are_primary(void)
{
    void *first = dlsym(RTLD_DEFAULT, "perfmark_region_begin");
    Dl_info theirs, ours;
    if (!first || !dladdr(first, &theirs) || !dladdr((void *)pm_markers_are_primary, &ours))
        return 1;
    return theirs.dli_fbase == ours.dli_fbase;
}

/* ---- starting -------------------------------------------------------------- */

static void pm_read_command(void)
{
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, pm_command, sizeof pm_command - 1) : -1;
    if (fd >= 0)
        close(fd);
    if (n <= 0) {
        snprintf(pm_command, sizeof pm_command, "(unknown)");
        return;
    }
    for (ssize_t i = 0; i < n - 1; i++)
        if (pm_command[i] == '\0')
            pm_command[i] = ' ';
    pm_command[n] = '\0';
}

static void pm_mark_start(void)
{
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(pm_start_time, sizeof pm_start_time, "%Y-%m-%dT%H:%M:%SZ", &tm);
    localtime_r(&now, &tm);
    strftime(pm_stamp, sizeof pm_stamp, "%Y%m%d-%H%M%S", &tm);
    pm_start_mono = pm_mono_ns();
    pm_own_pid = getpid();
    if (!getcwd(pm_start_cwd, sizeof pm_start_cwd))
        pm_start_cwd[0] = '\0';
    /* Decided now: if the directory is removed during the run, the file
     * must not take the directory's name (it goes to the fallback). */
    struct stat st;
    size_t olen = strlen(pm_cfg.output);
    pm_output_dir = olen && (pm_cfg.output[olen - 1] == '/' ||
                             (stat(pm_cfg.output, &st) == 0 && S_ISDIR(st.st_mode)));
}

/* Every rank resolves the same request the same way: rank 0 says it on
 * stderr, the others only in the file (where the job file merges them). */
static void pm_report_events(void)
{
    enum pm_msg_kind kind = pm_rank.rank > 0 ? PM_MSG_FILE_ONLY : PM_MSG_ONCE;
    if (pm_set.fallback[0])
        pm_msg(kind, "%s", pm_set.fallback);
    for (int i = 0; i < pm_set.nnotes; i++)
        pm_msg(kind, "%s", pm_set.notes[i]);
    for (int i = 0; i < pm_sample.nnotes; i++)
        pm_msg(kind, "%s", pm_sample.notes[i]);
}

/* PERFMARK_COUNT=sampled: the events of PERFMARK_EVENTS are sampled
 * instead of read, each at the period written after it (EVENT@PERIOD, or
 * GROUP@PERIOD for all of a group's) or its kind's default; markers then
 * read no counters, only the clock. Returns the sampling request (those
 * events, then PERFMARK_SAMPLE's own). */
static void pm_counting_by_samples(char *request, size_t len)
{
    char plain[sizeof pm_cfg.events] = "", buf[sizeof pm_cfg.events];
    struct {
        char name[PM_EVENT_NAME_LEN], period[40];
    } given[PM_MAX_EVENTS];
    int ngiven = 0;
    char group_period[40] = "";
    snprintf(buf, sizeof buf, "%s", pm_cfg.events);
    char *save = NULL;
    for (char *item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        char *at = strchr(item, '@');
        if (at)
            *at++ = '\0';
        size_t used = strlen(plain);
        snprintf(plain + used, sizeof plain - used, "%s%s", used ? "," : "", item);
        if (!at)
            continue;
        if (pm_event_group_find(item))
            snprintf(group_period, sizeof group_period, "%s", at);
        else if (ngiven < PM_MAX_EVENTS) {
            snprintf(given[ngiven].name, sizeof given[ngiven].name, "%s", item);
            snprintf(given[ngiven].period, sizeof given[ngiven].period, "%s", at);
            ngiven++;
        }
    }
    pm_eventset_build(plain, &pm_set);  /* what can be had here, with its fallbacks */
    snprintf(pm_set.requested, sizeof pm_set.requested, "%s", pm_cfg.events);
    request[0] = '\0';
    for (int i = 0; i < pm_set.n; i++) {
        const struct pm_event *ev = &pm_set.ev[i];
        char period[40];
        snprintf(period, sizeof period, "%s", group_period);
        for (int k = 0; k < ngiven; k++)
            if (strcmp(given[k].name, ev->name) == 0)
                snprintf(period, sizeof period, "%s", given[k].period);
        if (!period[0] && pm_sample_is_time_event(&ev->attr))
            snprintf(period, sizeof period, "%llums",
                     (unsigned long long)(pm_sample_default_period(&ev->attr) / 1000000));
        else if (!period[0])
            snprintf(period, sizeof period, "%llu",
                     (unsigned long long)pm_sample_default_period(&ev->attr));
        size_t used = strlen(request);
        snprintf(request + used, len - used, "%s%s@%s", used ? "," : "", ev->name, period);
    }
    if (pm_cfg.sample[0]) {
        size_t used = strlen(request);
        snprintf(request + used, len - used, "%s%s", used ? "," : "", pm_cfg.sample);
    }
    /* nothing is read: visits and time only */
    pm_set.n = 0;
    pm_set.ngroups = 0;
    pm_set.td_method = 0;
    snprintf(pm_set.group_name, sizeof pm_set.group_name, "none");
}

/* Node mode (docs/design.md, "Node mode"): started by the node's first
 * local rank, or by this process where there is no launcher. */
static int pm_node_started;

static void pm_node_begin(void)
{
    if (pm_node_started)
        return;
    pm_node_started = 1;
    int cpus[PM_NODE_MAX_CPUS];
    int n = pm_node_cpuset(cpus, PM_NODE_MAX_CPUS);
    char why[256];
    if (n <= 0)
        snprintf(why, sizeof why, "no CPU of the job's cpuset could be read");
    if (n <= 0 || pm_node_start(cpus, n, pm_cfg.interval_ns, why, sizeof why) != 0)
        pm_msg(PM_MSG_ONCE, "node mode: %s; the rest of the measurement goes on without it",
               why);
}

int pm_session_wants_node(void) { return pm_cfg.node && pm_state == PM_ON; }

void pm_session_set_node(int local_rank, const int *pids, int n)
{
    if (!pm_cfg.node || pm_state != PM_ON)
        return;
    if (local_rank == 0)
        pm_node_begin();
    pm_node_set_own(pids, n);
}

/* Samples the kernel lost or throttled during the run, per event, said
 * once at the end (each region's share is in the file: SAMPLES_LOST). */
static void pm_sampling_losses(void)
{
    uint64_t dropped = 0, failed = 0, unwound = 0;
    for (int32_t i = 0; i < pm_nthreads; i++) {
        dropped += pm_threads[i]->smp.stacks_dropped;
        failed += pm_threads[i]->smp.stacks_failed;
        unwound += pm_threads[i]->smp.stacks_unwound;
    }
    if (dropped || (failed && failed * 10 >= failed + unwound))
        pm_msg(pm_rank.rank > 0 ? PM_MSG_FILE_ONLY : PM_MSG_ONCE,
               "call paths: of %llu sampled stacks, %llu could not be unwound (no call-frame "
               "information where they stopped, or more than %u bytes of stack) and %llu were "
               "not kept (the unwinder fell behind): those samples count without callers",
               (unsigned long long)(dropped + failed + unwound), (unsigned long long)failed,
               pm_sample.stack_bytes, (unsigned long long)dropped);
    for (int e = 0; e < pm_sample.n; e++) {
        uint64_t lost = 0, throttled = 0, taken = 0;
        for (int32_t i = 0; i < pm_nthreads; i++) {
            const struct pm_sampler *s = &pm_threads[i]->smp;
            for (int32_t n = -1; n < pm_threads[i]->nnodes; n++) {
                lost += pm_sampler_nodestat(s, n, e, PM_SN_LOST);
                throttled += pm_sampler_nodestat(s, n, e, PM_SN_THROTTLED);
                taken += pm_sampler_nodestat(s, n, e, PM_SN_SAMPLES);
            }
        }
        if (!lost && !throttled)
            continue;
        char what[200] = "";
        if (lost)
            snprintf(what, sizeof what, "%llu samples were lost (a thread's buffer was full; "
                     "PERFMARK_SAMPLE_PAGES gives more room)", (unsigned long long)lost);
        if (throttled) {
            size_t used = strlen(what);
            snprintf(what + used, sizeof what - used, "%sthe kernel throttled it %llu time(s) "
                     "(above perf_event_max_sample_rate=%llu per second)", lost ? "; " : "",
                     (unsigned long long)throttled,
                     (unsigned long long)pm_sample_max_rate());
        }
        pm_msg(pm_rank.rank > 0 ? PM_MSG_FILE_ONLY : PM_MSG_ONCE,
               "sampling %s: %llu samples kept, but %s: the regions concerned are flagged "
               "SAMPLES_LOST; a larger period samples evenly", pm_sample.ev[e].requested,
               (unsigned long long)taken, what);
    }
}

/* PERFMARK_SAMPLE: each thread opens its sampler when it is first seen;
 * the drainer empties rings that fill inside long regions. */
static void pm_sampling_start(void)
{
    char request[2048];
    if (pm_cfg.count_sampled)
        pm_counting_by_samples(request, sizeof request);
    else
        snprintf(request, sizeof request, "%s", pm_cfg.sample);
    pm_sample_spec_build(request, pm_cfg.sample_pages, pm_cfg.sample_callchain,
                         pm_cfg.sample_stack, &pm_sample);
    pm_sample.counting = pm_cfg.count_sampled;
    if (pm_cfg.count_sampled) {
        char list[1024] = "";
        for (int i = 0; i < pm_sample.n; i++) {
            size_t used = strlen(list);
            snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "",
                     pm_sample.ev[i].requested);
        }
        if (pm_sample.nnotes < PM_SAMPLE_MAX_NOTES)
            snprintf(pm_sample.notes[pm_sample.nnotes++], PM_NOTE_LEN,
                     "counting by sampling (PERFMARK_COUNT=sampled): markers read no counters "
                     "(visits and time exact); %s %s sampled, and every count is an estimate "
                     "from the samples", pm_sample.n ? list : "nothing",
                     pm_sample.n == 1 ? "is" : "are");
    }
    if (!pm_sample.n)
        return;
    if (pm_cfg.sample_max_sites > 0)
        pm_sampler_set_max_sites((uint32_t)pm_cfg.sample_max_sites);
    if (pm_sample_drainer_start(pm_sample.callchain == PM_CHAIN_DWARF
                                     ? PM_DRAINER_PERIOD_UNWIND_MS
                                     : PM_DRAINER_PERIOD_MS) != 0)
        pm_msg(pm_rank.rank > 0 ? PM_MSG_FILE_ONLY : PM_MSG_ONCE,
               "cannot start the thread that empties sample buffers (%s): samples in long "
               "regions may be lost (counted as lost)", strerror(errno));
    pm_sampling = &pm_sample;
}

static void pm_thread_gone(void *arg);
static void pm_atfork_prepare(void);
static void pm_atfork_parent(void);
static void pm_atfork_child(void);

/* PERFMARK_PIN needs this rank's place among the ranks of its node: from
 * the launcher's variables, 0 of 1 for a process no launcher started, else
 * from MPI_Init (pm_session_set_local). */
static void pm_session_pin_start(void)
{
    int local = pm_rank.local_rank, nlocal = pm_rank.local_size;
    if (!pm_rank.source[0] && local < 0) {
        local = 0;
        nlocal = 1;
    }
    pm_pin_start((enum pm_pin_mode)pm_cfg.pin, pm_cfg.pin_cpus, local, nlocal);
}

/* Which visits read counters (pm_thread.h, struct pm_visit_policy). The
 * read cost, and so the throttle's threshold, comes with the first thread. */
static void pm_policy_start(void)
{
    const struct pm_throttle *th = &pm_cfg.throttle;
    pm_policy = (struct pm_visit_policy){.warmup = th->on ? (uint64_t)th->warmup : 0,
                                         .polls = th->on};
    if (th->on)
        snprintf(pm_throttle_text, sizeof pm_throttle_text, "warmup=%ld,k=%ld", th->warmup,
                 th->k);
    else
        snprintf(pm_throttle_text, sizeof pm_throttle_text, "off");
}

static int pm_u64_cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* What one counter reading costs this process: the median of a few reads
 * of the first thread's own groups, in clock ticks. perfmark's own cost in
 * every region is estimated from it (docs/design.md, "What measuring
 * costs"), and the throttle's threshold is K times it. */
static void pm_calibrate_reads(struct pm_thread *t)
{
    enum { N = 33 };
    uint64_t d[N];
    if (!t->stride || t->cs.state != PM_CS_OPEN)
        return;
    for (int i = 0; i < N; i++) {
        uint64_t a = pm_ticks();
        pm_counterset_read(&t->cs, t->scratch);
        d[i] = pm_ticks() - a;
    }
    qsort(d, N, sizeof *d, pm_u64_cmp);
    pm_read_cost_ticks = d[N / 2];
    pm_policy.limit_ticks = pm_cfg.throttle.on ? (uint64_t)pm_cfg.throttle.k * d[N / 2] : 0;
    t->throttle_ticks = pm_policy.limit_ticks;
}

/* Say at start what can be known at start (the file is written at the
 * end, maybe hours later): the output directory is missing or not
 * writable, or clearly too small. The data still goes to a fallback then. */
static void pm_check_output(void)
{
    char want[PM_PATH_MAX], dir[PM_PATH_MAX];
    struct pm_out_where where = pm_where();
    pm_out_path(&where, 0, want, sizeof want);
    enum pm_msg_kind kind = pm_rank.rank > 0 ? PM_MSG_FILE_ONLY : PM_MSG_ONCE;
    int bad = pm_store_dir_check(want, dir, sizeof dir);
    struct statvfs st;
    if (bad)
        pm_msg(kind, "the output directory %s %s: the file will go to the first of "
               "PERFMARK_FALLBACK_DIR, $TMPDIR, /tmp that takes it", dir,
               bad == ENOENT ? "does not exist" : "is not writable");
    else if (statvfs(dir, &st) == 0 &&
             (uint64_t)st.f_bavail * st.f_frsize < PM_OUTPUT_ROOM_MIN)
        pm_msg(kind, "only %llu KiB are free in %s: the file may not fit there (it then goes "
               "to the first of PERFMARK_FALLBACK_DIR, $TMPDIR, /tmp that takes it)",
               (unsigned long long)st.f_bavail * st.f_frsize / 1024, dir);
}

static void pm_session_start(void)
{
    pm_clock_init();
    pm_policy_start();
    pm_mark_start();
    pm_read_command();
    pm_check_output();
    pm_names_set_limit(pm_cfg.max_regions);
    pm_name_overflow();  /* interned now: it must never be refused */
    pthread_key_create(&pm_thread_key, pm_thread_gone);
    pthread_atfork(pm_atfork_prepare, pm_atfork_parent, pm_atfork_child);
    /* Nothing is loaded in the background: the HDF5 writer only when a
     * file needs it (pm_writer.h), at the end. */
    pm_sampling_start();
    pm_shim_check(pm_rank.rank <= 0);
    pm_emergency_install(pm_session_emergency, pm_rank.rank >= 0 || pm_rank.source[0]);
    if (!pm_cfg.count_sampled)
        pm_eventset_build(pm_cfg.events, &pm_set);
    pm_report_events();
    pm_session_pin_start();
    /* Threads counted from birth by the process set: the kernel reports
     * each one's counts at its exit. Counts over time read every thread's
     * own counters, so with them threads open their own at birth. */
    int by_exit = pm_cfg.threads_at_birth && !pm_cfg.threads_own && !pm_cfg.interval_ns;
    int open_err = 0;
    if (pm_set.n && by_exit) {
        int rc = pm_counterset_open(&pm_process_set, &pm_set, -1, PM_INHERIT_EXIT, 0);
        if (rc != 0 && errno == EINVAL) {  /* a kernel refusing the records' clock */
            pm_counterset_exit_untimed();
            rc = pm_counterset_open(&pm_process_set, &pm_set, -1, PM_INHERIT_EXIT, 0);
        }
        if (rc != 0)
            open_err = errno;  /* tried plain below */
        else if (pm_exit_counts_open(&pm_process_set,
                                     (size_t)pm_cfg.thread_ring_kb * 1024) == 0)
            open_err = -1;  /* open, with records */
        if (open_err != -1)
            pm_counterset_close(&pm_process_set);
    }
    if (pm_set.n && open_err != -1) {
        if (pm_counterset_open(&pm_process_set, &pm_set, -1, PM_INHERIT, 0) != 0) {
            pm_msg(PM_MSG_ONCE, "cannot open the process-wide (inherited) counters: %s; the "
                   "file will have no /rank totals", strerror(errno));
        } else if (by_exit) {
            pm_exit_failed = 1;  /* threads open their own counters: the set needs no records */
            if (open_err > 0)
                pm_exit_counts_set_why(strerror(open_err));
        }
    }
    /* Threads this one starts from now inherit the set (and theirs). */
    pm_carrier = pm_exit_counts_on();
    /* Node mode: the node's first local rank watches it; a process with no
     * launcher is its own node's; otherwise MPI_Init says (pm_session_set_node). */
    if (pm_cfg.node && (pm_rank.local_rank == 0 || (!pm_rank.source[0] && pm_rank.local_rank < 0)))
        pm_node_begin();
    if (pm_cfg.interval_ns &&
        pm_series_start(pm_cfg.interval_ns, pm_stride(&pm_set), &pm_process_set,
                        pm_cfg.series_memory_mb > 0 ? (size_t)pm_cfg.series_memory_mb << 20 : 0) != 0)
        pm_msg(pm_rank.rank > 0 ? PM_MSG_FILE_ONLY : PM_MSG_ONCE,
               "cannot start the thread that reads the counts every interval (%s): no counts "
               "over time are kept", strerror(errno));
    pm_on_written_accept(1);
    pm_state = PM_ON;
}

/* Plain `LD_PRELOAD=.../libperfmark.so ./app` (or `mpirun -x LD_PRELOAD`)
 * is a request to measure, as PERFMARK_ENABLE=1 is. */
static int pm_preloaded(void)
{
    const char *list = getenv("LD_PRELOAD");
    if (!list)
        return 0;
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", list);
    char *save = NULL;
    for (char *tok = strtok_r(buf, ": ", &save); tok; tok = strtok_r(NULL, ": ", &save)) {
        const char *base = strrchr(tok, '/') ? strrchr(tok, '/') + 1 : tok;
        if (strncmp(base, "libperfmark", 11) == 0)
            return 1;
    }
    return 0;
}

/* Which processes are measured from their first instruction (see
 * docs/design.md, "Process lifecycle"): the one `perfmark run` exec'd, MPI
 * ranks started by a launcher, and a process enabled directly. Launchers,
 * wrappers and shells never; anything else only from its first marker. */
/* Set once the constructor has decided whether this process is measured:
 * before that, OFF means "not yet known". */
static int pm_decided;

int pm_session_may_measure(void)
{
    return !__atomic_load_n(&pm_decided, __ATOMIC_ACQUIRE) ||
           __atomic_load_n(&pm_state, __ATOMIC_RELAXED) != PM_OFF;
}

static void pm_session_decide(void);

__attribute__((constructor)) static void pm_session_ctor(void)
{
    pm_session_decide();
    __atomic_store_n(&pm_decided, 1, __ATOMIC_RELEASE);
}

static void pm_session_decide(void)
{
    pm_config_read(&pm_cfg);
    pm_counterset_td_allow_rdpmc(pm_cfg.topdown_rdpmc);
    int enabled = pm_cfg.enable_set ? pm_cfg.enable : pm_preloaded();
    if (!enabled || !pm_markers_are_primary())
        return;
    int has_rank_vars = pm_rank_from_env(&pm_rank);
    enum pm_proc_role role = pm_proc_role(&pm_rank);
    if (role == PM_ROLE_TOOL)
        return;
    long self = (long)getpid();
    int from_start = role == PM_ROLE_RANK || pm_cfg.launch_pid == self ||
                     (!pm_cfg.launch_pid && !has_rank_vars);
    if (role != PM_ROLE_RANK)
        pm_rank.rank = -1;  /* inherited variables: not this process's identity */
    if (!from_start) {
        pm_state = PM_LAZY;
        return;
    }
    if (!pm_cfg.launch_pid) {
        /* Children inherit the environment: mark them as not launched by
         * us, so that a system("ls") does not measure ls. */
        char pid[32];
        snprintf(pid, sizeof pid, "%ld", self);
        setenv("PERFMARK_PID", pid, 1);
    }
    pm_session_start();
    pm_session_thread_slow();  /* the main thread is thread 0 from the start */
    pm_adopt_running();
}

/* ---- threads --------------------------------------------------------------- */

static int pm_register(struct pm_thread *t)
{
    pthread_mutex_lock(&pm_threads_lock);
    int ok = 1;
    if (pm_nthreads == pm_threads_cap) {
        int32_t cap = pm_threads_cap ? pm_threads_cap * 2 : 16;
        struct pm_thread **grown = realloc(pm_threads, (size_t)cap * sizeof *grown);
        if (grown) {
            pm_threads = grown;
            pm_threads_cap = cap;
        } else {
            ok = 0;
        }
    }
    if (ok) {
        t->index = pm_nthreads;
        pm_threads[pm_nthreads++] = t;
    }
    pthread_mutex_unlock(&pm_threads_lock);
    return ok ? 0 : -1;
}

static struct pm_thread *pm_session_pickup(void);

/* The calling thread's state, created and registered (its counters open
 * from now), or NULL without memory. Neither pm_self nor pinning yet. */
static struct pm_thread *pm_session_new_thread(void)
{
    struct pm_thread *t = pm_thread_create(&pm_set, pm_cfg.bind_cpu, pm_cfg.pinned, -1);
    if (!t || pm_register(t) != 0)
        return NULL;
    pthread_setspecific(pm_thread_key, t);
    if (t->smp.page)
        pm_sample_drainer_add(&t->smp);
    pm_series_add(t);
    pm_pin_affinity(0, t->binding, sizeof t->binding);
    return t;
}

/* The calling thread enters its first region or construct: PERFMARK_PIN
 * binds it now, the next slot of the rank's share. */
static void pm_session_activate(struct pm_thread *t)
{
    int32_t slot = __atomic_fetch_add(&pm_pin_slots, 1, __ATOMIC_RELAXED);
    t->pin_slot = slot;
    if (pm_pin_thread(t->tid, slot) >= 0)
        t->cpu_first = t->cpu_last = sched_getcpu();
    /* Where it runs once it takes part (it may have bound itself since its
     * birth, as LIKWID's likwid_pinThread does). */
    pm_pin_affinity(0, t->binding, sizeof t->binding);
}

/* Threads already running when perfmark started (a library's constructor
 * started them before perfmark's ran, or a LAZY process started at a
 * marker): counted from now, from outside (counter sets on their tid),
 * until they call a marker themselves and take their state over. Threads
 * started later come through pthread_create (pm_session_thread_born). */
static void pm_adopt_running(void)
{
    if (!pm_cfg.threads_at_birth || pm_state != PM_ON)
        return;
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return;
    pid_t me = gettid();
    struct dirent *e;
    while ((e = readdir(d))) {
        pid_t tid = (pid_t)atoi(e->d_name);
        if (tid <= 0 || tid == me || pm_own_thread_is(tid))
            continue;
        int known = 0;
        pthread_mutex_lock(&pm_threads_lock);
        for (int32_t i = 0; i < pm_nthreads && !known; i++)
            known = pm_threads[i]->tid == tid;
        pthread_mutex_unlock(&pm_threads_lock);
        if (known)
            continue;
        struct pm_thread *t = pm_thread_adopt(&pm_set, pm_cfg.bind_cpu, pm_cfg.pinned, -1, tid);
        if (!t || pm_register(t) != 0)
            continue;  /* out of memory: that thread stays unmeasured */
        __atomic_add_fetch(&pm_nadopted, 1, __ATOMIC_RELAXED);
        pm_series_add(t);
        pm_pin_affinity(tid, t->binding, sizeof t->binding);
    }
    closedir(d);
}

/* This thread, if perfmark adopted it when it started (pm_adopt_running). */
static struct pm_thread *pm_adopted_self(void)
{
    if (__atomic_load_n(&pm_nadopted, __ATOMIC_RELAXED) == 0)
        return NULL;
    pid_t me = gettid();
    struct pm_thread *found = NULL;
    pthread_mutex_lock(&pm_threads_lock);
    for (int32_t i = 0; i < pm_nthreads && !found; i++)
        if (pm_threads[i]->adopted == 1 && pm_threads[i]->tid == me && !pm_threads[i]->exited)
            found = pm_threads[i];
    if (found) {
        found->adopted = 2;
        pm_nadopted--;
    }
    pthread_mutex_unlock(&pm_threads_lock);
    return found;
}

/* errno belongs to the application: starting a session or a thread opens
 * files and allocates, so keep it. */
struct pm_thread *pm_session_thread_slow(void)
{
    int saved = errno;
    struct pm_thread *t = pm_session_pickup();
    errno = saved;
    return t;
}

static struct pm_thread *pm_session_pickup(void)
{
    int started = 0;
    if (pm_state == PM_LAZY) {
        pthread_mutex_lock(&pm_start_lock);
        if (pm_state == PM_LAZY) {
            pm_session_start();
            started = 1;
        }
        pthread_mutex_unlock(&pm_start_lock);
    }
    if (pm_state != PM_ON)
        return NULL;
    if (pm_self)
        return pm_self;
    struct pm_thread *t = pm_born;
    if (t) {  /* counted since its birth: now it takes part */
        if (pm_thread_tables(t) != 0)
            return NULL;  /* out of memory: no regions on this thread */
        if (t->by_exit && t->cs.state == PM_CS_CLOSED) {
            /* finalize may be peeking at it from another thread */
            pthread_mutex_lock(&t->settle_lock);
            pm_thread_open_counters(t, pm_cfg.bind_cpu, pm_cfg.pinned);
            pthread_mutex_unlock(&t->settle_lock);
        }
        pm_born = NULL;
        pm_self = t;
        pm_session_activate(t);
        return t;
    }
    t = pm_adopted_self();
    if (t) {
        if (pm_thread_tables(t) != 0)
            return NULL;
        pm_thread_take_over(t);
        pthread_setspecific(pm_thread_key, t);
        pm_self = t;
        if (t->smp.page)
            pm_sample_drainer_add(&t->smp);
        return t;
    }
    t = pm_session_new_thread();
    if (!t || pm_thread_tables(t) != 0)
        return NULL;  /* out of memory: this thread stays unmeasured */
    pm_self = t;
    if (t->index == 0 && !pm_fork_child)
        pm_calibrate_reads(t);
    pm_session_activate(t);
    if (started)
        pm_adopt_running();  /* the threads this process had before it started measuring */
    return t;
}

int pm_session_wants_local_rank(void) { return pm_pin_needs_local(); }

void pm_session_set_local(int local_rank, int local_size)
{
    if (!pm_pin_needs_local())
        return;
    pm_pin_set_local(local_rank, local_size);
    /* The process binding covered every thread; threads mode puts each
     * thread seen so far on its own PU. */
    pthread_mutex_lock(&pm_threads_lock);
    for (int32_t i = 0; i < pm_nthreads; i++) {
        struct pm_thread *t = pm_threads[i];
        if (t->exited)
            continue;
        if (t->pin_slot >= 0)  /* threads mode binds threads once in a region */
            pm_pin_thread(t->tid, t->pin_slot);
        pm_pin_affinity(t->tid, t->binding, sizeof t->binding);
    }
    pthread_mutex_unlock(&pm_threads_lock);
}

struct pm_thread *pm_session_thread_prepare(void)
{
    if (!pm_cfg.threads_at_birth || __atomic_load_n(&pm_state, __ATOMIC_RELAXED) != PM_ON ||
        pm_own_thread_spawning())
        return NULL;
    int saved = errno;
    struct pm_thread *t = pm_thread_alloc(&pm_set, -1, 0);
    if (t && pm_carrier) {
        t->by_exit = 1;  /* it will inherit the set */
        pm_thread_exits_watch();
    }
    errno = saved;
    return t;
}

void pm_session_thread_unborn(struct pm_thread *t) { pm_thread_free_unstarted(t); }

void pm_session_thread_born(struct pm_thread *t)
{
    int saved = errno;
    /* Perfmark may have stopped (or not started: a thread started in a
     * constructor before perfmark's) since the thread was prepared. */
    if (!t || pm_self || pm_born || __atomic_load_n(&pm_state, __ATOMIC_RELAXED) != PM_ON) {
        pm_thread_free_unstarted(t);
        errno = saved;
        return;
    }
    if (t->by_exit && pm_exit_counts_on()) {
        pm_thread_start_by_exit(t);
        pm_carrier = 1;
    } else {
        t->by_exit = 0;
        pm_thread_start(t, pm_cfg.bind_cpu, pm_cfg.pinned);
    }
    if (pm_register(t) != 0) {
        pm_counterset_close(&t->cs);
        pm_sampler_close(&t->smp);
        pm_thread_free_unstarted(t);
        errno = saved;
        return;
    }
    pthread_setspecific(pm_thread_key, t);
    if (t->smp.page)
        pm_sample_drainer_add(&t->smp);
    pm_series_add(t);
    pm_pin_affinity(0, t->binding, sizeof t->binding);
    pm_born = t;
    errno = saved;
}

/* A thread's name (comm), from /proc: for a thread other than the caller. */
static void pm_task_name(pid_t tid, char *out, size_t len)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%d/comm", (int)tid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, out, len - 1) : -1;
    if (fd >= 0)
        close(fd);
    out[n > 0 ? (size_t)n : 0] = '\0';
    char *nl = strchr(out, '\n');
    if (nl)
        *nl = '\0';
}

/* PERFMARK_THREADS_EXCLUDE: does this name match one of its patterns? */
static int pm_name_excluded(const char *name)
{
    if (!pm_cfg.threads_exclude[0] || !name[0])
        return 0;
    char list[sizeof pm_cfg.threads_exclude], *save = NULL;
    snprintf(list, sizeof list, "%s", pm_cfg.threads_exclude);
    for (char *p = strtok_r(list, ",", &save); p; p = strtok_r(NULL, ",", &save))
        if (*p && fnmatch(p, name, 0) == 0)
            return 1;
    return 0;
}

void pm_session_thread_named(struct pm_thread *t, const char *name)
{
    if (!t)
        return;
    snprintf(t->name, sizeof t->name, "%s", name);
    if (!pm_cfg.threads_exclude[0] || t->index == 0)
        return;  /* dladdr below walks symbol tables: only when a pattern asks */
    char start[128];
    pm_thread_start_name(pm_thread_start_fn(t), start, sizeof start);
    /* The main thread holds the process's own regions: never left out. */
    t->excluded = pm_name_excluded(t->name) || pm_name_excluded(start);
}

void pm_session_set_rank(int rank, int size)
{
    pm_rank.rank = rank;
    pm_rank.size = size;
    if (pm_state == PM_LAZY)
        pm_session_thread_slow();
}

/* pthread key destructor: the thread is exiting; keep its data. */
static void pm_thread_gone(void *arg)
{
    struct pm_thread *t = arg;
    if (t == pm_born) {  /* counted since its birth, never entered a region */
        pm_born = NULL;
        pm_self = t;
    }
    if (t != pm_self)
        return;
    char name[16] = "";
    prctl(PR_GET_NAME, name);
    pm_session_thread_named(t, name);
    pthread_mutex_lock(&t->settle_lock);
    int expected = 0;
    if (pm_state == PM_ON) {
        pm_thread_finish(t, "exited");
        pm_series_end_thread(t);
        pm_counterset_close(&t->cs);
        pm_sample_drainer_remove(&t->smp);
        pm_sampler_close(&t->smp);
        pm_sampler_unwind(&t->smp);  /* its last stacks: no region waits on it now */
        pm_sampler_stash_free(&t->smp);
        pm_thread_release_tables(t);
        t->exited = 1;
        if (t->by_exit) {
            pm_thread_exits_expect(t);
            expected = 1;
        }
    }
    pthread_mutex_unlock(&t->settle_lock);
    pm_self = NULL;
    if (expected)
        pm_thread_exits_ended();
}

/* ---- fork -------------------------------------------------------------------- */

static void pm_atfork_prepare(void)
{
    pm_writer_before_fork();
    pm_names_lock();
    pthread_mutex_lock(&pm_threads_lock);
    pm_pin_before_fork();
}

static void pm_atfork_parent(void)
{
    pm_pin_after_fork();
    pthread_mutex_unlock(&pm_threads_lock);
    pm_names_unlock();
}

/* The child's fds are the parent's events: never read them. Its file holds
 * only what it measures itself; regions open across the fork end up
 * LOST_GENERATION because the counters are reopened. */
static void pm_atfork_child(void)
{
    pm_pin_after_fork();
    pthread_mutex_unlock(&pm_threads_lock);
    pm_names_unlock();
    if (pm_state != PM_ON)
        return;
    pm_fork_child = 1;
    pm_carrier = 0;
    pm_own_pid = getpid();
    pm_own_thread_after_fork();
    pm_writer_after_fork();
    pm_msg_reset();
    pm_counterset_close(&pm_process_set);
    pm_exit_counts_forget();
    pm_thread_exits_after_fork();
    /* The rings are the parent's and no drainer runs here: the child
     * samples nothing (docs/guide.md, "Sampling"). */
    pm_sample_drainer_after_fork();
    pm_sampling = NULL;
    pm_series_after_fork();
    pm_node_after_fork();
    pm_nthreads = 0;
    if (pm_born && !pm_self) {  /* forked before its first region: it is the child's thread 0 */
        pm_self = pm_born;
        pm_born = NULL;
    }
    if (pm_self) {
        pm_thread_after_fork(pm_self);
        if (pm_self->by_exit) {  /* no process set here: its own counters, at its first read */
            pm_self->by_exit = 0;
            pm_self->totals_from = PM_TOTALS_OWN;
            if (pm_self->cs.state == PM_CS_CLOSED)
                pm_counterset_defer(&pm_self->cs, &pm_set, pm_cfg.bind_cpu, pm_cfg.pinned);
        }
        pm_threads[pm_nthreads++] = pm_self;
    }
    pm_start_mono = pm_mono_ns();
}

/* ---- writing ------------------------------------------------------------------- */

/* The file this process's data went to, for pm_on_written (empty: none). */
static char pm_written_file[PM_PATH_MAX + 16];

/* Where the file goes, from the session's settings (pm_session_out.h). */
static struct pm_out_where pm_where(void)
{
    return (struct pm_out_where){
        .output = pm_cfg.output, .output_is_dir = pm_output_dir, .start_cwd = pm_start_cwd,
        .job = pm_rank.job, .stamp = pm_stamp, .rank = pm_rank.rank,
        .fork_child = pm_fork_child, .fallback_dir = pm_cfg.fallback_dir,
        .quiet = pm_cfg.quiet};
}

/* The inherited set sums every thread, live or gone; while a thread is in
 * the middle of exiting the kernel refuses the group read (ECHILD here), so
 * retry briefly, and never write zeros as if they were totals. */
static int pm_read_process_totals(uint64_t *out)
{
    if (pm_process_set.state != PM_CS_OPEN)
        return 0;
    for (int attempt = 0; attempt < 20; attempt++) {
        if (pm_counterset_peek(&pm_process_set, out) == 0)
            return 1;
        usleep(1000);
    }
    pm_msg(PM_MSG_ONCE, "the process totals (inherited counters) could not be read at exit, "
           "while threads were exiting; the file has no /rank row for this process");
    return 0;
}

static int pm_any_data(void)
{
    for (int32_t i = 0; i < pm_nthreads; i++)
        if (pm_thread_has_data(pm_threads[i]))
            return 1;
    return 0;
}

void pm_session_finalize(struct pm_comm *job)
{
    pthread_mutex_lock(&pm_start_lock);
    if (pm_state != PM_ON) {
        pthread_mutex_unlock(&pm_start_lock);
        return;
    }
    /* relaxed atomic: threads still in markers read it without the lock */
    __atomic_store_n(&pm_state, PM_STOPPED, __ATOMIC_RELAXED);
    pm_on_written_accept(0);
    pthread_mutex_unlock(&pm_start_lock);
    pm_sample_drainer_stop();  /* the last drains are the threads' own, below */
    pm_series_stop();          /* the last rows come from the settled totals, below */

    for (int32_t i = 0; i < pm_nthreads; i++) {
        struct pm_thread *t = pm_threads[i];
        if (!t->exited) {
            char name[16];
            pm_task_name(t->tid, name, sizeof name);
            if (name[0])  /* an adopted thread gone unseen keeps the name it had */
                pm_session_thread_named(t, name);
        }
        pthread_mutex_lock(&t->settle_lock);
        if (t == pm_self)
            pm_thread_finish(t, "reached process exit");
        else if (!t->exited)
            pm_thread_finish_remote(t);
        if (!t->exited)
            pm_series_end_thread(t);
        pthread_mutex_unlock(&t->settle_lock);
        pm_sampler_unwind(&t->smp);
    }
    pm_thread_exits_unwatch();
    pm_thread_exits_settle(1);
    pm_written_file[0] = '\0';
    pm_write_outputs(job);
    if (!pm_partial && !pm_fork_child)
        pm_on_written_run(pm_written_file[0] ? pm_written_file : NULL,
                          pm_rank.rank < 0 ? 0 : pm_rank.rank);
}

/* Everything settled: build the output and write it (the job's file
 * through the job's comm, else this process's). */
static void pm_write_outputs(struct pm_comm *job)
{
    /* A fork child that only passed through (fork+exec, fork+_exit) or did
     * nothing measurable writes no file. */
    if (pm_fork_child && !pm_any_data())
        return;
    pm_node_stop();
    uint64_t rank[3 * PM_MAX_EVENTS];
    int have_rank = pm_read_process_totals(rank);
    pm_series_end_process(have_rank ? rank : NULL);
    pm_sampling_losses();
    /* Threads left out by name are not written; the others keep their order,
     * numbered again from 0 (their series and samples follow the numbers). */
    int32_t nkept = pm_nthreads, left_out = 0;
    struct pm_thread **kept = malloc(((size_t)pm_nthreads + 1) * sizeof *kept);
    if (kept) {
        nkept = 0;
        for (int32_t i = 0; i < pm_nthreads; i++) {
            if (pm_threads[i]->excluded) {
                left_out++;
                continue;
            }
            kept[nkept] = pm_threads[i];
            kept[nkept]->index = nkept;
            nkept++;
        }
        if (left_out)
            pm_msg(pm_rank.rank > 0 ? PM_MSG_FILE_ONLY : PM_MSG_ONCE,
                   "%d thread(s) left out by name (PERFMARK_THREADS_EXCLUDE='%s'): their counts "
                   "are in the process total only", (int)left_out, pm_cfg.threads_exclude);
    }
    char threads_seen[1280], how[320] = "";
    int adopted = 0, from[PM_TOTALS_NONE + 1] = {0};
    for (int32_t i = 0; i < nkept && kept; i++) {
        adopted += kept[i]->adopted != 0;
        from[kept[i]->by_exit ? kept[i]->totals_from : PM_TOTALS_OWN]++;
    }
    if (pm_exit_counts_on())
        snprintf(how, sizeof how, "; totals: %d by the kernel at their exit, %d still running by "
                 "their own counters from their first region, %d still running never in a region "
                 "from /proc, %d lost, %d by their own counters", from[PM_TOTALS_AT_EXIT],
                 from[PM_TOTALS_FIRST_REGION], from[PM_TOTALS_PROC], from[PM_TOTALS_NONE],
                 from[PM_TOTALS_OWN]);
    else if (pm_exit_failed && pm_cfg.threads_at_birth)
        snprintf(how, sizeof how, "; each by its own counters (the kernel's records at thread "
                 "exit are not available here: %s)", pm_exit_counts_why());
    else if (pm_cfg.threads_at_birth)
        snprintf(how, sizeof how, "; each by its own counters (%s)", pm_cfg.threads_own ?
                 "PERFMARK_THREADS=own" : "counts over time read them");
    if (!pm_cfg.threads_at_birth)
        snprintf(threads_seen, sizeof threads_seen, "threads from their first marker or OpenMP "
                 "construct (PERFMARK_THREADS=markers)");
    else
        snprintf(threads_seen, sizeof threads_seen, "every thread from its start; %d running "
                 "before perfmark started, counted from then; %d left out by name%s%s%s%s",
                 adopted, (int)left_out, left_out ? " (" : "",
                 left_out ? pm_cfg.threads_exclude : "", left_out ? ")" : "", how);
    char openmp[256], pinning[256];
    pm_describe_openmp(openmp, sizeof openmp);
    pm_pin_describe(pinning, sizeof pinning);
    pm_msg_summarise();

    char host[256] = "";
    gethostname(host, sizeof host - 1);
    struct pm_output o = {
        .set = &pm_set, .threads = kept ? kept : pm_threads, .nthreads = nkept,
        .totals = have_rank ? rank : NULL, .ns_per_tick = pm_clock_ns_per_tick(),
        .command = pm_command, .host = host, .start_time = pm_start_time,
        .clock = pm_clock_name(), .pid = (long)getpid(),
        .duration_ns = pm_mono_ns() - pm_start_mono, .bind_cpu = pm_cfg.bind_cpu,
        .rank = pm_rank.rank < 0 ? 0 : pm_rank.rank, .ranks = pm_rank.size < 0 ? 1 : pm_rank.size,
        .partial = pm_partial, .openmp = openmp, .pinning = pinning,
        .threads_seen = threads_seen,
        .read_cost_ns = (double)pm_read_cost_ticks * pm_clock_ns_per_tick(),
        .throttle = pm_throttle_text,
        .job_gather_max = pm_cfg.job_gather_max >= 0 ? (uint64_t)pm_cfg.job_gather_max
                                                     : PM_JOB_GATHER_MAX,
        .job_detail = pm_cfg.detail,
        .summary_output = pm_cfg.summary_output[0] ? pm_cfg.summary_output : NULL,
        .summary_above = pm_cfg.summary_above >= 0 ? (uint64_t)pm_cfg.summary_above
                                                   : PM_SUMMARY_ABOVE,
        .summary_keep = pm_cfg.summary_keep >= 0 ? (uint64_t)pm_cfg.summary_keep
                                                 : PM_SUMMARY_KEEP,
        .sample = &pm_sample,
        .series = pm_series_get(),
        .node = pm_node_get(),
    };
    /* Sampled IPs are kept as (object, offset): the objects as loaded now. */
    struct pm_modules modules = {0};
    if (pm_sample.n && pm_modules_snapshot(&modules) == 0)
        o.modules = &modules;
    struct pm_out_where where = pm_where();
    if (job && !pm_fork_child) {
        int verdict = pm_out_job_file(&where, &o, pm_job_write, job, pm_written_file,
                                      sizeof pm_written_file);
        if (verdict == -2)
            pm_summary_print(&o, stderr);
        if (verdict != -1) {
            pm_modules_free(&modules);
            free(kept);
            return;
        }
    }
    pm_out_process_file(&where, &o, pm_written_file, sizeof pm_written_file);
    pm_modules_free(&modules);
    free(kept);
}

void pm_session_set_mpi(const char *abi, const char *what, const char *problem)
{
    snprintf(pm_mpi_abi, sizeof pm_mpi_abi, "%s", abi ? abi : "");
    if (what)
        snprintf(pm_mpi_what, sizeof pm_mpi_what, "%s", what);
    if (problem)
        pm_session_mpi_note(problem);
}

void pm_session_mpi_note(const char *text)
{
    pm_msg(pm_rank.rank > 0 ? PM_MSG_FILE_ONLY : PM_MSG_ONCE, "%s", text);
}

const char *pm_session_mpi_abi(void) { return pm_mpi_abi[0] ? pm_mpi_abi : NULL; }

void pm_session_set_openmp_gomp(void) { pm_openmp_gomp = 1; }

void pm_session_set_openmp(const char *runtime_version)
{
    snprintf(pm_ompt_runtime, sizeof pm_ompt_runtime, "%s",
             runtime_version && *runtime_version ? runtime_version : "an OMPT runtime");
}

static int pm_find_libgomp(struct dl_phdr_info *info, size_t size, void *found)
{
    (void)size;
    if (info->dlpi_name && strstr(info->dlpi_name, "libgomp.so"))
        *(int *)found = 1;
    return 0;
}

/* Which OpenMP runtime ran, and how perfmark saw its constructs: OMPT
 * (libomp) or libgomp's entry points (wrappers/gomp). */
static void pm_describe_openmp(char *out, size_t len)
{
    int libgomp = 0;
    dl_iterate_phdr(pm_find_libgomp, &libgomp);
    if (pm_ompt_runtime[0]) {
        snprintf(out, len, "OMPT active (%s): parallel regions and barrier waits measured",
                 pm_ompt_runtime);
    } else if (pm_openmp_gomp) {
        snprintf(out, len, "GCC libgomp: parallel regions and barrier, taskwait, taskgroup and "
                 "critical waits measured at its entry points");
    } else if (libgomp) {
        snprintf(out, len, "GCC libgomp: no OpenMP construct ran");
    } else {
        out[0] = '\0';
    }
}

/* On the emergency dump thread, after SIGTERM and friends: never wait for a
 * lock (the interrupted thread may hold it), settle every thread from the
 * outside, write this process's own file flagged PARTIAL. */
static void pm_session_emergency(int sig)
{
    if (pthread_mutex_trylock(&pm_start_lock) != 0)
        return;  /* a normal finish is under way */
    if (pm_state != PM_ON) {
        pthread_mutex_unlock(&pm_start_lock);
        return;
    }
    /* relaxed atomic: threads still in markers read it without the lock */
    __atomic_store_n(&pm_state, PM_STOPPED, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&pm_start_lock);
    pm_partial = 1;
    pm_sampler_unwind_stop();
    pm_sample_drainer_stop_async();
    pm_series_stop_async();
    pm_node_stop_async();
    pm_msg(pm_rank.rank > 0 ? PM_MSG_FILE_ONLY : PM_MSG_ONCE,
           "signal %d (%s) stopped the program: writing the data collected so far, every "
           "cell flagged PARTIAL", sig, strsignal(sig));
    for (int32_t i = 0; i < pm_nthreads; i++) {
        struct pm_thread *t = pm_threads[i];
        if (pthread_mutex_trylock(&t->settle_lock) != 0)
            continue;
        if (!t->exited) {
            pm_thread_finish_remote(t);
            pm_series_end_thread(t);
        }
        pthread_mutex_unlock(&t->settle_lock);
    }
    pm_thread_exits_settle(0);
    pm_write_outputs(NULL);
}

/* A visit completed in this process (regions open across a fork hold
 * nothing the fork child measured). */
static int pm_any_visit(void)
{
    for (int32_t i = 0; i < pm_nthreads; i++)
        for (int32_t n = 0; n < pm_threads[i]->nnodes; n++)
            if (pm_threads[i]->nodes[n].visits)
                return 1;
    return 0;
}

/* A vfork child shares our memory and must change nothing; a fork child
 * that completed no region writes nothing (fork+exec stays free). */
int pm_session_before_exec(const char *what)
{
    if (pm_state != PM_ON || getpid() != pm_own_pid || (pm_fork_child && !pm_any_visit()))
        return 0;
    pm_msg(pm_rank.rank > 0 ? PM_MSG_FILE_ONLY : PM_MSG_ONCE,
           "exec of %.200s: this program image's data is written now (regions still open are "
           "closed at the exec, flagged UNBALANCED); the new image is a new run", what);
    pm_session_finalize(NULL);
    return 1;
}

void pm_session_finalize_partial(void)
{
    pm_partial = 1;
    pm_session_finalize(NULL);
}

__attribute__((destructor)) static void pm_session_dtor(void) { pm_session_finalize(NULL); }
