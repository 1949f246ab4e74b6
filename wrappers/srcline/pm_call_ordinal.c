/* Which call of its function a call site is (pm_call_ordinal.h).
 *
 * The call that ends at `ret` is decoded (x86-64: `call rel32` or
 * `call *rel32(%rip)`, the -fno-plt form; AArch64: `bl`), and the function's
 * code before it is scanned for calls of the same form to the same target.
 * Compilers call an OpenMP runtime entry point directly, so the constructs of
 * one function are the calls to one target there, in address order.
 *
 * On x86-64 the scan is bytewise (instructions have no fixed length): a byte
 * 0xe8 followed by the exact displacement to the same target is a call. That
 * the bytes of another instruction spell it is possible in principle and
 * would shift the ordinal, which then stays the same from run to run: the
 * name is still stable, which is what it is for. */
#include "pm_call_ordinal.h"

#include <stdint.h>
#include <string.h>

#if defined(__x86_64__)

static int32_t pm_rel32(const unsigned char *p)
{
    int32_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

long pm_call_ordinal(const void *ret, const void *fn_start)
{
    const unsigned char *r = ret, *f = fn_start;
    if (!r || !f || r - f < 5)
        return -1;
    long k = 0;
    if (r[-5] == 0xe8) {  /* call rel32: target = end of instruction + rel */
        const unsigned char *target = r + pm_rel32(r - 4);
        for (const unsigned char *p = f; p + 5 <= r - 5; p++)
            k += p[0] == 0xe8 && p + 5 + pm_rel32(p + 1) == target;
        return k;
    }
    if (r - f >= 6 && r[-6] == 0xff && r[-5] == 0x15) {  /* call *rel32(%rip): a GOT slot */
        const unsigned char *slot = r + pm_rel32(r - 4);
        for (const unsigned char *p = f; p + 6 <= r - 6; p++)
            k += p[0] == 0xff && p[1] == 0x15 && p + 6 + pm_rel32(p + 2) == slot;
        return k;
    }
    return -1;
}

#elif defined(__aarch64__)

/* bl imm26: target = its own address + imm26 * 4 */
static const unsigned char *pm_bl_target(const uint32_t *insn)
{
    uint32_t w = *insn;
    if ((w & 0xfc000000u) != 0x94000000u)
        return NULL;
    int32_t imm = (int32_t)(w << 6) >> 6;
    return (const unsigned char *)insn + (intptr_t)imm * 4;
}

long pm_call_ordinal(const void *ret, const void *fn_start)
{
    if (!ret || !fn_start || ((uintptr_t)ret & 3) || ((uintptr_t)fn_start & 3) ||
        (const char *)ret - (const char *)fn_start < 4)
        return -1;
    const uint32_t *call = (const uint32_t *)ret - 1;
    const unsigned char *target = pm_bl_target(call);
    if (!target)
        return -1;
    long k = 0;
    for (const uint32_t *p = fn_start; p < call; p++)
        k += pm_bl_target(p) == target;
    return k;
}

#else

long pm_call_ordinal(const void *ret, const void *fn_start)
{
    (void)ret, (void)fn_start;
    return -1;
}

#endif
