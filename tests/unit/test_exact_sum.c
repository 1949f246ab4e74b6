/* exact_sum.c and the report's running statistics (report_count.c): the
 * same bits whatever order values are added and blocks joined in, the
 * standard deviation against a two-pass reference, exactly 0 for equal
 * values, rounding and saturation at the edges. */
#include "model/exact_sum.h"
#include "model/report_count.h"
#include "check.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define N 4000

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t next(void)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return rng;
}

/* Values of every kind the report sums: small and large integers, scaled
 * estimates, shares below 1. */
static double value_at(int i)
{
    switch (i % 4) {
    case 0: return (double)(next() % 1000);
    case 1: return (double)(next() >> 8);                   /* up to 2^56 */
    case 2: return (double)(next() % 100000) * 1.37;        /* an estimate */
    default: return (double)(next() % 1000000) / 999983.0;  /* a share */
    }
}

struct sums {
    pm_fix s;
    struct pm_fixsq q;
    uint64_t n;
};

static void add(struct sums *x, double v)
{
    pm_fix f = pm_fix_of(v);
    x->s = pm_fix_add(x->s, f);
    pm_fixsq_add(&x->q, f);
    x->n++;
}

static void merge(struct sums *x, const struct sums *y)
{
    x->s = pm_fix_add(x->s, y->s);
    pm_fixsq_merge(&x->q, &y->q);
    x->n += y->n;
}

static int same(const struct sums *a, const struct sums *b)
{
    return a->s == b->s && a->n == b->n && memcmp(&a->q, &b->q, sizeof a->q) == 0;
}

/* Blocks of random sizes, joined first to last, last to first, and as a
 * binomial tree: the sums, the mean and the deviation have the same bits. */
static void orders(const double *v)
{
    struct sums one = {0}, fwd = {0}, bwd = {0};
    for (int i = 0; i < N; i++)
        add(&one, v[i]);
    static struct sums blk[N];
    int nb = 0;
    for (int i = 0; i < N;) {
        int len = 1 + (int)(next() % 97);
        memset(&blk[nb], 0, sizeof blk[nb]);
        for (int k = 0; k < len && i < N; k++, i++)
            add(&blk[nb], v[i]);
        nb++;
    }
    for (int b = 0; b < nb; b++)
        merge(&fwd, &blk[b]);
    for (int b = nb - 1; b >= 0; b--)
        merge(&bwd, &blk[b]);
    for (int step = 1; step < nb; step *= 2)
        for (int b = 0; b + step < nb; b += 2 * step)
            merge(&blk[b], &blk[b + step]);
    CHECK(same(&one, &fwd) && same(&one, &bwd) && same(&one, &blk[0]),
          "sums differ with the order of joining");
    double m = pm_fix_mean(one.s, one.n), sd = pm_fix_sd(one.s, &one.q, one.n);
    CHECK(m == pm_fix_mean(blk[0].s, blk[0].n) && sd == pm_fix_sd(blk[0].s, &blk[0].q, blk[0].n),
          "mean or sd differ with the order of joining");

    /* against a two-pass reference in long double on the values as kept */
    long double sum = 0, dev = 0;
    for (int i = 0; i < N; i++)
        sum += ldexpl((long double)pm_fix_of(v[i]), -PM_FIX_FRAC);
    long double mean = sum / N;
    for (int i = 0; i < N; i++) {
        long double d = ldexpl((long double)pm_fix_of(v[i]), -PM_FIX_FRAC) - mean;
        dev += d * d;
    }
    double ref = (double)sqrtl(dev / N);
    CHECK(fabs(sd - ref) <= 1e-12 * ref, "sd %.17g, two-pass %.17g", sd, ref);
    CHECK(fabs(m - (double)mean) <= 1e-15 * (double)mean, "mean %.17g vs %.17g", m,
          (double)mean);
}

/* The report's pm_acc: cells added one by one, or in blocks joined either
 * way round, give the same evstat bits. */
