/* pm_call_ordinal: which call of its function a call site is.
 *
 * Ground truth twice over: real calls compiled here (sweep() calls target()
 * three times and then other() once; each call's return address, seen by the
 * callee, must give ordinals 0, 1, 2 and 0), and hand-assembled code for
 * the instruction forms the compiler here does not emit (the -fno-plt
 * indirect call on x86-64), plus what is not a call. Runs natively and under
 * qemu-aarch64 (tests/aarch64/run.sh). */
#include "check.h"
#include "pm_call_ordinal.h"

#include <stdint.h>
#include <string.h>

static const void *seen[8];
static int nseen;

static __attribute__((noinline)) void target(int i)
{
    seen[nseen++] = __builtin_return_address(0);
    __asm__ volatile("" ::"r"(i) : "memory");
}

static __attribute__((noinline)) void other(void)
{
    seen[nseen++] = __builtin_return_address(0);
    __asm__ volatile("" ::: "memory");
}

/* Aligned and not inlined, so its first byte is its address. */
static __attribute__((noinline, aligned(16))) void sweep(volatile int *x)
{
    target(*x);
    *x += 3;
    target(*x);
    *x *= 5;
    target(*x);
    other();
    *x -= 1;  /* no tail call: other() returns here */
}

static void real_calls(void)
{
    volatile int x = 1;
    sweep(&x);
    CHECK(nseen == 4, "%d calls seen", nseen);
    for (int i = 0; i < 3 && i < nseen; i++)
        CHECK(pm_call_ordinal(seen[i], (const void *)sweep) == i, "call %d of target: %ld", i,
              pm_call_ordinal(seen[i], (const void *)sweep));
    if (nseen == 4)
        CHECK(pm_call_ordinal(seen[3], (const void *)sweep) == 0, "other(): %ld",
              pm_call_ordinal(seen[3], (const void *)sweep));
}

#if defined(__x86_64__)
static void put_rel32(unsigned char *p, int32_t v) { memcpy(p, &v, sizeof v); }

/* code[0..]: nops, `call rel32` to T at 4, 20, 40; `call *rel(%rip)` to slot
 * S at 60, 80; a byte 0xe8 with another displacement at 100; ret address
 * of each call is its offset + 5 (or + 6). */
static void synthetic(void)
{
    unsigned char code[160];
    memset(code, 0x90, sizeof code);
    const unsigned char *T = code + 150, *S = code + 152;
    int calls[] = {4, 20, 40};
    for (int i = 0; i < 3; i++) {
        code[calls[i]] = 0xe8;
        put_rel32(code + calls[i] + 1, (int32_t)(T - (code + calls[i] + 5)));
    }
    int icalls[] = {60, 80};
    for (int i = 0; i < 2; i++) {
        code[icalls[i]] = 0xff, code[icalls[i] + 1] = 0x15;
        put_rel32(code + icalls[i] + 2, (int32_t)(S - (code + icalls[i] + 6)));
    }
    code[100] = 0xe8;
    put_rel32(code + 101, (int32_t)(T - (code + 105)) + 16);  /* elsewhere */
    for (int i = 0; i < 3; i++)
        CHECK(pm_call_ordinal(code + calls[i] + 5, code) == i, "direct call %d: %ld", i,
              pm_call_ordinal(code + calls[i] + 5, code));
    for (int i = 0; i < 2; i++)
        CHECK(pm_call_ordinal(code + icalls[i] + 6, code) == i, "indirect call %d: %ld", i,
              pm_call_ordinal(code + icalls[i] + 6, code));
    CHECK(pm_call_ordinal(code + 105, code) == 0, "a call to elsewhere: %ld",
          pm_call_ordinal(code + 105, code));
    CHECK(pm_call_ordinal(code + 30, code) == -1, "not after a call: %ld",
          pm_call_ordinal(code + 30, code));
    CHECK(pm_call_ordinal(code + 3, code) == -1, "before the function's 5th byte");
}
#elif defined(__aarch64__)
static uint32_t bl_to(const uint32_t *at, const void *to)
{
    intptr_t words = ((const char *)to - (const char *)at) / 4;
    return 0x94000000u | ((uint32_t)words & 0x03ffffffu);
}

/* words: nops (0xd503201f), bl T at 1, 5, 9; bl elsewhere at 12; blr x8 at 14 */
static void synthetic(void)
{
    uint32_t code[32];
    for (int i = 0; i < 32; i++)
        code[i] = 0xd503201fu;
    const uint32_t *T = code + 30;
    int calls[] = {1, 5, 9};
    for (int i = 0; i < 3; i++)
        code[calls[i]] = bl_to(code + calls[i], T);
    code[12] = bl_to(code + 12, code + 2);
    code[14] = 0xd63f0100u;  /* blr x8 */
    for (int i = 0; i < 3; i++)
        CHECK(pm_call_ordinal(code + calls[i] + 1, code) == i, "bl %d: %ld", i,
              pm_call_ordinal(code + calls[i] + 1, code));
    CHECK(pm_call_ordinal(code + 13, code) == 0, "bl elsewhere: %ld", pm_call_ordinal(code + 13, code));
    CHECK(pm_call_ordinal(code + 15, code) == -1, "blr: %ld", pm_call_ordinal(code + 15, code));
    CHECK(pm_call_ordinal(code + 4, code) == -1, "after a nop");
    CHECK(pm_call_ordinal((const char *)(code + 2) + 1, code) == -1, "misaligned");
}
#else
static void synthetic(void)
{
    CHECK(pm_call_ordinal((const void *)synthetic, (const void *)synthetic) == -1,
          "an unknown architecture says unknown");
}
#endif

int main(void)
{
    real_calls();
    synthetic();
    return TEST_DONE("call_ordinal");
}
