/* Marker misuse and odd names. Every mode exits with status 3 so the test
 * can prove perfmark leaves the application's exit status alone.
 * usage: misuse MODE   (modes below) */
#include <errno.h>
#include <perfmark.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void *exit_inside(void *arg)
{
    perfmark_region_begin("thread_region");
    perfmark_region_begin("thread_inner");
    return NULL;  /* thread ends with both open */
}

/* errno must come back unchanged from every kind of marker call. */
#define KEEP(call)                                                        \
    do {                                                                  \
        errno = EDOM;                                                     \
        (void)(call);                                                     \
        if (errno != EDOM) {                                              \
            fprintf(stderr, "misuse: errno changed to %d by %s\n", errno, #call); \
            exit(4);                                                      \
        }                                                                 \
    } while (0)

static void *errno_thread(void *arg)
{
    KEEP(perfmark_region_begin("picked_up"));  /* thread pickup: opens counters */
    KEEP(perfmark_region_end("picked_up"));
    return NULL;
}

static void check_errno(void)
{
    char name[32];
    for (int i = 0; i < 300; i++) {  /* new names, new paths, stack growth */
        snprintf(name, sizeof name, "deep%d", i);
        KEEP(perfmark_region_begin(name));
    }
    for (int i = 299; i >= 0; i--) {
        snprintf(name, sizeof name, "deep%d", i);
        KEEP(perfmark_region_end(name));
    }
    KEEP(perfmark_region_end("not_open"));            /* unbalanced: message */
    perfmark_region_t h = perfmark_region("handle");
    KEEP(perfmark_region_enter(h));
    KEEP(perfmark_region_exit(h));
    KEEP(perfmark_region_exit(h));                    /* unbalanced by handle */
    pthread_t t;
    pthread_create(&t, NULL, errno_thread, NULL);
    pthread_join(t, NULL);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    if (!strcmp(mode, "end_without_begin")) {
        perfmark_region_end("never_begun");
        perfmark_region_begin("fine");
        perfmark_region_end("fine");
    } else if (!strcmp(mode, "mismatched")) {
        perfmark_region_begin("outer");
        perfmark_region_begin("inner");
        perfmark_region_end("outer");       /* inner still open: closed, flagged */
        perfmark_region_begin("after");
        perfmark_region_end("after");
    } else if (!strcmp(mode, "open_at_exit")) {
        perfmark_region_begin("left_open");
    } else if (!strcmp(mode, "thread_exit_inside")) {
        pthread_t t;
        pthread_create(&t, NULL, exit_inside, NULL);
        pthread_join(t, NULL);
    } else if (!strcmp(mode, "many_names")) {
        char name[32];
        for (int i = 0; i < 100000; i++) {
            snprintf(name, sizeof name, "r%06d", i);
            perfmark_region_begin(name);
            perfmark_region_end(name);
        }
    } else if (!strcmp(mode, "odd_names")) {
        static char longname[5000];
        memset(longname, 'L', sizeof longname - 1);
        const char *names[] = {"", "Ünïcödé ✓ 测量", "a/b", "quote\"comma,", longname};
        for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
            perfmark_region_begin(names[i]);
            perfmark_region_end(names[i]);
        }
    } else if (!strcmp(mode, "errno")) {
        check_errno();
    } else if (!strcmp(mode, "sleep")) {  /* for the SIGTERM test */
        perfmark_region_begin("before_sleep");
        perfmark_region_end("before_sleep");
        perfmark_region_begin("sleeping");
        printf("ready\n");
        fflush(stdout);
        sleep(60);
        perfmark_region_end("sleeping");
    } else if (!strcmp(mode, "plain")) {
        perfmark_region_begin("plain");
        perfmark_region_end("plain");
    } else {
        fprintf(stderr, "misuse: unknown mode '%s'\n", mode);
        return 2;
    }
    printf("misuse %s done\n", mode);
    return 3;
}
