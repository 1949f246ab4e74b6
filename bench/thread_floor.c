/* The kernel's own share of what a counted thread start costs, without
 * perfmark: thread_create's loop (N threads created and joined) in a
 * process that opened, itself, the counters a method of counting every
 * thread needs. Each MODE adds one step of what perfmark's default (threads
 * counted by the kernel at their exit) asks of the kernel:
 *   plain     nothing opened
 *   inherit   a group of the 4 software events, inherited by every new
 *             thread (what perf stat, or any tool following new threads, pays)
 *   stat      and inherit_stat on each (per-thread values kept apart)
 *   record    and the group's last event redirected to a dummy's ring, so
 *             that each thread's exit writes its group's values there,
 *             stamped with its time; a reader thread empties the ring when
 *             the kernel wakes it
 * usage: thread_floor MODE [N]; prints the mean time per thread.
 * Figures only (bench/run_threads.sh prints them beside perfmark's). */
#define _GNU_SOURCE
#include "thread_loop.h"

#include <linux/perf_event.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

enum { PLAIN, INHERIT, STAT, RECORD };
#define RING_PAGES 128

static struct perf_event_mmap_page *ring;

/* As perfmark's set with exit records: each record stamped with its time
 * (pm_counterset_exit_attr). */
static void timed(struct perf_event_attr *a, int mode)
{
    if (mode < RECORD)
        return;
    a->sample_id_all = 1;
    a->sample_type = PERF_SAMPLE_TIME;
    a->use_clockid = 1;
    a->clockid = CLOCK_MONOTONIC;
}

static int open_event(uint64_t config, int mode, int group)
{
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = PERF_TYPE_SOFTWARE;
    a.config = config;
    a.inherit = mode >= INHERIT;
    a.inherit_stat = mode >= STAT;
    timed(&a, mode);
    a.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_ID | PERF_FORMAT_TOTAL_TIME_ENABLED |
                    PERF_FORMAT_TOTAL_TIME_RUNNING;
    return (int)syscall(SYS_perf_event_open, &a, 0, -1, group, PERF_FLAG_FD_CLOEXEC);
}

/* Empties the ring whenever the kernel says it is a quarter full. */
static void *reader(void *arg)
{
    struct pollfd p = {.fd = *(int *)arg, .events = POLLIN};
    for (;;) {
        poll(&p, 1, 1000);
        uint64_t head = __atomic_load_n(&ring->data_head, __ATOMIC_ACQUIRE);
        __atomic_store_n(&ring->data_tail, head, __ATOMIC_RELEASE);
    }
    return NULL;
}

static int open_ring(int last)
{
    static int dummy;
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = PERF_TYPE_SOFTWARE;
    a.config = PERF_COUNT_SW_DUMMY;
    a.watermark = 1;
    a.wakeup_watermark = RING_PAGES * 4096 / 4;
    timed(&a, RECORD);
    dummy = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
    if (dummy < 0)
        return -1;
    ring = mmap(NULL, (1 + RING_PAGES) * 4096, PROT_READ | PROT_WRITE, MAP_SHARED, dummy, 0);
    if (ring == MAP_FAILED || ioctl(last, PERF_EVENT_IOC_SET_OUTPUT, dummy) != 0)
        return -1;
    pthread_t t;
    return pthread_create(&t, NULL, reader, &dummy) == 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
    static const char *names[] = {"plain", "inherit", "stat", "record"};
    int mode = -1;
    for (int i = 0; argc > 1 && i < 4; i++)
        if (strcmp(argv[1], names[i]) == 0)
            mode = i;
    if (mode < 0) {
        fprintf(stderr, "usage: thread_floor plain|inherit|stat|record [N]\n");
        return 2;
    }
    long n = argc > 2 ? atol(argv[2]) : 100000;
    static const uint64_t sw[] = {PERF_COUNT_SW_TASK_CLOCK, PERF_COUNT_SW_PAGE_FAULTS,
                                  PERF_COUNT_SW_CONTEXT_SWITCHES, PERF_COUNT_SW_CPU_MIGRATIONS};
    int group = -1, last = -1;
    for (int i = 0; mode != PLAIN && i < 4; i++) {
        last = open_event(sw[i], mode, group);
        if (last < 0) {
            perror("thread_floor: perf_event_open");
            return 1;
        }
        if (group < 0)
            group = last;
    }
    if (mode == RECORD && open_ring(last) != 0) {
        perror("thread_floor: the exit records' ring");
        return 1;
    }
    return thread_loop(n);
}
