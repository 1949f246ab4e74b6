/* Faults a measured program can meet (issue 8): signals with and without
 * the program's own handlers, crashes, exit() from a worker thread, exec()
 * from inside a region, helper processes, many short-lived threads, the
 * output directory vanishing. Ground truth by construction: a region named
 * "touchN" touches exactly N fresh pages (N page faults).
 * usage: faults MODE [ARG]   (modes in main; tests/reliability/check.py) */
#define _GNU_SOURCE
#include <errno.h>
#include <perfmark.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static void touch(const char *region, long pages)
{
    long psz = sysconf(_SC_PAGESIZE);
    char *p = mmap(NULL, (size_t)(pages * psz), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        exit(9);
    madvise(p, (size_t)(pages * psz), MADV_NOHUGEPAGE);
    perfmark_region_begin(region);
    for (long i = 0; i < pages; i++)
        p[i * psz] = 1;
    perfmark_region_end(region);
    munmap(p, (size_t)(pages * psz));
}

static void ready(void)
{
    printf("ready %ld\n", (long)getpid());
    fflush(stdout);
}

/* The program's own SIGTERM handler: async-signal-safe, says it ran and
 * exits with a status of its own, as a checkpointing code would. */
static void own_term(int sig)
{
    (void)sig;
    static const char msg[] = "own handler ran\n";
    if (write(1, msg, sizeof msg - 1) < 0)
        _exit(43);
    _exit(42);
}

/* The open region at the signal holds a completed "touch200": its counts
 * up to the signal are known and must be kept (PARTIAL). */
static void wait_for_signal(void)
{
    touch("touch500", 500);
    perfmark_region_begin("waiting");
    touch("touch200", 200);
    ready();
    for (int i = 0; i < 600; i++)
        usleep(100000);
    perfmark_region_end("waiting");
}

static void *exit_from_worker(void *arg)
{
    (void)arg;
    touch("touch300", 300);
    perfmark_region_begin("worker_open");
    usleep(100000);  /* the main thread is inside its region by now */
    exit(5);
}

static void *short_lived(void *arg)
{
    (void)arg;
    perfmark_region_begin("short");
    perfmark_region_end("short");
    return NULL;
}

static void many_threads(int n)
{
    /* 8 at a time: the point is many threads over the run, not at once */
    for (int done = 0; done < n; done += 8) {
        pthread_t th[8];
        int k = n - done < 8 ? n - done : 8;
        for (int i = 0; i < k; i++)
            if (pthread_create(&th[i], NULL, short_lived, NULL) != 0)
                exit(8);
        for (int i = 0; i < k; i++)
            pthread_join(th[i], NULL);
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("threads %d maxrss_kb %ld\n", n, ru.ru_maxrss);
}

/* exec() inside a region: failures first (the program must see exactly
 * what it would without perfmark, and measurement must go on), then a
 * real exec of this program in mode after_exec. */
static void exec_inside(const char *self)
{
    touch("touch400", 400);
    perfmark_region_begin("exec_region");
    char *argv_missing[] = {"perfmark-no-such-command", NULL};
    errno = 0;
    int rc = execvp("perfmark-no-such-command", argv_missing);
    printf("execvp missing: rc %d errno %s\n", rc, strerror(errno));
    FILE *f = fopen("notexec", "w");  /* in the working directory, mode 0644 */
    if (!f || fputs("#!/bin/sh\n", f) < 0 || fclose(f) != 0)
        exit(12);
    chmod("notexec", 0644);
    errno = 0;
    rc = execl("./notexec", "notexec", (char *)NULL);
    printf("execl noexec: rc %d errno %s\n", rc, strerror(errno));
    touch("touch100", 100);  /* still measured after the failed execs */
    fflush(stdout);
    char *argv_ok[] = {(char *)self, "after_exec", NULL};
    execv(self, argv_ok);
    printf("execv self failed: %s\n", strerror(errno));
    exit(10);
}

static void helpers(void)
{
    touch("touch200", 200);
    perfmark_region_begin("with_helpers");
    int st = system("/bin/true && ls / > /dev/null");
    pid_t pid = fork();
    if (pid == 0) {
        execl("/bin/true", "true", (char *)NULL);
        _exit(127);
    }
    int st2 = -1;
    waitpid(pid, &st2, 0);
    perfmark_region_end("with_helpers");
    touch("touch250", 250);
    printf("system %d fork+exec %d\n", st, st2);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    if (!strcmp(mode, "wait")) {  /* SIGTERM/SIGINT from outside */
        wait_for_signal();
    } else if (!strcmp(mode, "own_sigaction") || !strcmp(mode, "own_signal")) {
        /* installed after perfmark started: perfmark must keep its dump and
         * still run this handler */
        if (!strcmp(mode, "own_sigaction")) {
            struct sigaction sa;
            memset(&sa, 0, sizeof sa);
            sa.sa_handler = own_term;
            sigemptyset(&sa.sa_mask);
            sigaction(SIGTERM, &sa, NULL);
        } else {
            signal(SIGTERM, own_term);
        }
        wait_for_signal();
    } else if (!strcmp(mode, "ignore")) {
        /* the program ignores SIGTERM: perfmark must not dump, the program
         * must not die, and the file is written normally at exit */
        signal(SIGTERM, SIG_IGN);
        touch("touch500", 500);
        ready();
        usleep(700000);
    } else if (!strcmp(mode, "segv") || !strcmp(mode, "abort") || !strcmp(mode, "fpe")) {
        touch("touch500", 500);
        perfmark_region_begin("crashing");
        touch("touch200", 200);
        if (mode[0] == 's')
            *(volatile int *)(argc - 2 + 0L) = 1;  /* argc is 2: a NULL store */
        else if (mode[0] == 'a')
            abort();
        else {
            volatile int zero = argc - 2, big = 1000;  /* not 1/x: gcc folds that */
            printf("%d\n", big / zero);
        }
        perfmark_region_end("crashing");
    } else if (!strcmp(mode, "exit_thread")) {
        pthread_t t;
        perfmark_region_begin("main_open");
        pthread_create(&t, NULL, exit_from_worker, NULL);
        for (;;)
            pause();
    } else if (!strcmp(mode, "exec")) {
        exec_inside(argv[0]);
    } else if (!strcmp(mode, "after_exec")) {
        touch("touch700", 700);
    } else if (!strcmp(mode, "helpers")) {
        helpers();
    } else if (!strcmp(mode, "threads")) {
        many_threads(argc > 2 ? atoi(argv[2]) : 10000);
    } else if (!strcmp(mode, "names")) {  /* regions named by the arguments */
        for (int i = 2; i < argc; i++) {
            perfmark_region_begin(argv[i]);
            perfmark_region_end(argv[i]);
        }
        if (argc > 2)
            perfmark_region_end(argv[2]);  /* unbalanced: a message naming it */
    } else if (!strcmp(mode, "wait_stdin")) {  /* the test removes the output dir */
        touch("touch500", 500);
        ready();
        char line[16];
        if (!fgets(line, sizeof line, stdin))
            return 11;
        touch("touch600", 600);
    } else {
        fprintf(stderr, "faults: unknown mode '%s'\n", mode);
        return 2;
    }
    printf("faults %s done\n", mode);
    return 3;
}
