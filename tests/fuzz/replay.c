/*
 * replay.c — replay the fuzz corpus (tests/fuzz/corpus) through the report
 * path: every file in every format, in this process, as the fuzzer ran it.
 * A crash or hang fails the CTest test; a file may be reported or rejected,
 * but a rejection must be one message line naming the file.
 *
 * --isolated: the following files go through the report's crash-isolating
 * child instead (tests/fuzz/hdf5: inputs on which libhdf5 itself crashes or
 * hangs); they must be rejected with one message, and this process survive.
 *
 * Files ending in .gz are decompressed to a temporary file first: HDF5
 * files are mostly zeros, which keeps the corpus in the repository small.
 *
 * usage: fuzz_replay [--isolated] DIR_OR_FILE...
 */
#include "cli/report.h"

#include <dirent.h>
#include <unistd.h>
#include <zlib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int pm_cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int pm_isolated;

/* The decompressed copy of a .gz file in a temporary file (path in tmp). */
static int pm_gunzip(const char *path, char *tmp, size_t len)
{
    const char *dir = getenv("TMPDIR");
    char buf[65536];
    gzFile in = gzopen(path, "rb");
    int fd, n, rc = 0;

    snprintf(tmp, len, "%s/pm-replay-XXXXXX", dir && *dir ? dir : "/tmp");
    if (!in)
        return -1;
    if ((fd = mkstemp(tmp)) < 0) {
        gzclose(in);
        return -1;
    }
    while ((n = gzread(in, buf, sizeof buf)) > 0)
        if (write(fd, buf, (size_t)n) != n)
            rc = -1;
    if (n < 0 || close(fd) != 0)
        rc = -1;
    gzclose(in);
    if (rc != 0)
        unlink(tmp);
    return rc;
}

/* Returns the number of failed checks for one file. */
static int pm_replay_file(const char *path, FILE *sink, size_t *ok, size_t *rejected)
{
    static const char *const formats[] = {"text", "csv", "json"};
    int bad = 0, first = -2;

    for (size_t i = 0; i < sizeof formats / sizeof *formats; i++) {
        char err[1024] = "";
        int rc = pm_report_file(path, formats[i], sink, err, sizeof err);

        if (rc != 0 && (err[0] == '\0' || strchr(err, '\n') || !strstr(err, path))) {
            printf("FAIL %s --format %s: message not one line naming the file: '%s'\n", path,
                   formats[i], err);
            bad++;
        }
        if (first != -2 && rc != first) {
            printf("FAIL %s: accepted in one format, rejected in another\n", path);
            bad++;
        }
        first = rc;
    }
    if (first == 0)
        (*ok)++;
    else
        (*rejected)++;
    if (pm_isolated && first == 0) {
        printf("FAIL %s: libhdf5 fails on this file, yet it was reported\n", path);
        bad++;
    }
    return bad;
}

static int pm_replay_one(const char *path, FILE *sink, size_t *ok, size_t *rejected)
{
    size_t n = strlen(path);
    char tmp[4096];
    int bad;

    if (n < 3 || strcmp(path + n - 3, ".gz") != 0)
        return pm_replay_file(path, sink, ok, rejected);
    if (pm_gunzip(path, tmp, sizeof tmp) != 0) {
        printf("FAIL %s: cannot decompress\n", path);
        return 1;
    }
    bad = pm_replay_file(tmp, sink, ok, rejected);
    if (bad)
        printf("     (%s is the decompressed %s)\n", tmp, path);
    unlink(tmp);
    return bad;
}

int main(int argc, char **argv)
{
    FILE *sink = fopen("/dev/null", "w");
    size_t ok = 0, rejected = 0;
    int bad = 0;

    if (argc < 2 || !sink) {
        fprintf(stderr, "usage: fuzz_replay [--isolated] DIR_OR_FILE...\n");
        return 2;
    }
    pm_report_in_process = 1;
    for (int a = 1; a < argc; a++) {
        struct stat st;
        struct dirent *de;
        DIR *dir;
        char **names = NULL;
        size_t n = 0, cap = 0;

        if (strcmp(argv[a], "--isolated") == 0) {
            pm_isolated = 1;
            pm_report_in_process = 0;
            continue;
        }
        if (stat(argv[a], &st) != 0) {
            printf("FAIL %s: cannot stat\n", argv[a]);
            bad++;
            continue;
        }
        if (!S_ISDIR(st.st_mode)) {
            bad += pm_replay_one(argv[a], sink, &ok, &rejected);
            continue;
        }
        if (!(dir = opendir(argv[a]))) {
            printf("FAIL %s: cannot open\n", argv[a]);
            bad++;
            continue;
        }
        while ((de = readdir(dir))) {
            char *p;

            if (de->d_name[0] == '.')
                continue;
            if (n == cap) {
                char **grown = realloc(names, (cap = cap ? 2 * cap : 64) * sizeof *names);
                if (!grown)
                    return 2;
                names = grown;
            }
            if (!(p = malloc(strlen(argv[a]) + strlen(de->d_name) + 2)))
                return 2;
            sprintf(p, "%s/%s", argv[a], de->d_name);
            names[n++] = p;
        }
        closedir(dir);
        /* a stable order: a failure reproduces the same way */
        qsort(names, n, sizeof *names, pm_cmp_str);
        for (size_t i = 0; i < n; i++) {
            bad += pm_replay_one(names[i], sink, &ok, &rejected);
            free(names[i]);
        }
        free(names);
    }
    printf("fuzz_replay: %zu files reported, %zu rejected with one message, %d failures\n", ok,
           rejected, bad);
    fclose(sink);
    return bad ? 1 : 0;
}
