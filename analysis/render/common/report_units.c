/*
 * report_units.c — human units shared by the text and HTML reports: counts
 * with k/M/G/... and durations in ns/µs/ms/s, three significant digits; the
 * HTML page's and charts' spellings of them (pm_html_*).
 */
#include "render/common/render_common.h"

#include <math.h>
#include <stdio.h>

/* Mantissa precision so that a number takes at most 4 characters. */
int pm_unit_prec(double a)
{
    return a < 9.995 ? 2 : a < 99.95 ? 1 : 0;
}

void pm_unit_count(char *buf, size_t len, double v, const char *sep)
{
    static const char *const suffix[] = {"", "k", "M", "G", "T", "P", "E"};
    double a = fabs(v);
    int i = 0;

    if (a < 999.5) {
        snprintf(buf, len, "%.0f", v);
        return;
    }
    while (a >= 999.5 && i < 6) {
        a /= 1000;
        v /= 1000;
        i++;
    }
    snprintf(buf, len, "%.*f%s%s", pm_unit_prec(a), v, sep, suffix[i]);
}

void pm_unit_time(char *buf, size_t len, double ns)
{
    static const char *const unit[] = {"ns", "\xC2\xB5s", "ms", "s"};
    double a = fabs(ns);
    int i = 0;

    if (a < 999.5) {
        snprintf(buf, len, "%.0f ns", ns);
        return;
    }
    while (a >= 999.5 && i < 3) {
        a /= 1000;
        ns /= 1000;
        i++;
    }
    snprintf(buf, len, "%.*f %s", a >= 1000 ? 0 : pm_unit_prec(a), ns, unit[i]);
}

void pm_html_count(char *buf, size_t len, double v) { pm_unit_count(buf, len, v, " "); }

void pm_html_time(char *buf, size_t len, double ns) { pm_unit_time(buf, len, ns); }

void pm_html_pct(char *buf, size_t len, double fraction)
{
    /* floor below 100%: 99.96% counted must not read as all of it */
    if (fraction >= 1.0 && fraction < 1.0005)
        snprintf(buf, len, "100%%");
    else if (fraction < 1.0)
        snprintf(buf, len, "%.1f%%", floor(fraction * 1000.0) / 10.0);
    else
        snprintf(buf, len, "%.1f%%", fraction * 100.0);
}
