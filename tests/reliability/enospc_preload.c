/* A stand-in for a full disk where the test cannot mount a small tmpfs
 * (no root, no user namespaces): preloaded, it fails writes to files under
 * the directories of PM_ENOSPC_DIRS (colon-separated) with ENOSPC once
 * PM_ENOSPC_AFTER bytes have been written there in all. check_full_disk.py
 * uses it only then (or when told to) and says which fault source ran. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#define PM_MAX_FD 4096

static char pm_full_fd[PM_MAX_FD];  /* fd opened under a "full" directory */
static long long pm_written;

static int pm_under_full(const char *path)
{
    const char *dirs = getenv("PM_ENOSPC_DIRS");
    if (!dirs || !path)
        return 0;
    char buf[4096];
    strncpy(buf, dirs, sizeof buf - 1);
    buf[sizeof buf - 1] = '\0';
    char *save = NULL;
    for (char *d = strtok_r(buf, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
        size_t n = strlen(d);
        if (n && strncmp(path, d, n) == 0 && (path[n] == '/' || path[n] == '\0'))
            return 1;
    }
    return 0;
}

static void pm_track(int fd, const char *path)
{
    if (fd >= 0 && fd < PM_MAX_FD)
        pm_full_fd[fd] = (char)pm_under_full(path);
}

/* How many of n bytes may still be written to fd. */
static size_t pm_allowed(int fd, size_t n)
{
    if (fd < 0 || fd >= PM_MAX_FD || !pm_full_fd[fd])
        return n;
    const char *after = getenv("PM_ENOSPC_AFTER");
    long long room = (after ? atoll(after) : 0) - pm_written;
    if (room <= 0)
        return 0;
    return (size_t)room < n ? (size_t)room : n;
}

int open(const char *path, int flags, ...)
{
    static int (*real)(const char *, int, ...);
    if (!real)
        real = (int (*)(const char *, int, ...))dlsym(RTLD_NEXT, "open");
    va_list ap;
    va_start(ap, flags);
    mode_t mode = (flags & (O_CREAT | O_TMPFILE)) ? va_arg(ap, mode_t) : 0;
    va_end(ap);
    int fd = real(path, flags, mode);
    pm_track(fd, path);
    return fd;
}

int open64(const char *path, int flags, ...) __attribute__((alias("open")));

ssize_t write(int fd, const void *buf, size_t n)
{
    static ssize_t (*real)(int, const void *, size_t);
    if (!real)
        real = (ssize_t(*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
    size_t ok = pm_allowed(fd, n);
    if (n > 0 && ok == 0) {
        errno = ENOSPC;
        return -1;
    }
    ssize_t w = real(fd, buf, ok);
    if (w > 0 && fd >= 0 && fd < PM_MAX_FD && pm_full_fd[fd])
        pm_written += w;
    return w;
}
