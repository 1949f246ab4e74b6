/* pm_own_thread — perfmark's own threads (the dump thread, the sample
 * drainer, the series and node watchers): never counted as the program's
 * threads by libperfmark.so's pthread_create interposer
 * (wrappers/threads/pm_pthread.c), never adopted as threads the program had
 * when perfmark started. */
#ifndef PM_OWN_THREAD_H
#define PM_OWN_THREAD_H

#include <pthread.h>
#include <sys/types.h>

/* pthread_create for one of them; its result. */
int pm_own_thread_create(pthread_t *thread, void *(*start)(void *), void *arg);
/* 1 while the calling thread is starting one of them. */
int pm_own_thread_spawning(void);
/* Is `tid` one of them? (Threads this process had when perfmark started
 * are adopted as the program's, perfmark's own excepted.) */
int pm_own_thread_is(pid_t tid);
/* In a fork child: none of them came along. */
void pm_own_thread_after_fork(void);

#endif
