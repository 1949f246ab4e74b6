/*
 * exact_sum.h — sums that do not depend on the order they are made in.
 *
 * The report sums cells a block of threads at a time and joins the blocks;
 * `mpirun perfmark report` joins blocks made on other ranks; a summary file
 * (docs/design.md, "Jobs at scale") joins parts made inside the job, up a
 * tree. A floating-point sum, or Welford's running mean and M2, gives a
 * different last bit for each way of cutting and joining, and the report's
 * JSON prints every bit. So every total and spread is kept exactly, in
 * fixed point: a value v >= 0 is taken as V = round(v * 2^32) (exact for
 * every count and time, which are integers; estimates and shares to 2e-10),
 * ΣV in 128 bits (2^32 values of up to 2^64) and ΣV² in 256. Joining is integer addition, and the mean
 * and standard deviation come from the exact sums once, at the end: the same
 * bits whatever the order, and a standard deviation of exactly 0 when every
 * value is the same.
 */
#ifndef PM_EXACT_SUM_H
#define PM_EXACT_SUM_H

#include <stdint.h>

#define PM_FIX_FRAC 32 /* fraction bits of a value */
/* Fraction bits of a share (a ratio below 2^6: OpenMP wait, MPI time):
 * finer than a double's own step from 0.004 up. */
#define PM_FIX_FRAC_SHARE 60

typedef unsigned __int128 pm_fix; /* ΣV (saturating) */

struct pm_fixsq {
    uint64_t w[4]; /* ΣV², little-endian 64-bit words (saturating) */
};

/* A value in fixed point of `frac` fraction bits. Negative values and NaN
 * (never in a file perfmark wrote) count as 0, values from 2^(127 - frac)
 * up as the largest sum. The _frac forms below take the same scale. */
pm_fix pm_fix_of_frac(double v, int frac);
static inline pm_fix pm_fix_of(double v)
{
    return pm_fix_of_frac(v, PM_FIX_FRAC);
}
static inline pm_fix pm_fix_of_u64(uint64_t u)
{
    return (pm_fix)u << PM_FIX_FRAC;
}

/* A count or a time: the same as pm_fix_of((double)u), without the double
 * where it is exact. */
static inline pm_fix pm_fix_of_count(uint64_t u)
{
    return u < ((uint64_t)1 << 53) ? pm_fix_of_u64(u) : pm_fix_of((double)u);
}

static inline pm_fix pm_fix_add(pm_fix a, pm_fix b)
{
    pm_fix s = a + b;
    return s < a ? ~(pm_fix)0 : s;
}

/* ΣV² += V². */
void pm_fixsq_add(struct pm_fixsq *q, pm_fix v);
void pm_fixsq_merge(struct pm_fixsq *q, const struct pm_fixsq *b);

/* The sum as a number: exact when it is an integer below 2^53 (every sum
 * of counts), else rounded once. */
double pm_fix_value_frac(pm_fix s, int frac);
static inline double pm_fix_value(pm_fix s)
{
    return pm_fix_value_frac(s, PM_FIX_FRAC);
}
/* Σ / n, correctly rounded (equal values give themselves back). n > 0. */
double pm_fix_mean_frac(pm_fix s, uint64_t n, int frac);
static inline double pm_fix_mean(pm_fix s, uint64_t n)
{
    return pm_fix_mean_frac(s, n, PM_FIX_FRAC);
}
/* The population standard deviation of n values from their exact sums:
 * sqrt(n ΣV² − (ΣV)²) / n, the difference computed exactly. n > 0. */
double pm_fix_sd_frac(pm_fix s, const struct pm_fixsq *q, uint64_t n, int frac);
static inline double pm_fix_sd(pm_fix s, const struct pm_fixsq *q, uint64_t n)
{
    return pm_fix_sd_frac(s, q, n, PM_FIX_FRAC);
}

#endif /* PM_EXACT_SUM_H */
