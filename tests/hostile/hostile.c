/* Region trees no sane program makes, with ground truth by construction
 * (issue "Reliability", hostile inputs).
 *
 * usage: hostile names N     N distinct top-level names "r<i>", one visit
 *                            each, then region "after" 3 times
 *        hostile deep N      region "d" nested N deep (N distinct paths of
 *                            one name), then "after" 3 times
 *        hostile deepnames N "n<i>" nested N deep, then "after" 3 times
 *        hostile nested N    "after" once, then on the main thread and two
 *                            more: "outer" holding N regions "x<i>", each
 *                            touching one fresh page and holding "inner",
 *                            which touches one more (2N pages per thread);
 *                            then "after" 3 times. Run with
 *                            PERFMARK_MAX_REGIONS=2, every x<i> and inner
 *                            is beyond the limit, inside a region.
 * Prints "peak_rss_kb K" (VmHWM) at the end, before perfmark writes. */
#include <perfmark.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../fresh_pages.h"

static long peak_rss_kb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmHWM: %ld kB", &kb) == 1)
            break;
    if (f)
        fclose(f);
    return kb;
}

static long nested_n;


static void *nested(void *arg)
{
    (void)arg;
    struct fresh_pages pages;  /* one fault per touch, in a 16 MiB ring */
    fresh_pages_init(&pages, 4096);
    char name[32];
    perfmark_region_begin("outer");
    for (long i = 0; i < nested_n; i++) {
        snprintf(name, sizeof name, "x%ld", i);
        perfmark_region_begin(name);
        fresh_pages_touch(&pages);
        perfmark_region_begin("inner");
        fresh_pages_touch(&pages);
        perfmark_region_end("inner");
        perfmark_region_end(name);
    }
    perfmark_region_end("outer");
    fresh_pages_free(&pages);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: hostile names|deep|deepnames N\n");
        return 2;
    }
    long n = atol(argv[2]);
    char name[32];
    if (strcmp(argv[1], "names") == 0) {
        for (long i = 0; i < n; i++) {
            snprintf(name, sizeof name, "r%ld", i);
            perfmark_region_begin(name);
            perfmark_region_end(name);
        }
    } else if (strcmp(argv[1], "deep") == 0) {
        for (long i = 0; i < n; i++)
            perfmark_region_begin("d");
        for (long i = 0; i < n; i++)
            perfmark_region_end("d");
    } else if (strcmp(argv[1], "deepnames") == 0) {
        for (long i = 0; i < n; i++) {
            snprintf(name, sizeof name, "n%ld", i);
            perfmark_region_begin(name);
        }
        for (long i = n - 1; i >= 0; i--) {
            snprintf(name, sizeof name, "n%ld", i);
            perfmark_region_end(name);
        }
    } else if (strcmp(argv[1], "nested") == 0) {
        perfmark_region_begin("after");
        perfmark_region_end("after");
        nested_n = n;
        pthread_t th[2];
        for (int i = 0; i < 2; i++)
            pthread_create(&th[i], NULL, nested, NULL);
        nested(NULL);
        for (int i = 0; i < 2; i++)
            pthread_join(th[i], NULL);
        printf("nested done\n");
    } else {
        fprintf(stderr, "hostile: unknown mode '%s'\n", argv[1]);
        return 2;
    }
    for (int i = 0; i < 3; i++) {
        perfmark_region_begin("after");
        perfmark_region_end("after");
    }
    printf("peak_rss_kb %ld\n", peak_rss_kb());
    return 0;
}
