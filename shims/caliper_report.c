/* Caliper's runtime-report under perfmark: the run's text report, printed
 * at exit (libperfmark-caliper.so).
 *
 * Caliper prints its report from the process at flush(); perfmark's data is
 * complete only when the runtime writes the run's file at exit (or in
 * MPI_Finalize, for the job's one file). So flush() registers a callback
 * with the runtime (pm_on_written.h), and once the file is written, the
 * process that wrote it (rank 0 of a job) runs `perfmark report FILE`, the
 * CLI installed beside this library, in a child process: measurement only
 * collects, the report stays the CLI's, exactly as `perfmark report`
 * prints it by hand. Whatever goes wrong (not measured, no file, no CLI,
 * the report fails or hangs), the program's exit goes on, after one line on
 * stderr saying why there is no report. */
#define _GNU_SOURCE
#include "caliper_shim.h"
#include "perfmark.h"
#include "pm_on_written.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Weak: an older libperfmark.so in its place means "no report", never a
 * failed symbol lookup in the program. */
extern __typeof__(pm_on_file_written) pm_on_file_written __attribute__((weak));

#ifndef PERFMARK_REL_BINDIR
#define PERFMARK_REL_BINDIR "../bin"
#endif
#define PM_MAX_OUTPUTS 8
#define PM_REPORT_TIMEOUT_S 120

extern char **environ;

static pthread_mutex_t pm_lock = PTHREAD_MUTEX_INITIALIZER;
static int pm_registered, pm_refused;
static int pm_noutputs;
static char *pm_outputs[PM_MAX_OUTPUTS];

__attribute__((format(printf, 1, 2))) static void pm_say(const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    fprintf(stderr, "perfmark: Caliper config runtime-report: %s\n", line);
}

/* This process's rank from the launcher, before MPI says (0 without one):
 * only rank 0 speaks for the job. */
static int pm_env_rank(void)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK",
                                       "SLURM_PROCID"};
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++) {
        const char *v = getenv(vars[i]);
        if (v && *v)
            return atoi(v);
    }
    return 0;
}

/* The perfmark CLI: beside this library (libdir → bindir, as installed, or
 * lib → bin in the build tree), else on PATH. */
static int pm_find_cli(char *out, size_t len)
{
    Dl_info self;
    if (dladdr((void *)pm_find_cli, &self) && self.dli_fname) {
        char dir[PATH_MAX];
        snprintf(dir, sizeof dir, "%s", self.dli_fname);
        char *slash = strrchr(dir, '/');
        if (slash) {
            *slash = '\0';
            const char *rel[] = {PERFMARK_REL_BINDIR, "../bin"};
            for (size_t i = 0; i < sizeof rel / sizeof *rel; i++) {
                snprintf(out, len, "%s/%s/perfmark", dir, rel[i]);
                if (access(out, X_OK) == 0)
                    return 0;
            }
        }
    }
    const char *path = getenv("PATH");
    for (const char *p = path ? path : ""; *p;) {
        size_t n = strcspn(p, ":");
        if (n) {
            snprintf(out, len, "%.*s/perfmark", (int)n, p);
            if (access(out, X_OK) == 0)
                return 0;
        }
        p += n + (p[n] == ':');
    }
    return -1;
}

/* The environment for the report: without perfmark's own variables and
 * LD_PRELOAD (it is not to be measured), nor the MPI launcher's (it would
 * take itself for a rank of this job). */
static char **pm_report_env(void)
{
    static const char *const drop[] = {"LD_PRELOAD=", "PERFMARK_", "OMPI_", "PMIX_", "PMI_"};
    size_t n = 0;
    while (environ && environ[n])
        n++;
    char **env = calloc(n + 1, sizeof *env);
    if (!env)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        int keep = 1;
        for (size_t d = 0; d < sizeof drop / sizeof *drop; d++)
            keep &= strncmp(environ[i], drop[d], strlen(drop[d])) != 0;
        if (keep)
            env[k++] = environ[i];
    }
    return env;
}

/* Wait for the report, at most PM_REPORT_TIMEOUT_S: the program is exiting
 * and must not hang on it. */
static void pm_wait_report(pid_t pid, const char *file)
{
    int status = 0;
    for (long waited_ms = 0;; waited_ms += 10) {
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid)
            break;
        if (r < 0 && errno != EINTR)
            return; /* reaped elsewhere (SIGCHLD ignored): nothing to say */
        if (waited_ms >= PM_REPORT_TIMEOUT_S * 1000L) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            pm_say("`perfmark report` took more than 120 s and was stopped; the measurement is "
                   "in %s", file);
            return;
        }
        struct timespec ten_ms = {0, 10 * 1000 * 1000};
        nanosleep(&ten_ms, NULL);
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return;
    char how[64];
    if (WIFEXITED(status))
        snprintf(how, sizeof how, "exited with status %d", WEXITSTATUS(status));
    else
        snprintf(how, sizeof how, "was killed by signal %d", WTERMSIG(status));
    pm_say("`perfmark report` %s; the measurement is in %s", how, file);
}

