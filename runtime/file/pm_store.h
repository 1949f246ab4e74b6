/* pm_store — where a finished file's bytes go: the path asked for, else,
 * keeping its name, the first of PERFMARK_FALLBACK_DIR, $TMPDIR, /tmp,
 * /var/tmp that takes them (docs/guide.md, "Where the file goes").
 *
 * Bytes are written with write(2) to NAME.tmp-PID (created O_EXCL), then
 * published with link(), which never replaces a file (NAME.1.h5, ... when
 * NAME exists). Any failure removes the temporary file: nothing is left
 * where a write failed, and a full disk costs one errno, not a crash. */
#ifndef PM_STORE_H
#define PM_STORE_H

#include <stddef.h>

#define PM_STORE_PATH 4096

struct pm_store_result {
    char final[PM_STORE_PATH + 16];  /* where the file is now */
    int place;                       /* 0: where it was asked for; else a fallback */
    char why[PM_STORE_PATH + 256];   /* the first failure ("" if none) */
    char tried[1024];                /* the fallback directories tried, for messages */
};

/* Store `len` bytes under `want` or a fallback (`fallback_dir`: the
 * PERFMARK_FALLBACK_DIR setting, may be empty). 0, or -1 when no place took
 * them (r->why says why the first did not). */
int pm_store_bytes(const char *want, const void *buf, size_t len, const char *fallback_dir,
                   struct pm_store_result *r);

/* Publish a complete file `tmp` under `want` or a numbered variant, never
 * replacing a file. 0, or -1 with errno. */
int pm_store_publish(const char *tmp, const char *want, char *final, size_t len);

/* Write all of buf to a new file `path` (a leftover there is removed
 * first); on failure nothing is left and errno says why. */
int pm_store_new(const char *path, const void *buf, size_t len);

/* The directory that would hold `path`, and whether this process can
 * create files there: 0 writable; else an errno (ENOENT, EACCES, ENOTDIR). */
int pm_store_dir_check(const char *path, char *dir, size_t dirlen);

#endif
