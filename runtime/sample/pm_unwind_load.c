/* Loading the DWARF unwinder (pm_unwind.h) and calling it one thread at a
 * time: the drainer thread, a thread at its exit and the final write may
 * each have stacks to unwind. */
#define _GNU_SOURCE
#include "pm_beside.h"
#include "pm_unwind.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

static pthread_mutex_t pm_unwind_lock = PTHREAD_MUTEX_INITIALIZER;
static int pm_unwind_state;  /* 0 not tried, 1 loaded, -1 failed */
static char pm_unwind_error[512];
static struct pm_unwind_entry pm_unwinder;

void pm_unwind_regs_from_sample(const uint64_t *sample_regs, uint64_t *dwarf_regs)
{
#if PM_UNWIND_SUPPORTED
    /* The sample's order, ascending perf number: ax bx cx dx si di bp sp ip
     * r8..r15; DWARF's: ax dx cx bx si di bp sp r8..r15 ip. */
    static const int dwarf_of[PM_UNWIND_NREGS] = {0, 3, 2, 1, 4, 5, 6, 7, 16,
                                                  8, 9, 10, 11, 12, 13, 14, 15};
    for (int i = 0; i < PM_UNWIND_NREGS; i++)
        dwarf_regs[dwarf_of[i]] = sample_regs[i];
#else
    (void)sample_regs, (void)dwarf_regs;
#endif
}

int pm_unwind_load(char *err, size_t errlen)
{
    pthread_mutex_lock(&pm_unwind_lock);
    if (!pm_unwind_state) {
        char why[sizeof pm_unwind_error] = "";
        pm_unwind_attach_fn attach = NULL;
        if (!PM_UNWIND_SUPPORTED) {
            snprintf(why, sizeof why, "perfmark unwinds DWARF call paths on x86-64 only");
        } else {
            void *lib = pm_dlopen_beside("libperfmark_unwind.so", why, sizeof why);
            if (lib && !(attach = (pm_unwind_attach_fn)dlsym(lib, PM_UNWIND_ENTRY)))
                snprintf(why, sizeof why, "libperfmark_unwind.so has no %s", PM_UNWIND_ENTRY);
            if (attach && attach(PM_UNWIND_ABI, &pm_unwinder) != 0) {
                attach = NULL;
                snprintf(why, sizeof why, "libperfmark_unwind.so is from another build");
            }
        }
        pm_unwind_state = attach ? 1 : -1;
        snprintf(pm_unwind_error, sizeof pm_unwind_error, "%s", why);
    }
    int rc = pm_unwind_state > 0 ? 0 : -1;
    if (rc)
        snprintf(err, errlen, "%s", pm_unwind_error);
    pthread_mutex_unlock(&pm_unwind_lock);
    return rc;
}

int pm_unwind_stack(const uint64_t *regs, const unsigned char *stack, size_t bytes,
                    uint64_t *callers, int max)
{
    pthread_mutex_lock(&pm_unwind_lock);
    int n = pm_unwind_state > 0 ? pm_unwinder.unwind(regs, stack, bytes, callers, max) : -1;
    pthread_mutex_unlock(&pm_unwind_lock);
    return n;
}
