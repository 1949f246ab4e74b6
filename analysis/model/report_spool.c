/*
 * report_spool.c — an unlinked temporary file, so that memory does not grow
 * with the size of what waits in it: a report until it is known complete
 * (cli/report.c, perfmark.c, diff.c), the --by thread table (by_table.c). In
 * the model, the lowest layer that uses it, so every user looks down at it.
 */
#include "model/report_spool.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

FILE *pm_report_spool(void)
{
    const char *dir = getenv("TMPDIR");
    char path[4096];
    FILE *f;
    int fd;

    if (!dir || !*dir)
        dir = "/tmp";
    if (snprintf(path, sizeof path, "%s/perfmark-report.XXXXXX", dir) >= (int)sizeof path)
        return NULL;
    fd = mkstemp(path);
    if (fd < 0)
        return NULL;
    unlink(path); /* gone with the last descriptor, whatever happens to us */
    f = fdopen(fd, "w+");
    if (!f)
        close(fd);
    return f;
}

int pm_report_copy(FILE *spool, FILE *out)
{
    char buf[65536];
    size_t n;

    if (fflush(spool) != 0 || fseek(spool, 0, SEEK_SET) != 0)
        return -1;
    while ((n = fread(buf, 1, sizeof buf, spool)) > 0)
        if (fwrite(buf, 1, n, out) != n)
            return -1;
    return ferror(spool) ? -1 : 0;
}
