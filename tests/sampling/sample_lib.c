/* sample_lib.c — a shared library whose hot function is not exported
 * (static, hidden): once the library is stripped, only a debug file can
 * name it (case debugfile of check_sampling.py). */
#include <stdint.h>
#include <time.h>

static volatile uint64_t sink;

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

__attribute__((noipa)) static void lib_hidden_spin(uint64_t n)
{
    for (uint64_t i = 0; i < n; i++)
        sink += i;
}

/* Spin `ms` milliseconds in lib_hidden_spin. */
__attribute__((visibility("default"))) void lib_work(double ms)
{
    for (double end = now_ms() + ms; now_ms() < end;) {
        lib_hidden_spin(100000);
        sink++;
    }
}