static void acc_orders(void)
{
    static uint64_t raw[N], en[N], run[N];
    for (int i = 0; i < N; i++) {
        raw[i] = next() % 5000000;
        en[i] = 1000 + next() % 1000;
        run[i] = i % 3 ? en[i] : en[i] / 2 + 1; /* a third multiplexed */
    }
    struct pm_evstat s1 = {0}, sa = {0}, sb = {0}, sj = {0};
    struct pm_acc a1 = {0}, aa = {0}, ab = {0}, aj = {0};
    for (int i = 0; i < N; i++)
        pm_acc_add_at(&s1, &a1, raw[i], en[i], run[i], 1, (size_t)i);
    for (int i = 0; i < N / 3; i++)
        pm_acc_add_at(&sa, &aa, raw[i], en[i], run[i], 1, (size_t)i);
    for (int i = N / 3; i < N; i++)
        pm_acc_add_at(&sb, &ab, raw[i], en[i], run[i], 1, (size_t)i);
    /* the later block first, then the earlier one joined into it */
    sj = sb, aj = ab;
    pm_acc_merge(&sj, &aj, &sa, &aa);
    pm_acc_finish(&s1, &a1);
    pm_acc_finish(&sj, &aj);
    CHECK(s1.total == sj.total && s1.mean == sj.mean && s1.sd == sj.sd && s1.min == sj.min &&
              s1.max == sj.max && s1.max_index == sj.max_index && s1.estimate == sj.estimate,
          "pm_acc: total %.17g/%.17g mean %.17g/%.17g sd %.17g/%.17g max_index %zu/%zu",
          s1.total, sj.total, s1.mean, sj.mean, s1.sd, sj.sd, s1.max_index, sj.max_index);

    /* ties of the max go to the lower row whichever block comes first */
    struct pm_evstat t1 = {0}, t2 = {0};
    struct pm_acc b1 = {0}, b2 = {0};
    pm_acc_add_at(&t1, &b1, 7, 0, 0, 1, 5);
    pm_acc_add_at(&t2, &b2, 7, 0, 0, 1, 2);
    pm_acc_merge(&t1, &b1, &t2, &b2);
    pm_acc_finish(&t1, &b1);
    CHECK(t1.max_index == 2, "tie of the max at row %zu, want 2", t1.max_index);
}

int main(void)
{
    static double v[N];
    for (int i = 0; i < N; i++)
        v[i] = value_at(i);
    orders(v);

    /* equal large values: a deviation of exactly 0 */
    struct sums eq = {0};
    for (int i = 0; i < 1000; i++)
        add(&eq, 123456789012345.0);
    CHECK(pm_fix_sd(eq.s, &eq.q, eq.n) == 0, "sd of equal values %.17g",
          pm_fix_sd(eq.s, &eq.q, eq.n));
    CHECK(pm_fix_mean(eq.s, eq.n) == 123456789012345.0, "mean of equal values %.17g",
          pm_fix_mean(eq.s, eq.n));

    /* integers are exact; ties round to even; what no file holds is clamped */
    CHECK(pm_fix_of(12345.0) == pm_fix_of_u64(12345), "an integer is not exact");
    CHECK(pm_fix_of_count((1ull << 60) + 1) == pm_fix_of((double)((1ull << 60) + 1)),
          "a count past 2^53 is not taken as its double");
    CHECK(pm_fix_of(ldexp(1.0, -33)) == 0 && pm_fix_of(ldexp(3.0, -33)) == 2,
          "ties do not round to even");
    CHECK(pm_fix_of(-1.0) == 0 && pm_fix_of(NAN) == 0, "negative or NaN is not 0");
    CHECK(pm_fix_of(INFINITY) == ~(pm_fix)0, "infinity is not the largest sum");
    CHECK(pm_fix_value(pm_fix_of(0.25)) == 0.25, "0.25 does not come back");

    /* saturation: the sums stop at their largest value, the spread at 0 */
    struct sums big = {0};
    for (int i = 0; i < 40; i++)
        add(&big, 0x1p94);
    CHECK(big.s == ~(pm_fix)0, "the sum did not saturate");
    CHECK(pm_fix_sd(big.s, &big.q, big.n) >= 0, "a saturated spread is negative");

    acc_orders();
    return TEST_DONE("exact_sum");
}
