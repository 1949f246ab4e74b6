#define _GNU_SOURCE
#include "pm_store.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* `path` with ".N" before the extension (N = 0: path itself). */
static void pm_numbered(const char *path, int n, char *out, size_t len)
{
    if (n == 0) {
        snprintf(out, len, "%s", path);
        return;
    }
    size_t l = strlen(path);
    if (l > 3 && strcmp(path + l - 3, ".h5") == 0)
        snprintf(out, len, "%.*s.%d.h5", (int)(l - 3), path, n);
    else
        snprintf(out, len, "%s.%d", path, n);
}

int pm_store_publish(const char *tmp, const char *want, char *final, size_t len)
{
    for (int n = 0; n < 1000; n++) {
        pm_numbered(want, n, final, len);
        if (link(tmp, final) == 0) {
            unlink(tmp);
            return 0;
        }
        if (errno == EEXIST)
            continue;
        /* No hard links here (some parallel file systems): rename if free. */
        if (access(final, F_OK) == 0)
            continue;
        return rename(tmp, final);
    }
    errno = EEXIST;
    return -1;
}

int pm_store_new(const char *path, const void *buf, size_t len)
{
    unlink(path);  /* a leftover of an earlier process with our pid */
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0)
        return -1;
    const char *p = buf;
    size_t left = len;
    while (left > 0) {
        ssize_t n = write(fd, p, left);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            int e = n < 0 ? errno : ENOSPC;
            close(fd);
            unlink(path);
            errno = e;
            return -1;
        }
        p += n;
        left -= (size_t)n;
    }
    /* NFS and some parallel file systems report a full disk only here. */
    if (close(fd) != 0) {
        int e = errno;
        unlink(path);
        errno = e;
        return -1;
    }
    return 0;
}

/* Store at `path` exactly (then numbered); the reason in why on failure. */
static int pm_store_at(const char *path, const void *buf, size_t len, char *final, size_t flen,
                       char *why, size_t whylen)
{
    char tmp[PM_STORE_PATH + 32];
    snprintf(tmp, sizeof tmp, "%s.tmp-%ld", path, (long)getpid());
    if (pm_store_new(tmp, buf, len) != 0) {
        snprintf(why, whylen, "cannot write %s: %s", path, strerror(errno));
        return -1;
    }
    if (pm_store_publish(tmp, path, final, flen) != 0) {
        snprintf(why, whylen, "cannot put %s in place: %s", path, strerror(errno));
        unlink(tmp);
        return -1;
    }
    return 0;
}

int pm_store_bytes(const char *want, const void *buf, size_t len, const char *fallback_dir,
                   struct pm_store_result *r)
{
    memset(r, 0, sizeof *r);
    if (pm_store_at(want, buf, len, r->final, sizeof r->final, r->why, sizeof r->why) == 0)
        return 0;
    const char *base = strrchr(want, '/') ? strrchr(want, '/') + 1 : want;
    const char *dirs[] = {fallback_dir, getenv("TMPDIR"), "/tmp", "/var/tmp"};
    char why[sizeof r->why];
    for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++) {
        if (!dirs[i] || !*dirs[i])
            continue;
        size_t used = strlen(r->tried);
        snprintf(r->tried + used, sizeof r->tried - used, "%s%s", used ? ", " : "", dirs[i]);
        char alt[PM_STORE_PATH];
        snprintf(alt, sizeof alt, "%s/%s", dirs[i], base);
        if (strcmp(alt, want) == 0)
            continue;
        if (pm_store_at(alt, buf, len, r->final, sizeof r->final, why, sizeof why) == 0) {
            r->place = (int)i + 1;
            return 0;
        }
    }
    return -1;
}

int pm_store_dir_check(const char *path, char *dir, size_t dirlen)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        snprintf(dir, dirlen, ".");
    else if (slash == path)
        snprintf(dir, dirlen, "/");
    else
        snprintf(dir, dirlen, "%.*s", (int)(slash - path), path);
    if (access(dir, W_OK | X_OK) == 0)
        return 0;
    return errno ? errno : EACCES;
}
