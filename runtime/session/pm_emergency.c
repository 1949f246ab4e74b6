#define _GNU_SOURCE
#include "pm_emergency.h"
#include "pm_own_thread.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* How long a signal waits for the dump before it goes on. */
#define PM_EMERGENCY_WAIT_MS 10000

/* An MPI rank told to stop lingers after its own dump, before the signal
 * goes on: its peers were told at the same moment (by the launcher, or by a
 * batch system signalling every process of the step), and MPICH's Hydra
 * SIGKILLs every rank still running as soon as one ends by a signal, which
 * cut peers' dumps short (tests/reliability: mpich_sigterm_job lost a rank's
 * file in 1 run of 4 without it). The linger is a few times this rank's own
 * dump, which its peers' resemble, within these bounds. Crashes do not
 * linger. */
#define PM_LINGER_MIN_MS 200
#define PM_LINGER_MAX_MS 3000

/* Requests to stop, then crashes: a crashing process can still have its
 * data written by the dump thread (unless the crash left a lock the dump
 * needs held, e.g. inside malloc: then the bounded wait runs out and the
 * crash goes on as it would have). */
static const int pm_signals[] = {SIGTERM, SIGINT, SIGHUP, SIGXCPU,
                                 SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
#define PM_NSIGNALS (int)(sizeof pm_signals / sizeof *pm_signals)

/* glibc's own entry point: the real sigaction, callable from a handler
 * (no dlsym), since `sigaction` below is ours. */
extern int __sigaction(int sig, const struct sigaction *act, struct sigaction *old);

/* Under ThreadSanitizer (tests/sanitize): TSan's runtime installs its own
 * handlers through `sigaction` below (it comes after libtsan in symbol
 * lookup) while it initializes, before instrumented code may run; and
 * perfmark's handler is installed with __sigaction, so the kernel runs it
 * directly, outside TSan's deferred delivery. These three stay
 * uninstrumented there. */
#if defined(__SANITIZE_THREAD__)
#define PM_NO_TSAN __attribute__((no_sanitize("thread")))
#else
#define PM_NO_TSAN
#endif

/* What the program asked for: perfmark's handler chains to it. */
static struct sigaction pm_previous[PM_NSIGNALS];
static volatile sig_atomic_t pm_ours[PM_NSIGNALS];  /* our handler is installed */
static volatile sig_atomic_t pm_armed;               /* pm_previous is managed */
static struct sigaction pm_action;                   /* our handler, as installed */
static int pm_request[2] = {-1, -1};  /* handler → dump thread: the signal number */
static int pm_done[2] = {-1, -1};     /* dump thread → handler: finished */
static pid_t pm_owner;                /* the process whose dump thread exists */
static volatile sig_atomic_t pm_started;
static void (*pm_dump)(int sig);
static int pm_linger;                       /* an MPI rank: linger after a stop request */
static volatile sig_atomic_t pm_linger_ms;  /* set by the dump thread before it says done */

static int pm_is_stop_request(int sig)
{
    return sig == SIGTERM || sig == SIGINT || sig == SIGHUP || sig == SIGXCPU;
}

static long pm_ms_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void *pm_dump_thread(void *arg)
{
    (void)arg;
    int sig;
    ssize_t n;
    do
        n = read(pm_request[0], &sig, sizeof sig);
    while (n < 0 && errno == EINTR);
    if (n == (ssize_t)sizeof sig) {
        long t0 = pm_ms_now();
        pm_dump(sig);
        if (pm_linger && pm_is_stop_request(sig)) {
            long ms = 3 * (pm_ms_now() - t0);
            pm_linger_ms = ms < PM_LINGER_MIN_MS ? PM_LINGER_MIN_MS
                         : ms > PM_LINGER_MAX_MS ? PM_LINGER_MAX_MS : (int)ms;
        }
    }
    char done = 1;
    while (write(pm_done[1], &done, 1) < 0 && errno == EINTR)
        ;
    return NULL;
}

PM_NO_TSAN static int pm_slot(int sig)
{
    for (int i = 0; i < PM_NSIGNALS; i++)
        if (pm_signals[i] == sig)
            return i;
    return -1;
}

/* Async-signal-safe only: write, poll, sigaction, raise, getpid. Runs for
 * every signal of the list while it is ours, also in a fork child (which
 * only chains). */
PM_NO_TSAN static void pm_on_signal(int sig, siginfo_t *info, void *context)
{
    int saved = errno;
    int i = pm_slot(sig);
    /* Only the first signal dumps, and only in the process that owns the
     * dump thread (a fork child inherits the handler but not the thread). */
    if (!pm_started && getpid() == pm_owner) {
        pm_started = 1;
        if (write(pm_request[1], &sig, sizeof sig) == (ssize_t)sizeof sig) {
            struct pollfd p = {.fd = pm_done[0], .events = POLLIN};
            int ready;
            while ((ready = poll(&p, 1, PM_EMERGENCY_WAIT_MS)) < 0 && errno == EINTR)
                ;
            if (ready > 0 && pm_linger_ms > 0)
                poll(NULL, 0, pm_linger_ms);  /* the peers' dumps: see PM_LINGER_MIN_MS */
        }
    }
    struct sigaction prev = pm_previous[i];
    if (prev.sa_flags & SA_RESETHAND) {
        /* the kernel would have reset the program's handler on delivery */
        pm_previous[i].sa_handler = SIG_DFL;
        pm_previous[i].sa_flags = 0;
    }
    if ((prev.sa_flags & SA_SIGINFO) && prev.sa_sigaction) {
        prev.sa_sigaction(sig, info, context);
    } else if (prev.sa_handler == SIG_IGN) {
        /* the program ignores it: so do we */
    } else if (prev.sa_handler == SIG_DFL) {
        /* The default action, on return (the signal is blocked here). A
         * crash re-raised this way dumps core and ends the process with the
         * same status as without perfmark. */
        pm_ours[i] = 0;
        __sigaction(sig, &prev, NULL);
        raise(sig);
    } else {
        prev.sa_handler(sig);
    }
    errno = saved;
}

/* The program installing a handler after perfmark started (most do, in
 * main) must not switch the dump off: for perfmark's signals the new
 * handler is recorded as the one to chain to, and the program is shown
 * what it would have seen without perfmark. SIG_IGN is really installed
 * (an ignored signal must not dump); a later handler takes the signal back.
 * Async-signal-safe, as sigaction is. */
PM_NO_TSAN __attribute__((visibility("default"))) int sigaction(int sig,
    const struct sigaction *act, struct sigaction *old)
{
    int i = pm_slot(sig);
    if (i < 0 || !pm_armed)
        return __sigaction(sig, act, old);
    sigset_t one, saved_mask;
    sigemptyset(&one);
    sigaddset(&one, sig);
    pthread_sigmask(SIG_BLOCK, &one, &saved_mask);  /* no delivery mid-update */
    struct sigaction current;
    int rc = 0;
    if (pm_ours[i])
        current = pm_previous[i];
    else
        rc = __sigaction(sig, NULL, &current);
    if (rc == 0 && act) {
        if (!(act->sa_flags & SA_SIGINFO) && act->sa_handler == SIG_IGN) {
            rc = __sigaction(sig, act, NULL);
            if (rc == 0)
                pm_ours[i] = 0;
        } else {
            pm_previous[i] = *act;
            if (!pm_ours[i] && (rc = __sigaction(sig, &pm_action, NULL)) == 0)
                pm_ours[i] = 1;
        }
    }
    pthread_sigmask(SIG_SETMASK, &saved_mask, NULL);
    if (rc == 0 && old)
        *old = current;
    return rc;
}

/* signal() in glibc calls its internal sigaction, not ours: the same with
 * glibc's (BSD) semantics. */
__attribute__((visibility("default"))) void (*signal(int sig, void (*handler)(int)))(int)
{
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = handler;
    sigemptyset(&sa.sa_mask);
    if (sig > 0 && sig < NSIG)
        sigaddset(&sa.sa_mask, sig);
    sa.sa_flags = SA_RESTART;
    if (sigaction(sig, &sa, &old) != 0)
        return SIG_ERR;
    return old.sa_handler;
}

void pm_emergency_install(void (*dump)(int sig), int mpi_rank)
{
    if (pipe2(pm_request, O_CLOEXEC) != 0 || pipe2(pm_done, O_CLOEXEC) != 0)
        return;
    pm_dump = dump;
    pm_linger = mpi_rank;
    pm_owner = getpid();
    /* The dump thread takes no signal: they go to the program's threads. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_t thread;
    int rc = pm_own_thread_create(&thread, pm_dump_thread, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0)
        return;
    pthread_detach(thread);
    memset(&pm_action, 0, sizeof pm_action);
    pm_action.sa_sigaction = pm_on_signal;
    pm_action.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
    sigfillset(&pm_action.sa_mask);
    for (int i = 0; i < PM_NSIGNALS; i++) {
        if (__sigaction(pm_signals[i], NULL, &pm_previous[i]) != 0)
            continue;
        /* A signal the program ignores stays ignored (nohup, batch systems). */
        if (!(pm_previous[i].sa_flags & SA_SIGINFO) && pm_previous[i].sa_handler == SIG_IGN)
            continue;
        if (__sigaction(pm_signals[i], &pm_action, NULL) == 0)
            pm_ours[i] = 1;
    }
    pm_armed = 1;
}
