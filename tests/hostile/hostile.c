/* Region trees no sane program makes, with ground truth by construction
 * (issue "Reliability", hostile inputs).
 *
 * usage: hostile names N     N distinct top-level names "r<i>", one visit
 *                            each, then region "after" 3 times
 *        hostile deep N      region "d" nested N deep (N distinct paths of
 *                            one name), then "after" 3 times
 *        hostile deepnames N "n<i>" nested N deep, then "after" 3 times
 * Prints "peak_rss_kb K" (VmHWM) at the end, before perfmark writes. */
#include <perfmark.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
