/* Where a thread started, for people (pm_thread_start.h). */
#define _GNU_SOURCE
#include "pm_thread_start.h"

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

void pm_thread_start_name(const void *start_fn, char *out, size_t len)
{
    Dl_info info = {0};
    out[0] = '\0';
    if (!start_fn || !dladdr(start_fn, &info) || !info.dli_fname)
        return;
    const char *obj = strrchr(info.dli_fname, '/') ? strrchr(info.dli_fname, '/') + 1
                                                   : info.dli_fname;
    if (!obj[0])
        obj = "the program";
    if (info.dli_sname && info.dli_saddr == start_fn)
        snprintf(out, len, "%s (%s)", info.dli_sname, obj);
    else
        snprintf(out, len, "%s+0x%lx", obj,
                 (unsigned long)((uintptr_t)start_fn - (uintptr_t)info.dli_fbase));
}
