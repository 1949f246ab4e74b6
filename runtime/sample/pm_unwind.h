/* pm_unwind — call paths of code without frame pointers: a sample carries
 * the thread's user registers and a copy of the top of its user stack
 * (PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER), and the callers are
 * found from the objects' DWARF call-frame information (.eh_frame), as
 * `perf record --call-graph dwarf` does.
 *
 * The unwinder is elfutils' libdwfl, in a library of its own
 * (libperfmark_unwind.so, pm_unwind_dwfl.c) that the runtime loads only
 * when a run asks for DWARF call paths: libdw and its compressors stay out
 * of every other process. Unwinding never runs in the sampled thread: the
 * owner only copies the stack aside (pm_sampler.c), and the drainer thread,
 * a thread's exit or the final write unwind it. It reads nothing but the
 * copied stack and the objects' files: an address outside the copy ends
 * the path there, never a read of the live process. */
#ifndef PM_UNWIND_H
#define PM_UNWIND_H

#include <stddef.h>
#include <stdint.h>

/* The registers a sample records, in DWARF numbering (x86-64: rax rdx rcx
 * rbx rsi rdi rbp rsp r8..r15, then the return-address column rip). */
#define PM_UNWIND_NREGS 17
#define PM_UNWIND_SP 7
#define PM_UNWIND_IP 16

/* perf's register numbers (asm/perf_regs.h) of the DWARF ones above, and
 * the mask asked of the kernel: the sample holds them in ascending perf
 * number, which pm_unwind_regs_from_sample puts in DWARF order. */
#if defined(__x86_64__)
#define PM_UNWIND_SUPPORTED 1
#define PM_UNWIND_REGS_MASK                                                                 \
    ((1ull << 0) | (1ull << 1) | (1ull << 2) | (1ull << 3) | (1ull << 4) | (1ull << 5) |     \
     (1ull << 6) | (1ull << 7) | (1ull << 8) | (0xffull << 16))
#else
#define PM_UNWIND_SUPPORTED 0
#define PM_UNWIND_REGS_MASK 0ull
#endif

/* Bytes of user stack each sample copies unless PERFMARK_SAMPLE_STACK says
 * (perf's default); the kernel allows up to 65528. */
#define PM_UNWIND_STACK_DEFAULT 8192u
#define PM_UNWIND_STACK_MAX 65528u

/* The sample's registers (in ascending perf number, as many as the mask
 * has bits) in DWARF order. */
void pm_unwind_regs_from_sample(const uint64_t *sample_regs, uint64_t *dwarf_regs);

/* What the library exports (PM_UNWIND_ENTRY), checked by version. */
#define PM_UNWIND_ABI 1
#define PM_UNWIND_ENTRY "pm_unwind_attach"
struct pm_unwind_entry {
    /* The return addresses of the sample's callers, innermost first (not
     * the sampled IP itself), at most `max`: how many. `regs` in DWARF
     * order, `stack` the copy of `bytes` from regs[PM_UNWIND_SP]. Safe to
     * call from one thread at a time (pm_unwind_stack serialises). */
    int (*unwind)(const uint64_t *regs, const unsigned char *stack, size_t bytes,
                  uint64_t *callers, int max);
};
typedef int (*pm_unwind_attach_fn)(uint32_t abi, struct pm_unwind_entry *out);

/* Load the unwinder (once; later calls say how the first went): 0, or -1
 * with the reason in err. */
int pm_unwind_load(char *err, size_t errlen);
/* pm_unwind_entry.unwind of the loaded library, one caller at a time; -1
 * when it is not loaded. */
int pm_unwind_stack(const uint64_t *regs, const unsigned char *stack, size_t bytes,
                    uint64_t *callers, int max);

#endif
