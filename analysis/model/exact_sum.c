/*
 * exact_sum.c — fixed-point sums joined in any order (exact_sum.h).
 */
#include "model/exact_sum.h"

#include <math.h>
#include <string.h>

pm_fix pm_fix_of_frac(double v, int frac)
{
    if (!(v > 0))
        return 0;
    if (v >= ldexp(1.0, 127 - frac))
        return ~(pm_fix)0;
    return (pm_fix)nearbyint(ldexp(v, frac));
}

double pm_fix_value_frac(pm_fix s, int frac)
{
    return ldexp((double)s, -frac);
}

double pm_fix_mean_frac(pm_fix s, uint64_t n, int frac)
{
    if (s == 0)
        return 0;
    /* S 2^k / n with S 2^k's top bit at 127: a quotient of at least 64
     * bits, and a sticky bit for the remainder, round as the exact value
     * does (the same trick as pm_words_to_double) */
    uint64_t hi = (uint64_t)(s >> 64), lo = (uint64_t)s;
    int k = hi ? __builtin_clzll(hi) : 64 + __builtin_clzll(lo);
    s <<= k;
    pm_fix q = s / n, r = s % n;
    return ldexp((double)(q | (pm_fix)(r != 0)), -frac - k);
}

/* a * b, both below 2^128, into out[4]. */
static void pm_mul128(pm_fix a, pm_fix b, uint64_t out[4])
{
    uint64_t a0 = (uint64_t)a, a1 = (uint64_t)(a >> 64), b0 = (uint64_t)b,
             b1 = (uint64_t)(b >> 64);
    pm_fix p00 = (pm_fix)a0 * b0, p01 = (pm_fix)a0 * b1, p10 = (pm_fix)a1 * b0,
           p11 = (pm_fix)a1 * b1;
    pm_fix mid = (p00 >> 64) + (uint64_t)p01 + (uint64_t)p10; /* < 3 * 2^64 */
    out[0] = (uint64_t)p00;
    out[1] = (uint64_t)mid;
    pm_fix hi = (mid >> 64) + (p01 >> 64) + (p10 >> 64) + (uint64_t)p11;
    out[2] = (uint64_t)hi;
    out[3] = (uint64_t)(hi >> 64) + (uint64_t)(p11 >> 64);
}

/* q += b over n words; 1 when it overflowed. */
static int pm_add_words(uint64_t *q, const uint64_t *b, int n)
{
    unsigned carry = 0;
    for (int i = 0; i < n; i++) {
        uint64_t s = q[i] + b[i];
        unsigned c1 = s < q[i];
        uint64_t t = s + carry;
        unsigned c2 = t < s;
        q[i] = t;
        carry = c1 | c2;
    }
    return (int)carry;
}

static void pm_fixsq_saturate(struct pm_fixsq *q)
{
    memset(q->w, 0xff, sizeof q->w);
}

void pm_fixsq_add(struct pm_fixsq *q, pm_fix v)
{
    if ((v >> 64) == 0) { /* the common case: a value below 2^32, one product */
        pm_fix p = (pm_fix)(uint64_t)v * (uint64_t)v;
        pm_fix lo = ((pm_fix)q->w[1] << 64 | q->w[0]) + p;
        unsigned c = lo < p;
        q->w[0] = (uint64_t)lo;
        q->w[1] = (uint64_t)(lo >> 64);
        if (c && ++q->w[2] == 0 && ++q->w[3] == 0)
            pm_fixsq_saturate(q);
        return;
    }
    uint64_t p[4];
    pm_mul128(v, v, p);
    if (pm_add_words(q->w, p, 4))
        pm_fixsq_saturate(q);
}

void pm_fixsq_merge(struct pm_fixsq *q, const struct pm_fixsq *b)
{
    if (pm_add_words(q->w, b->w, 4))
        pm_fixsq_saturate(q);
}

/* An integer of n words as the nearest double (ties to even, as any other
 * correctly rounded conversion, Python's float(int) among them): the top
 * 128 bits, with a sticky bit for anything below them. */
static double pm_words_to_double(const uint64_t *w, int n)
{
    int top = n - 1;
    while (top > 1 && w[top] == 0)
        top--;
    if (top <= 1)
        return (double)(((pm_fix)w[1] << 64) | w[0]);
    pm_fix hi = ((pm_fix)w[top] << 64) | w[top - 1];
    int sticky = 0;
    for (int i = 0; i < top - 1; i++)
        sticky |= w[i] != 0;
    return ldexp((double)(hi | (pm_fix)sticky), 64 * (top - 1));
}

double pm_fix_sd_frac(pm_fix s, const struct pm_fixsq *q, uint64_t n, int frac)
{
    /* n ΣV² (5 words) − (ΣV)² (4 words): never negative in exact integers */
    uint64_t nq[5] = {0}, s2[5] = {0};
    pm_fix carry = 0;
    for (int i = 0; i < 4; i++) {
        pm_fix p = (pm_fix)q->w[i] * n + carry;
        nq[i] = (uint64_t)p;
        carry = p >> 64;
    }
    nq[4] = (uint64_t)carry;
    pm_mul128(s, s, s2);
    uint64_t borrow = 0;
    for (int i = 0; i < 5; i++) {
        uint64_t a = nq[i], b = s2[i];
        uint64_t d = a - b - borrow;
        borrow = (a < b) || (a == b && borrow) ? 1 : 0;
        nq[i] = d;
    }
    if (borrow) /* only a saturated ΣV² gets here: no spread can be said */
        return 0;
    /* sqrt(D) / n is the deviation of V; a value is V / 2^frac */
    return ldexp(sqrt(pm_words_to_double(nq, 5)) / (double)n, -frac);
}
