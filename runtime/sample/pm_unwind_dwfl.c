/* libperfmark_unwind.so: DWARF unwinding of copied user stacks with
 * elfutils' libdwfl, inside the measured process (pm_unwind.h).
 *
 * One Dwfl for the process: its objects as /proc/self/maps lists them,
 * made again (at most every PM_REPORT_GAP_NS) when a path runs into an
 * address no reported object holds, so that libraries loaded later are
 * found. The "process" libdwfl unwinds is a fake one whose only thread is
 * the sample at hand: its registers are the sample's, its memory the copied
 * stack and nothing else. The objects' CFI comes from their files
 * (.eh_frame, which -O2 code without frame pointers has, or .debug_frame). */
#define _GNU_SOURCE
#include "pm_unwind.h"

#include <elfutils/libdwfl.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define PM_REPORT_GAP_NS 50000000ull

struct pm_sample_view {
    const uint64_t *regs;
    const unsigned char *stack;
    uint64_t sp;
    size_t bytes;
    uint64_t *callers;
    int n, max, frames;
    int lost;  /* the path reached an address no reported object holds */
};

static Dwfl *pm_dwfl;
static struct pm_sample_view *pm_view;
static uint64_t pm_last_report_ns;

static uint64_t pm_now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static pid_t pm_next_thread(Dwfl *dwfl, void *arg, void **thread_arg)
{
    (void)dwfl, (void)arg, (void)thread_arg;
    return 0;  /* never enumerated: pm_get_thread names the one thread */
}

static bool pm_get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_arg)
{
    (void)dwfl, (void)tid;
    *thread_arg = arg;
    return true;
}

/* Only the copied stack: anything else ends the path. */
static bool pm_memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
    (void)dwfl, (void)arg;
    const struct pm_sample_view *v = pm_view;
    if (!v || addr < v->sp || addr - v->sp > v->bytes || v->bytes - (addr - v->sp) < 8)
        return false;
    memcpy(result, v->stack + (addr - v->sp), 8);
    return true;
}

static bool pm_set_initial_registers(Dwfl_Thread *thread, void *arg)
{
    (void)arg;
    return dwfl_thread_state_registers(thread, 0, PM_UNWIND_NREGS, pm_view->regs);
}

static const Dwfl_Thread_Callbacks pm_thread_callbacks = {
    .next_thread = pm_next_thread,
    .get_thread = pm_get_thread,
    .memory_read = pm_memory_read,
    .set_initial_registers = pm_set_initial_registers,
};

/* No separate debug files: .eh_frame is in the objects themselves, and
 * the standard search would look through /usr/lib/debug or, with
 * DEBUGINFOD_URLS set, ask a server over the network from inside the job. */
static int pm_no_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
                           Dwarf_Addr base, const char *file, const char *debuglink,
                           GElf_Word crc, char **debuginfo_file)
{
    (void)mod, (void)userdata, (void)modname, (void)base, (void)file, (void)debuglink;
    (void)crc, (void)debuginfo_file;
    return -1;
}

static const Dwfl_Callbacks pm_callbacks = {
    .find_elf = dwfl_linux_proc_find_elf,
    .find_debuginfo = pm_no_debuginfo,
};

static int pm_report(void)
{
    dwfl_report_begin(pm_dwfl);
    int rc = dwfl_linux_proc_report(pm_dwfl, getpid());
    dwfl_report_end(pm_dwfl, NULL, NULL);
    pm_last_report_ns = pm_now_ns();
    return rc;
}

static int pm_setup(void)
{
    static int failed;
    if (pm_dwfl || failed)
        return failed ? -1 : 0;
    pm_dwfl = dwfl_begin(&pm_callbacks);
    if (pm_dwfl && pm_report() == 0 &&
        dwfl_attach_state(pm_dwfl, NULL, getpid(), &pm_thread_callbacks, NULL))
        return 0;
    if (pm_dwfl)
        dwfl_end(pm_dwfl);
    pm_dwfl = NULL;
    failed = 1;  /* once: not again for every sample */
    return -1;
}

static int pm_frame(Dwfl_Frame *frame, void *arg)
{
    struct pm_sample_view *v = arg;
    Dwarf_Addr pc;
    bool activation;
    if (!dwfl_frame_pc(frame, &pc, &activation))
        return DWARF_CB_ABORT;
    if (v->frames++ == 0)
        return DWARF_CB_OK;  /* the sampled IP itself */
    if (pc == 0 || v->n >= v->max)
        return DWARF_CB_ABORT;
    /* A return address lies in code an object holds: one that does not is
     * a guess gone wrong (no CFI here, and the fallback read a stale
     * frame), or a library loaded since the last report. */
    if (!dwfl_addrmodule(pm_dwfl, pc)) {
        v->lost = 1;
        return DWARF_CB_ABORT;
    }
    v->callers[v->n++] = pc;
    return DWARF_CB_OK;
}

static int pm_unwind(const uint64_t *regs, const unsigned char *stack, size_t bytes,
                     uint64_t *callers, int max)
{
    if (pm_setup() != 0)
        return -1;
    for (int attempt = 0;; attempt++) {
        struct pm_sample_view v = {regs, stack, regs[PM_UNWIND_SP], bytes, callers, 0, max, 0, 0};
        pm_view = &v;
        dwfl_getthread_frames(pm_dwfl, getpid(), pm_frame, &v);
        pm_view = NULL;
        /* A path that stops at an address no object holds: report the maps
         * again (a library loaded since?) and retry, once, not more often
         * than the gap allows; else the path ends before that address. */
        if (attempt || !v.lost || pm_now_ns() - pm_last_report_ns < PM_REPORT_GAP_NS)
            return v.n;
        /* A new Dwfl rather than a new report into this one: the process
         * state borrows its first module's backend, which a report that
         * drops that module would free under it. */
        dwfl_end(pm_dwfl);
        pm_dwfl = NULL;
        if (pm_setup() != 0)
            return v.n;
    }
}

__attribute__((visibility("default"))) int pm_unwind_attach(uint32_t abi,
                                                            struct pm_unwind_entry *out)
{
    if (abi != PM_UNWIND_ABI)
        return -1;
    out->unwind = pm_unwind;
    return 0;
}
