/* A library whose constructor starts a thread: it runs before perfmark's
 * own constructor (libperfmark.so, preloaded, is initialised after the
 * program's libraries), and it calls the C library's pthread_create past
 * any interposer (as a library that resolves it itself may), so that
 * perfmark can only find the thread already running when it starts. The
 * thread waits for early_go(), then first-touches PAGES pages (the
 * argument of early_go) and prints
 *   early tid TID pages P
 * and ends. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static pthread_t early_thread;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t go = PTHREAD_COND_INITIALIZER;
static long pages = -1;

static void *early_main(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&lock);
    while (pages < 0)
        pthread_cond_wait(&go, &lock);
    pthread_mutex_unlock(&lock);
    long page = sysconf(_SC_PAGESIZE);
    char *mem = malloc((size_t)(pages * page));
    for (long i = 0; mem && i < pages; i++)
        mem[i * page] = 1;
    printf("early tid %d pages %ld\n", (int)gettid(), pages);
    fflush(stdout);
    free(mem);
    return NULL;
}

typedef int (*create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

__attribute__((constructor)) static void early_start(void)
{
    create_fn create = (create_fn)dlsym(RTLD_NEXT, "pthread_create");
    if (!create || create(&early_thread, NULL, early_main, NULL) != 0)
        abort();
}

void early_go(long n)
{
    pthread_mutex_lock(&lock);
    pages = n;
    pthread_cond_broadcast(&go);
    pthread_mutex_unlock(&lock);
    pthread_join(early_thread, NULL);
}