static void pm_print_report(const char *cli, const char *file, const char *output)
{
    posix_spawn_file_actions_t fa;
    if (posix_spawn_file_actions_init(&fa) != 0)
        return;
    const char *argv[8] = {"perfmark", "report", "--format", "text", file, NULL, NULL, NULL};
    if (strcmp(output, "stderr") == 0) {
        posix_spawn_file_actions_adddup2(&fa, STDERR_FILENO, STDOUT_FILENO);
    } else if (strcmp(output, "stdout") != 0) {
        argv[5] = "-o";
        argv[6] = output;
    }
    /* The report starts with no signal blocked or ignored, whatever the
     * program did with its own (exec keeps only those two). */
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    sigset_t none, dfl;
    sigemptyset(&none);
    sigemptyset(&dfl);
    const int sigs[] = {SIGHUP, SIGINT, SIGQUIT, SIGPIPE, SIGALRM, SIGTERM, SIGCHLD,
                        SIGUSR1, SIGUSR2};
    for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++)
        sigaddset(&dfl, sigs[i]);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setsigdefault(&attr, &dfl);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    char **env = pm_report_env();
    pid_t pid;
    /* What the program printed comes first. */
    fflush(NULL);
    int err = env ? posix_spawn(&pid, cli, &fa, &attr, (char *const *)argv, env) : ENOMEM;
    posix_spawnattr_destroy(&attr);
    posix_spawn_file_actions_destroy(&fa);
    free(env);
    if (err) {
        pm_say("cannot run %s (%s)", cli, strerror(err));
        return;
    }
    pm_wait_report(pid, file);
}

/* The runtime has written the run's file (pm_on_written.h). */
static void pm_on_written(const char *file, int rank, void *arg)
{
    (void)arg;
    if (rank > 0)
        return; /* rank 0 reports for the job */
    if (!file) {
        pm_say("perfmark wrote no file (its messages above say why), so there is no report");
        return;
    }
    char cli[PATH_MAX];
    if (pm_find_cli(cli, sizeof cli) != 0) {
        pm_say("the perfmark command is neither beside libperfmark-caliper.so nor on PATH; "
               "the measurement is in %s (see: perfmark report %s)", file, file);
        return;
    }
    pthread_mutex_lock(&pm_lock);
    int n = pm_noutputs;
    pthread_mutex_unlock(&pm_lock);
    for (int i = 0; i < n; i++)
        pm_print_report(cli, file, pm_outputs[i]);
}

/* A relative file name is taken from the working directory now, as Caliper
 * would write it at flush(). */
static char *pm_resolve(const char *output)
{
    if (strcmp(output, "stdout") == 0 || strcmp(output, "stderr") == 0 || output[0] == '/')
        return strdup(output);
    char cwd[PATH_MAX], *path = NULL;
    if (!getcwd(cwd, sizeof cwd) || asprintf(&path, "%s/%s", cwd, output) < 0)
        return strdup(output);
    return path;
}

void pm_cali_report_at_exit(const char *output)
{
    char *want = pm_resolve(output);
    if (!want)
        return;
    pthread_mutex_lock(&pm_lock);
    if (!pm_registered && !pm_refused) {
        if (!perfmark_active()) {
            pm_refused = 1;
            if (pm_env_rank() == 0)
                pm_say("this program is not measured by perfmark, so there is no report to "
                       "print (run it as: perfmark run -- PROGRAM)");
        } else if (!pm_on_file_written || pm_on_file_written(pm_on_written, NULL) != 0) {
            pm_refused = 1;
            if (pm_env_rank() == 0)
                pm_say("the libperfmark.so measuring this program cannot print a report at "
                       "exit (another perfmark build); use perfmark report on its file");
        } else {
            pm_registered = 1;
        }
    }
    int known = 0;
    for (int i = 0; i < pm_noutputs; i++)
        known |= strcmp(pm_outputs[i], want) == 0;
    if (pm_registered && !known && pm_noutputs < PM_MAX_OUTPUTS) {
        pm_outputs[pm_noutputs++] = want;
        want = NULL;
    }
    pthread_mutex_unlock(&pm_lock);
    free(want);
}
