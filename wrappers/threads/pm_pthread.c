/* Every thread from its birth: pthread_create and C11 thrd_create are
 * interposed (libperfmark.so exports them), and the new thread runs a
 * trampoline that has the runtime count it (pm_auto_thread_born) before its
 * start routine. Whatever starts the thread: the program, libgomp, libomp,
 * TBB, std::thread (libstdc++ calls pthread_create), a library.
 *
 * glibc's thrd_create calls its pthread_create internally, past any
 * interposer: it is wrapped on its own. Threads started with a raw clone()
 * are not seen here; those running when perfmark starts are adopted by the
 * runtime (pm_session.c). A process perfmark does not measure pays one
 * branch: the real function is called with the caller's own arguments. */
#define _GNU_SOURCE
#include "pm_auto.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <threads.h>

#define PM_EXPORT __attribute__((visibility("default")))

typedef int (*pm_pthread_create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *),
                                    void *);
typedef int (*pm_thrd_create_fn)(thrd_t *, thrd_start_t, void *);

static void *pm_next(const char *name)
{
    int err = errno;
    void *p = dlsym(RTLD_NEXT, name);
    errno = err;
    return p;
}

/* The new thread: counted, then the program's own start routine. What it
 * runs comes back from its prepared state: nothing here allocates or frees
 * (a thread's first malloc or free sets up its allocator cache). */
static void *pm_born(void *prepared)
{
    struct pm_thread_birth b;
    pm_auto_thread_born(prepared, &b);
    return b.start(b.arg);
}

static int pm_born_c11(void *prepared)
{
    struct pm_thread_birth b;
    pm_auto_thread_born(prepared, &b);
    return b.start_c11(b.arg);
}

/* Is libperfmark.so's pthread_create the one the program calls? Another
 * interposer may come first: a sanitizer's runtime, linked into the
 * program, whose interceptor then calls ours with its own start routine,
 * which sets the new thread up for the sanitizer. A trampoline of ours in
 * front of that routine would run the thread's first code before the
 * sanitizer knows the thread (ThreadSanitizer crashes). There, threads are
 * left alone and counted from their first marker, as with
 * PERFMARK_THREADS=markers. */
static int pm_first_interposer(const char *name)
{
    int err = errno;
    Dl_info top, mine;
    void *p = dlsym(RTLD_DEFAULT, name);
    int first = !p || (dladdr(p, &top) && dladdr((void *)pm_born, &mine) &&
                       top.dli_fbase == mine.dli_fbase);
    errno = err;
    return first;
}

/* The new thread's prepared state, carrying what it is to run; NULL: the
 * thread is not counted (not measured, another interposer first, perfmark's
 * own thread, or no memory). */
static void *pm_birth_new(void *(*start)(void *), int (*start_c11)(void *), void *arg,
                          int *first, const char *name)
{
    if (!pm_auto_may_measure())
        return NULL;
    int f = __atomic_load_n(first, __ATOMIC_RELAXED);
    if (f < 0) {
        f = pm_first_interposer(name);
        __atomic_store_n(first, f, __ATOMIC_RELAXED);
    }
    if (!f)
        return NULL;
    int err = errno;
    void *prepared = pm_auto_thread_prepare(&(struct pm_thread_birth){start, start_c11, arg});
    errno = err;
    return prepared;
}

PM_EXPORT int pthread_create(pthread_t *thread, const pthread_attr_t *attr,
                             void *(*start)(void *), void *arg)
{
    static pm_pthread_create_fn real;
    pm_pthread_create_fn fn = __atomic_load_n(&real, __ATOMIC_ACQUIRE);
    if (!fn) {
        fn = (pm_pthread_create_fn)pm_next("pthread_create");
        if (!fn)
            return EAGAIN;  /* no libc below us: nothing can start a thread */
        __atomic_store_n(&real, fn, __ATOMIC_RELEASE);
    }
    static int first = -1;
    void *b = pm_birth_new(start, NULL, arg, &first, "pthread_create");
    if (!b)
        return fn(thread, attr, start, arg);
    int rc = fn(thread, attr, pm_born, b);
    if (rc != 0)
        pm_auto_thread_unborn(b);  /* errno untouched: pthread_create reports by its result */
    return rc;
}

PM_EXPORT int thrd_create(thrd_t *thr, thrd_start_t func, void *arg)
{
    static pm_thrd_create_fn real;
    pm_thrd_create_fn fn = __atomic_load_n(&real, __ATOMIC_ACQUIRE);
    if (!fn) {
        fn = (pm_thrd_create_fn)pm_next("thrd_create");
        if (!fn)
            return thrd_error;
        __atomic_store_n(&real, fn, __ATOMIC_RELEASE);
    }
    static int first = -1;
    void *b = pm_birth_new(NULL, func, arg, &first, "thrd_create");
    if (!b)
        return fn(thr, func, arg);
    int rc = fn(thr, pm_born_c11, b);
    if (rc != thrd_success)
        pm_auto_thread_unborn(b);
    return rc;
}
