#define _GNU_SOURCE
#include "pm_beside.h"

#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <string.h>

/* `dir`/`file`, for a library path `lib` ("" dir: none). */
static int pm_beside(const char *lib, const char *file, char *out, size_t len)
{
    const char *slash = lib ? strrchr(lib, '/') : NULL;
    if (!slash)
        return -1;
    int n = snprintf(out, len, "%.*s/%s", (int)(slash - lib), lib, file);
    return n > 0 && (size_t)n < len ? 0 : -1;
}

struct pm_search {
    const char *file;
    char path[4096];
    void *lib;
};

/* Beside another libperfmark.so of this process (the one the program
 * was linked with, when a copy of the runtime was preloaded alone). */
static int pm_beside_any(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct pm_search *s = arg;
    const char *base = info->dlpi_name ? strrchr(info->dlpi_name, '/') : NULL;
    if (s->lib || !base || strncmp(base + 1, "libperfmark.so", 14) != 0)
        return 0;
    if (pm_beside(info->dlpi_name, s->file, s->path, sizeof s->path) == 0)
        s->lib = dlopen(s->path, RTLD_NOW | RTLD_LOCAL);
    return s->lib != NULL;
}

void *pm_dlopen_beside(const char *file, char *err, size_t errlen)
{
    struct pm_search s = {file, "", NULL};
    Dl_info self;
    if (dladdr((void *)pm_dlopen_beside, &self) &&
        pm_beside(self.dli_fname, file, s.path, sizeof s.path) == 0)
        s.lib = dlopen(s.path, RTLD_NOW | RTLD_LOCAL);
    if (!s.lib) {
        snprintf(err, errlen, "%s", s.path[0] ? dlerror() : "libperfmark.so's directory unknown");
        dl_iterate_phdr(pm_beside_any, &s);
    }
    if (!s.lib)
        s.lib = dlopen(file, RTLD_NOW | RTLD_LOCAL);
    return s.lib;
}
