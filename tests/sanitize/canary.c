/* Known defects, one per sanitizer: tests/sanitize/run.sh builds this with
 * the same flags and options as the sanitizer tree and requires a report
 * from each, so that "zero reports" from the suite cannot come from reports
 * that were silenced, logged elsewhere or never enabled.
 *
 * usage: canary heap|ub|race|leak */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static volatile int pm_shared;  /* volatile: the racy accesses stay in the code */

static void *pm_racer(void *arg)
{
    for (int i = 0; i < 1000; i++)
        pm_shared++;
    return arg;
}

int main(int argc, char **argv)
{
    const char *what = argc > 1 ? argv[1] : "";
    if (strcmp(what, "heap") == 0) {
        volatile char *p = malloc(8);
        free((void *)p);
        p[0] = 1;  /* use after free (not an overflow: UBSan would see that first) */
    } else if (strcmp(what, "ub") == 0) {
        volatile int big = 2147483647;
        printf("%d\n", big + argc);  /* signed overflow */
    } else if (strcmp(what, "race") == 0) {
        pthread_t t;
        pthread_create(&t, NULL, pm_racer, NULL);
        pm_racer(NULL);
        pthread_join(t, NULL);
    } else if (strcmp(what, "leak") == 0) {
        void *volatile p = malloc(64);
        p = NULL;  /* the only pointer dropped: a definite leak */
        (void)p;
    } else {
        fprintf(stderr, "usage: canary heap|ub|race|leak\n");
        return 2;
    }
    return 0;
}
