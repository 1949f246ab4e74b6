#define _GNU_SOURCE
#include "pm_emergency.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

/* How long a signal waits for the dump before it goes on. */
#define PM_EMERGENCY_WAIT_MS 10000

static const int pm_signals[] = {SIGTERM, SIGINT, SIGHUP, SIGXCPU};
#define PM_NSIGNALS (int)(sizeof pm_signals / sizeof *pm_signals)

static struct sigaction pm_previous[PM_NSIGNALS];
static int pm_request[2] = {-1, -1};  /* handler → dump thread: the signal number */
static int pm_done[2] = {-1, -1};     /* dump thread → handler: finished */
static pid_t pm_owner;                /* the process whose dump thread exists */
static volatile sig_atomic_t pm_started;
static void (*pm_dump)(int sig);

static void *pm_dump_thread(void *arg)
{
    (void)arg;
    int sig;
    ssize_t n;
    do
        n = read(pm_request[0], &sig, sizeof sig);
    while (n < 0 && errno == EINTR);
    if (n == (ssize_t)sizeof sig)
        pm_dump(sig);
    char done = 1;
    while (write(pm_done[1], &done, 1) < 0 && errno == EINTR)
        ;
    return NULL;
}

static int pm_slot(int sig)
{
    for (int i = 0; i < PM_NSIGNALS; i++)
        if (pm_signals[i] == sig)
            return i;
    return -1;
}

/* Async-signal-safe only: write, poll, sigaction, raise, getpid. */
static void pm_on_signal(int sig, siginfo_t *info, void *context)
{
    int saved = errno;
    int i = pm_slot(sig);
    /* Only the first signal dumps, and only in the process that owns the
     * dump thread (a fork child inherits the handler but not the thread). */
    if (!pm_started && getpid() == pm_owner) {
        pm_started = 1;
        if (write(pm_request[1], &sig, sizeof sig) == (ssize_t)sizeof sig) {
            struct pollfd p = {.fd = pm_done[0], .events = POLLIN};
            while (poll(&p, 1, PM_EMERGENCY_WAIT_MS) < 0 && errno == EINTR)
                ;
        }
    }
    struct sigaction *prev = &pm_previous[i];
    if ((prev->sa_flags & SA_SIGINFO) && prev->sa_sigaction) {
        prev->sa_sigaction(sig, info, context);
    } else if (prev->sa_handler == SIG_IGN) {
        /* the program ignores it: so do we */
    } else if (prev->sa_handler == SIG_DFL) {
        sigaction(sig, prev, NULL);  /* the default action, on return */
        raise(sig);
    } else {
        prev->sa_handler(sig);
    }
    errno = saved;
}

void pm_emergency_install(void (*dump)(int sig))
{
    if (pipe2(pm_request, O_CLOEXEC) != 0 || pipe2(pm_done, O_CLOEXEC) != 0)
        return;
    pm_dump = dump;
    pm_owner = getpid();
    /* The dump thread takes no signal: they go to the program's threads. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_t thread;
    int rc = pthread_create(&thread, NULL, pm_dump_thread, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0)
        return;
    pthread_detach(thread);
    for (int i = 0; i < PM_NSIGNALS; i++) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = pm_on_signal;
        sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
        sigfillset(&sa.sa_mask);
        if (sigaction(pm_signals[i], NULL, &pm_previous[i]) != 0)
            continue;
        /* A signal the program ignores stays ignored (nohup, batch systems). */
        if (pm_previous[i].sa_handler == SIG_IGN)
            continue;
        sigaction(pm_signals[i], &sa, NULL);
    }
}
