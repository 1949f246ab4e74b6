/* pm_streq — "is the caller's name equal to this interned name?", word at a
 * time. Region names are compared on every begin and end (a caller may
 * reuse a buffer with new contents), so this is on the hot path.
 *
 * `interned` is ours: 8-byte aligned and zero-padded to a multiple of 8.
 * `name` is the caller's: we may read bytes past its terminator, but never
 * across a page boundary (a page either is mapped as a whole or not), which
 * is the same argument glibc's own string functions rely on. */
#ifndef PM_STREQ_H
#define PM_STREQ_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define PM_PAGE_SIZE 4096u

static inline unsigned pm_first_zero_byte(uint64_t w)
{
    uint64_t zero = (w - 0x0101010101010101ull) & ~w & 0x8080808080808080ull;
    return zero ? (unsigned)__builtin_ctzll(zero) / 8 : 8;
}

/* Checked by tests/unit/test_streq.c; ASan would flag the deliberate
 * over-read of the caller's string inside its page. */
__attribute__((no_sanitize_address)) static inline int
pm_streq(const char *name, const char *interned, size_t max)
{
    size_t i = 0;
    while (i < max) {
        if ((((uintptr_t)(name + i)) & (PM_PAGE_SIZE - 1)) > PM_PAGE_SIZE - 8)
            break;  /* the next 8 bytes would cross a page: finish bytewise */
        uint64_t a, b;
        memcpy(&a, name + i, 8);
        memcpy(&b, interned + i, 8);
        unsigned zero = pm_first_zero_byte(b);
        if (a != b) {
            /* equal strings may differ only after the terminator */
            unsigned diff = (unsigned)__builtin_ctzll(a ^ b) / 8;
            return zero < diff;
        }
        if (zero < 8)
            return 1;
        i += 8;
    }
    for (; i < max; i++) {
        if (name[i] != interned[i])
            return 0;
        if (!name[i])
            return 1;
    }
    return 1;  /* name is longer than max: interned is its truncation */
}

#endif
