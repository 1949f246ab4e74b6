/*
 * series_topdown.c — TopDown of intervals (series_topdown.h): the bins'
 * counts of the method's events summed (already scaled where multiplexed,
 * model/series.c) and handed to report_topdown.c's finishing step, so an
 * interval is broken down exactly as a region with those counts would be.
 */
#include "model/series_topdown.h"

#include <string.h>

int pm_series_td_on(const struct pm_tdreport *td, const struct pm_series_view *s)
{
    if (!td->on || !td->reg || !s || !td->nev)
        return 0;
    for (size_t k = 0; k < td->nev; k++)
        if (td->ev[k] >= s->E)
            return 0;
    return 1;
}

int pm_series_td_at(const struct pm_tdreport *td, const struct pm_series_view *s,
                    const double *values, size_t b0, size_t b1, struct pm_td_breakdown *br)
{
    if (!pm_series_td_on(td, s))
        return 0;
    struct pm_td_sum sum;
    memset(&sum, 0, sizeof sum);
    for (size_t b = b0; b < b1 && b < s->nbins; b++)
        for (size_t k = 0; k < td->nev; k++)
            sum.scaled[k] = pm_fix_add(sum.scaled[k], pm_fix_of(values[b * s->E + td->ev[k]]));
    struct pm_tdstat st;
    memset(&st, 0, sizeof st);
    st.used = 1;
    pm_td_finish_stat(td, &sum, &st);
    if (!st.has_ratios)
        return 0;
    *br = st.br;
    return 1;
}
