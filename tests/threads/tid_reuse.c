/* A tid the kernel gives again after its earlier holder's exit record was
 * lost, with work known by construction.
 *
 *   tid_reuse N BURST_PAGES REUSE_PAGES [WAIT_MS]
 *
 * N threads named "burst" each first-touch BURST_PAGES pages, wait at a
 * barrier and end together (under a small PERFMARK_THREAD_RING_KB the ring
 * of exit records overflows: some are lost). Then, for each burst tid in
 * turn, once the kernel has released it, /proc/sys/kernel/ns_last_pid is
 * set just below it and one thread named "reuse" started, which
 * first-touches REUSE_PAGES pages; it prints
 *   reuse TID
 * when the kernel gave it that same tid. Every burst thread prints
 *   burst TID
 * Between the two, WAIT_MS (default 100) for perfmark's thread to empty
 * the ring; 0: the burst's records may still wait there, not yet taken,
 * when a later holder of their tid ends.
 * Exit status 0; 77 when ns_last_pid cannot be written (it needs root). */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static long burst_pages, reuse_pages;
static pthread_barrier_t together;

/* Pages of its own, each first-touched: one page fault each. */
static void touch(long pages)
{
    long page = sysconf(_SC_PAGESIZE);
    char *mem = mmap(NULL, (size_t)(pages * page), PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED)
        return;
    for (long i = 0; i < pages; i++)
        mem[i * page] = 1;
    munmap(mem, (size_t)(pages * page));
}

static void *burst(void *arg)
{
    pid_t *tid = arg;
    pthread_setname_np(pthread_self(), "burst");
    *tid = gettid();
    touch(burst_pages);
    pthread_barrier_wait(&together);
    return NULL;
}

static void *reuse(void *arg)
{
    pid_t *tid = arg;
    pthread_setname_np(pthread_self(), "reuse");
    *tid = gettid();
    touch(reuse_pages);
    return NULL;
}

static int set_last_pid(pid_t pid)
{
    FILE *f = fopen("/proc/sys/kernel/ns_last_pid", "w");
    if (!f)
        return -1;
    int ok = fprintf(f, "%d", (int)pid) > 0;
    return fclose(f) == 0 && ok ? 0 : -1;
}

/* Until the kernel released `tid` (at most ~1 s). */
static void wait_released(pid_t tid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%d", (int)tid);
    for (int i = 0; i < 10000 && access(path, F_OK) == 0; i++)
        nanosleep(&(struct timespec){0, 100000}, NULL);
}

int main(int argc, char **argv)
{
    if (argc < 4)
        return 2;
    int n = atoi(argv[1]);
    burst_pages = atol(argv[2]);
    reuse_pages = atol(argv[3]);
    long wait_ms = argc > 4 ? atol(argv[4]) : 100;
    FILE *f = fopen("/proc/sys/kernel/ns_last_pid", "r");
    int last = 0;
    if (!f || fscanf(f, "%d", &last) != 1 || fclose(f) != 0 || set_last_pid(last) != 0) {
        fprintf(stderr, "tid_reuse: cannot write /proc/sys/kernel/ns_last_pid (root only)\n");
        return 77;
    }
    pthread_t *threads = calloc((size_t)n, sizeof *threads);
    pid_t *tids = calloc((size_t)n, sizeof *tids);
    if (!threads || !tids || pthread_barrier_init(&together, NULL, (unsigned)n) != 0)
        return 1;
    for (int i = 0; i < n; i++)
        if (pthread_create(&threads[i], NULL, burst, &tids[i]) != 0)
            return 1;
    for (int i = 0; i < n; i++) {
        pthread_join(threads[i], NULL);
        printf("burst %d\n", (int)tids[i]);
    }
    /* The burst's records are written after the joins return (the kernel
     * wakes a joiner before it counts the thread out): let perfmark's
     * thread empty the ring before the reuse threads write theirs. */
    nanosleep(&(struct timespec){wait_ms / 1000, wait_ms % 1000 * 1000000}, NULL);
    for (int i = 0; i < n; i++) {
        wait_released(tids[i]);
        pid_t got = 0;
        pthread_t t;
        if (set_last_pid(tids[i] - 1) != 0 || pthread_create(&t, NULL, reuse, &got) != 0)
            continue;
        pthread_join(t, NULL);
        if (got == tids[i])
            printf("reuse %d\n", (int)got);
    }
    return 0;
}
