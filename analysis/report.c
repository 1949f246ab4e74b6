/*
 * report.c — aggregate a loaded perfmark file and render it as text, CSV or
 * JSON. The counting rules (what is scaled, what is an estimate, what has no
 * value) live in one place, pm_cell_value(), and every format shows the same
 * numbers; tests/report/check_report.py recomputes them independently.
 */
#include "report.h"
#include "h5read.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#define PM_TEXT_WIDTH 100
#define PM_TEXT_MESSAGES 20
#define PM_MAX_FLAGS 32 /* flags are uint32: one name per bit at most */
#define PM_NONE SIZE_MAX

static const char pm_unseen_label[] =
    "work of threads perfmark never saw (or before/after their first marker)";

/* ================================================================ model */

/* One event aggregated over a set of cells (a region's threads, one thread,
 * or the threads of one rank row). */
struct pm_evstat {
    int has_total; /* 0 only when every cell lacks an estimate */
    double total;
    int has_spread; /* min/mean/max over visiting threads exist */
    double min, mean, max;
    uint64_t raw; /* Σ raw counts (saturating) */
    int estimate; /* some cell was scaled */
    int untrusted; /* the total misses counts (LOST_GENERATION or n/a cells) */
    size_t n_na;  /* cells without an estimate */
    int has_share;
    double share; /* Σrunning / Σenabled */
};

struct pm_regstat {
    uint64_t visits;
    size_t nvisited;
    uint64_t wall_total, wall_min, wall_max;
    double wall_mean;
    size_t flag_cells[PM_MAX_FLAGS]; /* threads whose cell carries flags[i] */
    struct pm_evstat *ev;       /* [E] */
};

struct pm_rankstat {
    struct pm_evstat proc; /* the inherited set */
    struct pm_evstat sum;  /* Σ per-thread totals of the threads of that row */
};

struct pm_flagdef {
    uint32_t bit;
    const char *name;
    char hex[16]; /* name for a bit the file does not name */
    size_t cells; /* cells of the whole file carrying it */
};

struct pm_report {
    const struct pm_data *d;
    const char *path;
    size_t *order; /* [R] region rows in tree (preorder) order */
    size_t *pos;   /* [R] position of a row in `order` */
    struct pm_regstat *reg; /* [R] by row */
    struct pm_evstat *regev; /* [R*E] storage behind reg[].ev */
    struct pm_evstat *thr;   /* [T*E] */
    struct pm_rankstat *rank; /* [N*E] */
    size_t *rank_threads;    /* [N] threads compared with each rank row */
    char **evkey;            /* [E] unique JSON key per event */
    struct pm_flagdef flags[PM_MAX_FLAGS];
    size_t nflags;
    size_t cells;         /* cells with visits > 0 or flags != 0 */
    size_t flagged_cells; /* cells with flags != 0 */
};

static uint64_t pm_add_sat(uint64_t a, uint64_t b)
{
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

enum pm_vkind { PM_V_EXACT, PM_V_ESTIMATE, PM_V_NONE };

/* The count of one cell for one event (schema "Counting model"): the raw sum
 * scaled by Σenabled/Σrunning of the event's group. running = 0 < enabled
 * means the counters never ran: there is no estimate. running >= enabled
 * (always-on software events, or clock noise) needs no scaling. */
static enum pm_vkind pm_cell_value(uint64_t raw, uint64_t en, uint64_t run, double *v)
{
    if (run == 0 && en > 0)
        return PM_V_NONE;
    if (run >= en) {
        *v = (double)raw;
        return PM_V_EXACT;
    }
    *v = (double)raw * ((double)en / (double)run);
    return PM_V_ESTIMATE;
}

/* Running state while summing cells into a pm_evstat. */
struct pm_acc {
    size_t nvals, nspread;
    double spread_sum;
    uint64_t en, run;
};

static void pm_acc_add(struct pm_evstat *s, struct pm_acc *a, uint64_t raw, uint64_t en,
                       uint64_t run, int visited)
{
    double v = 0;
    enum pm_vkind k = pm_cell_value(raw, en, run, &v);

    s->raw = pm_add_sat(s->raw, raw);
    a->en = pm_add_sat(a->en, en);
    a->run = pm_add_sat(a->run, run);
    /* a thread that never entered the region is no evidence either way: its
     * exact 0 must not turn a region without estimate into a total of 0 */
    if (!visited && raw == 0 && en == 0)
        return;
    if (k == PM_V_NONE) {
        s->n_na++;
        return;
    }
    if (k == PM_V_ESTIMATE)
        s->estimate = 1;
    s->total += v;
    a->nvals++;
    if (!visited)
        return;
    if (a->nspread == 0 || v < s->min)
        s->min = v;
    if (a->nspread == 0 || v > s->max)
        s->max = v;
    a->spread_sum += v;
    a->nspread++;
}

static void pm_acc_finish(struct pm_evstat *s, const struct pm_acc *a)
{
    s->has_total = !(s->n_na > 0 && a->nvals == 0);
    s->has_spread = a->nspread > 0;
    if (s->has_spread)
        s->mean = a->spread_sum / (double)a->nspread;
    if (s->n_na > 0)
        s->untrusted = 1;
    if (a->en > 0) {
        s->has_share = 1;
        s->share = (double)a->run / (double)a->en;
    }
}

/* --------------------------------------------------------- aggregation */

static void pm_region_event(const struct pm_data *d, size_t r, size_t e, struct pm_evstat *s)
{
    size_t g = (size_t)d->events[e].group;
    struct pm_acc a = {0};

    memset(s, 0, sizeof *s);
    for (size_t t = 0; t < d->T; t++) {
        if (d->flags[pm_tr(d, t, r)] & PM_FLAG_LOST_GENERATION)
            s->untrusted = 1;
        pm_acc_add(s, &a, d->counts[pm_tre(d, t, r, e)], d->enabled_ns[pm_trg(d, t, r, g)],
                   d->running_ns[pm_trg(d, t, r, g)], d->visits[pm_tr(d, t, r)] > 0);
    }
    pm_acc_finish(s, &a);
}

static void pm_region_flags(struct pm_report *rep, size_t r, struct pm_regstat *s)
{
    const struct pm_data *d = rep->d;

    for (size_t t = 0; t < d->T; t++) {
        uint32_t f = d->flags[pm_tr(d, t, r)];

        for (size_t i = 0; i < rep->nflags; i++)
            if (f & rep->flags[i].bit)
                s->flag_cells[i]++;
    }
}

static void pm_region_stats(struct pm_report *rep, size_t r)
{
    const struct pm_data *d = rep->d;
    struct pm_regstat *s = &rep->reg[r];
    uint64_t wall_sum_visited = 0;

    s->ev = rep->regev + r * d->E;
    for (size_t t = 0; t < d->T; t++) {
        uint64_t v = d->visits[pm_tr(d, t, r)], w = d->wall_ns[pm_tr(d, t, r)];

        s->visits = pm_add_sat(s->visits, v);
        s->wall_total = pm_add_sat(s->wall_total, w);
        if (v == 0)
            continue;
        if (s->nvisited == 0 || w < s->wall_min)
            s->wall_min = w;
        if (s->nvisited == 0 || w > s->wall_max)
            s->wall_max = w;
        wall_sum_visited = pm_add_sat(wall_sum_visited, w);
        s->nvisited++;
    }
    if (s->nvisited)
        s->wall_mean = (double)wall_sum_visited / (double)s->nvisited;
    pm_region_flags(rep, r, s);
    for (size_t e = 0; e < d->E; e++)
        pm_region_event(d, r, e, &s->ev[e]);
}

static void pm_thread_stats(struct pm_report *rep)
{
    const struct pm_data *d = rep->d;

    for (size_t t = 0; t < d->T; t++)
        for (size_t e = 0; e < d->E; e++) {
            size_t g = (size_t)d->events[e].group;
            struct pm_evstat *s = &rep->thr[t * d->E + e];
            struct pm_acc a = {0};

            pm_acc_add(s, &a, d->thread_counts[t * d->E + e], d->thread_enabled_ns[t * d->G + g],
                       d->thread_running_ns[t * d->G + g], 1);
            pm_acc_finish(s, &a);
        }
}

/* Which threads a /rank row is compared with. The schema does not say how
 * rows map to ranks: one row (one file per process) is the whole process;
 * with several rows, row n is taken to be rank n. */
static int pm_rank_has_thread(const struct pm_data *d, size_t n, size_t t)
{
    return d->N == 1 || d->threads[t].rank == (int32_t)n;
}

static void pm_rank_stats(struct pm_report *rep)
{
    const struct pm_data *d = rep->d;

    for (size_t n = 0; n < d->N; n++) {
        for (size_t t = 0; t < d->T; t++)
            if (pm_rank_has_thread(d, n, t))
                rep->rank_threads[n]++;
        for (size_t e = 0; e < d->E; e++) {
            size_t g = (size_t)d->events[e].group;
            struct pm_rankstat *s = &rep->rank[n * d->E + e];
            struct pm_acc a = {0}, b = {0};

            pm_acc_add(&s->proc, &a, d->rank_counts[n * d->E + e], d->rank_enabled_ns[n * d->G + g],
                       d->rank_running_ns[n * d->G + g], 1);
            pm_acc_finish(&s->proc, &a);
            /* per-thread values are already scaled: sum them as they are */
            for (size_t t = 0; t < d->T; t++) {
                const struct pm_evstat *th = &rep->thr[t * d->E + e];

                if (!pm_rank_has_thread(d, n, t))
                    continue;
                if (!th->has_total) {
                    s->sum.n_na++;
                    continue;
                }
                s->sum.total += th->total;
                s->sum.estimate |= th->estimate;
                b.nvals++;
            }
            pm_acc_finish(&s->sum, &b);
        }
    }
}

/* Named flags (file or built-in) plus any bit that occurs without a name. */
static void pm_flag_table(struct pm_report *rep)
{
    const struct pm_data *d = rep->d;
    uint32_t seen = 0;

    for (size_t i = 0; i < d->T * d->R; i++)
        seen |= d->flags[i];
    for (unsigned b = 0; b < 32; b++) {
        uint32_t bit = (uint32_t)1 << b;
        struct pm_flagdef *f = &rep->flags[rep->nflags];
        const char *name = NULL;

        for (size_t k = 0; k < d->nflagnames; k++)
            if (d->flagnames[k].bit == bit)
                name = d->flagnames[k].name;
        if (!name && !(seen & bit))
            continue;
        memset(f, 0, sizeof *f);
        f->bit = bit;
        snprintf(f->hex, sizeof f->hex, "0x%" PRIx32, bit);
        f->name = name ? name : f->hex;
        rep->nflags++;
    }
    for (size_t i = 0; i < d->T * d->R; i++) {
        if (d->visits[i] > 0 || d->flags[i] != 0)
            rep->cells++;
        if (d->flags[i] != 0)
            rep->flagged_cells++;
        for (size_t k = 0; k < rep->nflags; k++)
            if (d->flags[i] & rep->flags[k].bit)
                rep->flags[k].cells++;
    }
}

/* Preorder walk over first-child / next-sibling links: children follow
 * their parent, siblings keep file (first-seen) order. The loader
 * guarantees parent < child, so the walk terminates. */
static int pm_tree_order(struct pm_report *rep)
{
    const struct pm_data *d = rep->d;
    size_t R = d->R, roots = PM_NONE, n = 0, node;
    size_t *child = malloc((R ? R : 1) * sizeof *child);
    size_t *next = malloc((R ? R : 1) * sizeof *next);

    if (!child || !next) {
        free(child);
        free(next);
        return -1;
    }
    for (size_t r = 0; r < R; r++)
        child[r] = next[r] = PM_NONE;
    for (size_t r = R; r-- > 0;) {
        size_t *head = d->regions[r].parent < 0 ? &roots : &child[d->regions[r].parent];
        next[r] = *head;
        *head = r;
    }
    node = roots;
    while (node != PM_NONE) {
        rep->order[n] = node;
        rep->pos[node] = n++;
        if (child[node] != PM_NONE) {
            node = child[node];
            continue;
        }
        while (node != PM_NONE && next[node] == PM_NONE)
            node = d->regions[node].parent < 0 ? PM_NONE : (size_t)d->regions[node].parent;
        if (node != PM_NONE)
            node = next[node];
    }
    free(child);
    free(next);
    return 0;
}

static char *pm_dup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = malloc(n);

    if (p)
        memcpy(p, s, n);
    return p;
}

/* JSON object keys must be unique: a repeated event name gets "#row". */
static int pm_event_keys(struct pm_report *rep)
{
    const struct pm_data *d = rep->d;

    for (size_t e = 0; e < d->E; e++) {
        int dup = 0;

        for (size_t k = 0; k < e; k++)
            if (strcmp(d->events[k].name, d->events[e].name) == 0)
                dup = 1;
        if (!dup) {
            rep->evkey[e] = pm_dup(d->events[e].name);
        } else {
            size_t n = strlen(d->events[e].name) + 24;
            if ((rep->evkey[e] = malloc(n)))
                snprintf(rep->evkey[e], n, "%s#%zu", d->events[e].name, e);
        }
        if (!rep->evkey[e])
            return -1;
    }
    return 0;
}

static void pm_report_free(struct pm_report *rep)
{
    if (rep->evkey)
        for (size_t e = 0; e < rep->d->E; e++)
            free(rep->evkey[e]);
    free(rep->evkey);
    free(rep->order);
    free(rep->pos);
    free(rep->reg);
    free(rep->regev);
    free(rep->thr);
    free(rep->rank);
    free(rep->rank_threads);
}

static void *pm_calloc2(size_t a, size_t b, size_t size)
{
    if (a != 0 && b > SIZE_MAX / a)
        return NULL;
    return calloc(a * b != 0 ? a * b : 1, size);
}

static int pm_report_build(struct pm_report *rep, const struct pm_data *d, const char *path)
{
    memset(rep, 0, sizeof *rep);
    rep->d = d;
    rep->path = path;
    rep->order = pm_calloc2(d->R, 1, sizeof *rep->order);
    rep->pos = pm_calloc2(d->R, 1, sizeof *rep->pos);
    rep->reg = pm_calloc2(d->R, 1, sizeof *rep->reg);
    rep->regev = pm_calloc2(d->R, d->E, sizeof *rep->regev);
    rep->thr = pm_calloc2(d->T, d->E, sizeof *rep->thr);
    rep->rank = pm_calloc2(d->N, d->E, sizeof *rep->rank);
    rep->rank_threads = pm_calloc2(d->N, 1, sizeof *rep->rank_threads);
    rep->evkey = pm_calloc2(d->E, 1, sizeof *rep->evkey);
    if (!rep->order || !rep->pos || !rep->reg || !rep->regev || !rep->thr || !rep->rank ||
        !rep->rank_threads || !rep->evkey || pm_tree_order(rep) < 0 || pm_event_keys(rep) < 0)
        return -1;
    pm_flag_table(rep);
    for (size_t r = 0; r < d->R; r++)
        pm_region_stats(rep, r);
    pm_thread_stats(rep);
    pm_rank_stats(rep);
    return 0;
}

/* ================================================================ UTF-8 */

#define PM_BAD 0xFFFFFFFFu /* an undecodable byte */

/* Decode one character. An ill-formed sequence yields PM_BAD and consumes
 * its maximal valid prefix (at least one byte): the Unicode "maximal
 * subpart" practice, the same as Python's errors="replace". */
static size_t pm_utf8_decode(const unsigned char *s, size_t n, uint32_t *cp)
{
    unsigned lead = s[0], lo = 0x80, hi = 0xBF;
    size_t len, i;
    uint32_t c;

    *cp = PM_BAD;
    if (lead < 0x80) {
        *cp = lead;
        return 1;
    }
    if (lead >= 0xC2 && lead <= 0xDF)
        len = 2, c = lead & 0x1F;
    else if (lead >= 0xE0 && lead <= 0xEF)
        len = 3, c = lead & 0x0F;
    else if (lead >= 0xF0 && lead <= 0xF4)
        len = 4, c = lead & 0x07;
    else
        return 1;
    /* the second byte's range excludes overlongs, surrogates and > U+10FFFF */
    if (lead == 0xE0)
        lo = 0xA0;
    else if (lead == 0xED)
        hi = 0x9F;
    else if (lead == 0xF0)
        lo = 0x90;
    else if (lead == 0xF4)
        hi = 0x8F;
    for (i = 1; i < len; i++) {
        if (i >= n || s[i] < lo || s[i] > hi)
            return i;
        c = (c << 6) | (s[i] & 0x3F);
        lo = 0x80;
        hi = 0xBF;
    }
    *cp = c;
    return len;
}

/* Characters a terminal must not receive from user data: C0/C1 controls,
 * DEL, line separators and bidirectional overrides. */
static int pm_is_control(uint32_t cp)
{
    return cp < 0x20 || (cp >= 0x7F && cp <= 0x9F) || cp == 0x2028 || cp == 0x2029 ||
           (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069);
}

/* ================================================================= text */

enum pm_align { PM_LEFT, PM_RIGHT, PM_LAST };

static void pm_spaces(FILE *out, size_t n)
{
    while (n-- > 0)
        putc(' ', out);
}

/* Columns of s[0..n) once cleaned: one per character (wide East Asian
 * characters are counted as one; good enough for names and units). */
static size_t pm_text_cols(const char *s, size_t n)
{
    size_t i = 0, cols = 0;
    uint32_t cp;

    while (i < n) {
        i += pm_utf8_decode((const unsigned char *)s + i, n - i, &cp);
        cols++;
    }
    return cols;
}

/* Write at most `cols` columns of s[0..n) with controls and bad bytes as '?'. */
static void pm_text_put(FILE *out, const char *s, size_t n, size_t cols)
{
    size_t i = 0, c = 0;

    while (i < n && c < cols) {
        uint32_t cp;
        size_t len = pm_utf8_decode((const unsigned char *)s + i, n - i, &cp);

        if (cp == PM_BAD || pm_is_control(cp))
            putc('?', out);
        else
            fwrite(s + i, 1, len, out);
        i += len;
        c++;
    }
}

/* One table cell of exactly `width` columns (PM_LAST: no trailing padding);
 * text too long is cut and ends in '…'. */
static void pm_text_field(FILE *out, const char *s, size_t width, enum pm_align align)
{
    size_t n = strlen(s), cols = pm_text_cols(s, n);

    if (cols > width) {
        pm_text_put(out, s, n, width ? width - 1 : 0);
        if (width)
            fputs("\xE2\x80\xA6", out);
        return;
    }
    if (align == PM_RIGHT)
        pm_spaces(out, width - cols);
    pm_text_put(out, s, n, cols);
    if (align == PM_LEFT)
        pm_spaces(out, width - cols);
}

/* Bytes of the next line of at most `width` columns, broken at the last
 * space when there is one. */
static size_t pm_wrap_len(const char *s, size_t n, size_t width)
{
    size_t i = 0, c = 0, brk = 0;
    uint32_t cp;

    while (i < n && c < width) {
        if (s[i] == ' ')
            brk = i;
        i += pm_utf8_decode((const unsigned char *)s + i, n - i, &cp);
        c++;
    }
    if (i >= n || s[i] == ' ')
        return i;
    return brk > 0 ? brk : i;
}

/* Print s from column `indent` (the cursor is already there), wrapped at
 * PM_TEXT_WIDTH with continuation lines indented to the same column. */
static void pm_text_wrap(FILE *out, const char *s, size_t indent)
{
    size_t width = indent + 10 < PM_TEXT_WIDTH ? PM_TEXT_WIDTH - indent : 10;
    size_t n = strlen(s);
    int first = 1;

    while (first || n > 0) {
        size_t take = pm_wrap_len(s, n, width), shown = take;

        while (shown > 0 && s[shown - 1] == ' ')
            shown--;
        if (!first)
            pm_spaces(out, indent);
        pm_text_put(out, s, shown, width);
        putc('\n', out);
        s += take;
        n -= take;
        while (n > 0 && *s == ' ')
            s++, n--;
        first = 0;
    }
}

static void pm_text_label(FILE *out, const char *label, const char *value)
{
    fprintf(out, "%-10s", label);
    pm_text_wrap(out, value, 10);
}

/* ------------------------------------------------------- human units */

/* Mantissa precision so that a number takes at most 4 characters. */
static int pm_prec(double a)
{
    return a < 9.995 ? 2 : a < 99.95 ? 1 : 0;
}

static void pm_fmt_count(char *buf, size_t len, double v)
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
    snprintf(buf, len, "%.*f%s", pm_prec(a), v, suffix[i]);
}

static void pm_fmt_time(char *buf, size_t len, double ns)
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
    snprintf(buf, len, "%.*f %s", a >= 1000 ? 0 : pm_prec(a), ns, unit[i]);
}

/* Software clock events (task-clock, cpu-clock) count nanoseconds. */
static int pm_event_is_time(const struct pm_event *ev)
{
    return ev->type == 1 /* PERF_TYPE_SOFTWARE */ &&
           (ev->config == 0 /* CPU_CLOCK */ || ev->config == 1 /* TASK_CLOCK */);
}

/* A count cell: "n/a" without an estimate, else the value with the
 * markers ~ (estimate) and ! (incomplete); clock events as durations. */
static void pm_fmt_value(char *buf, size_t len, int has, double v, const struct pm_evstat *s,
                         int is_time)
{
    char num[32];

    if (!has) {
        snprintf(buf, len, "n/a");
        return;
    }
    if (is_time)
        pm_fmt_time(num, sizeof num, v);
    else
        pm_fmt_count(num, sizeof num, v);
    snprintf(buf, len, "%s%s%s", num, s->estimate ? "~" : "", s->untrusted ? "!" : "");
}

static void pm_fmt_share(char *buf, size_t len, const struct pm_evstat *s)
{
    if (!s->has_share)
        snprintf(buf, len, "-");
    else if (s->share >= 1.0)
        snprintf(buf, len, "100%%");
    else /* floor: 99.96% must not show as 100% */
        snprintf(buf, len, "%.1f%%", floor(s->share * 1000.0) / 10.0);
}

/* ------------------------------------------------------------ header */

static void pm_flag_summary(const struct pm_report *rep, char *buf, size_t len)
{
    size_t used;
    int n;

    if (rep->flagged_cells == 0) {
        snprintf(buf, len, "all numbers clean: no cell carries a data-quality flag");
        return;
    }
    n = snprintf(buf, len, "%zu of %zu cells (thread x region) carry a data-quality flag:",
                 rep->flagged_cells, rep->cells);
    used = n > 0 ? (size_t)n : 0;
    for (size_t i = 0; i < rep->nflags && used < len; i++) {
        if (rep->flags[i].cells == 0)
            continue;
        n = snprintf(buf + used, len - used, " %s %zu,", rep->flags[i].name, rep->flags[i].cells);
        used += n > 0 ? (size_t)n : 0;
    }
    if (used < len && used > 0 && buf[used - 1] == ',')
        buf[used - 1] = '\0';
}

static void pm_text_messages(FILE *out, const struct pm_data *d)
{
    size_t shown = d->M < PM_TEXT_MESSAGES ? d->M : PM_TEXT_MESSAGES;

    if (d->M == 0)
        return;
    fprintf(out, "\nmessages (%zu)\n", d->M);
    for (size_t i = 0; i < shown; i++) {
        fputs("  ", out);
        pm_text_wrap(out, d->messages[i], 4);
    }
    if (d->M > shown)
        fprintf(out, "  ... %zu more\n", d->M - shown);
}

static void pm_text_header(FILE *out, const struct pm_report *rep)
{
    const struct pm_data *d = rep->d;
    char buf[1024], dur[32];
    size_t used = 0;

    fputs("perfmark report: ", out);
    pm_text_wrap(out, rep->path, 17);
    pm_text_label(out, "command", d->command);
    snprintf(buf, sizeof buf, "%s   pid %" PRId64 "   perfmark %s", d->host, d->pid,
             d->perfmark_version[0] ? d->perfmark_version : "?");
    pm_text_label(out, "host", buf);
    pm_fmt_time(dur, sizeof dur, (double)d->duration_ns);
    snprintf(buf, sizeof buf, "%s   duration %s   clock %s",
             d->start_time[0] ? d->start_time : "?", dur, d->clock[0] ? d->clock : "?");
    pm_text_label(out, "started", buf);
    used = (size_t)snprintf(buf, sizeof buf, "requested %s; measured ",
                            d->events_requested[0] ? d->events_requested : "?");
    for (size_t e = 0; e < d->E && used < sizeof buf; e++)
        used += (size_t)snprintf(buf + used, sizeof buf - used, "%s%s", e ? ", " : "",
                                 d->events[e].name);
    if (used < sizeof buf)
        snprintf(buf + used, sizeof buf - used, "%s (group %s, %zu kernel group%s)",
                 d->E ? "" : "nothing", d->event_group[0] ? d->event_group : "?", d->G,
                 d->G == 1 ? "" : "s");
    pm_text_label(out, "events", buf);
    if (d->fallback[0])
        pm_text_label(out, "fallback", d->fallback);
    if (d->partial)
        pm_text_label(out, "PARTIAL", "written by an emergency dump: data up to that moment only");
    pm_flag_summary(rep, buf, sizeof buf);
    pm_text_label(out, "flags", buf);
    pm_text_messages(out, d);
}

/* ------------------------------------------------------------ tables */

#define PM_NAME_W 36
#define PM_FLAGS_COL 72 /* where the flags column starts in the region table */

static void pm_text_region_name(FILE *out, const struct pm_region *g)
{
    size_t indent = (size_t)(g->depth < 8 ? g->depth : 8) * 2;

    pm_spaces(out, indent);
    pm_text_field(out, g->name[0] ? g->name : "\"\"", PM_NAME_W - indent, PM_LEFT);
}

static void pm_region_flag_list(const struct pm_report *rep, const struct pm_regstat *s,
                                const char *sep, char *buf, size_t len)
{
    size_t used = 0;

    buf[0] = '\0';
    for (size_t i = 0; i < rep->nflags && used < len; i++) {
        int n;

        if (s->flag_cells[i] == 0)
            continue;
        n = snprintf(buf + used, len - used, "%s%s:%zu", used ? sep : "", rep->flags[i].name,
                     s->flag_cells[i]);
        used += n > 0 ? (size_t)n : 0;
    }
}

static void pm_text_regions(FILE *out, const struct pm_report *rep)
{
    const struct pm_data *d = rep->d;
    char a[32], b[32], c[32], flags[1024];

    fprintf(out, "\nRegions: %zu, tree by path; %zu thread%s; wall time is inclusive\n", d->R,
            d->T, d->T == 1 ? "" : "s");
    pm_text_field(out, "region", PM_NAME_W, PM_LEFT);
    fprintf(out, " %9s %11s %11s  flags (cells)\n", "visits", "wall total", "max/thread");
    if (d->R == 0)
        fputs("(no region was recorded)\n", out);
    for (size_t i = 0; i < d->R; i++) {
        size_t r = rep->order[i];
        const struct pm_regstat *s = &rep->reg[r];

        pm_text_region_name(out, &d->regions[r]);
        pm_fmt_count(a, sizeof a, (double)s->visits);
        pm_fmt_time(b, sizeof b, (double)s->wall_total);
        if (s->nvisited)
            pm_fmt_time(c, sizeof c, (double)s->wall_max);
        else
            snprintf(c, sizeof c, "-");
        fprintf(out, " %9s ", a);
        pm_text_field(out, b, 11, PM_RIGHT);
        putc(' ', out);
        pm_text_field(out, c, 11, PM_RIGHT);
        pm_region_flag_list(rep, s, " ", flags, sizeof flags);
        if (flags[0]) {
            fputs("  ", out);
            pm_text_wrap(out, flags, PM_FLAGS_COL);
        } else {
            putc('\n', out);
        }
    }
}

static void pm_text_event(FILE *out, const struct pm_report *rep, size_t e)
{
    const struct pm_data *d = rep->d;
    static const char *const head[] = {"total", "min/thread", "mean/thread", "max/thread"};
    char buf[80];

    fputs("\nEvent ", out);
    pm_text_field(out, d->events[e].name, 30, PM_LAST);
    fputs(" (", out);
    /* the libpfm4 name tells apart events perfmark names alike */
    if (d->events[e].pfm_name[0] && strcmp(d->events[e].pfm_name, d->events[e].name) != 0) {
        pm_text_field(out, d->events[e].pfm_name, 45, PM_LAST);
        fputs(", ", out);
    }
    fprintf(out, "kernel group %d)\n", (int)d->events[e].group);
    pm_text_field(out, "region", PM_NAME_W, PM_LEFT);
    for (int k = 0; k < 4; k++)
        fprintf(out, " %11s", head[k]);
    fprintf(out, " %7s\n", "counted");
    for (size_t i = 0; i < d->R; i++) {
        size_t r = rep->order[i];
        const struct pm_evstat *s = &rep->reg[r].ev[e];
        const double v[4] = {s->total, s->min, s->mean, s->max};
        const int has[4] = {s->has_total, s->has_spread, s->has_spread, s->has_spread};

        pm_text_region_name(out, &d->regions[r]);
        for (int k = 0; k < 4; k++) {
            pm_fmt_value(buf, sizeof buf, has[k], v[k], s, pm_event_is_time(&d->events[e]));
            putc(' ', out);
            pm_text_field(out, buf, 11, PM_RIGHT);
        }
        pm_fmt_share(buf, sizeof buf, s);
        fprintf(out, " %7s\n", buf);
    }
}

static void pm_text_threads(FILE *out, const struct pm_report *rep)
{
    const struct pm_data *d = rep->d;
    char cpu[40], wall[32];

    fprintf(out, "\nThreads: %zu (totals from first sight until exit or write)\n", d->T);
    fprintf(out, "%5s %6s %10s  %-16s %11s %6s %5s %11s\n", "rank", "thread", "tid", "host",
            "cpu", "exited", "open", "wall");
    for (size_t t = 0; t < d->T; t++) {
        const struct pm_thread *th = &d->threads[t];

        snprintf(cpu, sizeof cpu, "%d\xE2\x86\x92%d", (int)th->cpu_first, (int)th->cpu_last);
        pm_fmt_time(wall, sizeof wall, (double)d->thread_wall_ns[t]);
        fprintf(out, "%5d %6d %10" PRId64 "  ", (int)th->rank, (int)th->thread, th->tid);
        pm_text_field(out, th->host, 16, PM_LEFT);
        putc(' ', out);
        pm_text_field(out, cpu, 11, PM_RIGHT);
        fprintf(out, " %6s %5d ", th->exited ? "yes" : "no", (int)th->open_at_end);
        pm_text_field(out, wall, 11, PM_RIGHT);
        putc('\n', out);
    }
}

#define PM_THR_EV_PER_TABLE 6

static void pm_text_thread_events(FILE *out, const struct pm_report *rep)
{
    const struct pm_data *d = rep->d;
    char buf[64];

    for (size_t e0 = 0; e0 < d->E; e0 += PM_THR_EV_PER_TABLE) {
        size_t e1 = e0 + PM_THR_EV_PER_TABLE < d->E ? e0 + PM_THR_EV_PER_TABLE : d->E;

        fprintf(out, "\nThread totals per event%s\n", d->E > PM_THR_EV_PER_TABLE ? " (cont.)" : "");
        fprintf(out, "%5s %6s", "rank", "thread");
        for (size_t e = e0; e < e1; e++) {
            putc(' ', out);
            pm_text_field(out, d->events[e].name, 13, PM_RIGHT);
        }
        putc('\n', out);
        for (size_t t = 0; t < d->T; t++) {
            fprintf(out, "%5d %6d", (int)d->threads[t].rank, (int)d->threads[t].thread);
            for (size_t e = e0; e < e1; e++) {
                const struct pm_evstat *s = &rep->thr[t * d->E + e];

                pm_fmt_value(buf, sizeof buf, s->has_total, s->total, s,
                             pm_event_is_time(&d->events[e]));
                putc(' ', out);
                pm_text_field(out, buf, 13, PM_RIGHT);
            }
            putc('\n', out);
        }
    }
}

static void pm_text_rank_row(FILE *out, const struct pm_report *rep, size_t n)
{
    const struct pm_data *d = rep->d;
    char p[48], s[48], diff[48];

    if (d->N > 1)
        fprintf(out, "rank row %zu (%zu thread%s of rank %zu)\n", n, rep->rank_threads[n],
                rep->rank_threads[n] == 1 ? "" : "s", n);
    pm_text_field(out, "event", PM_NAME_W, PM_LEFT);
    fprintf(out, " %13s %13s %13s\n", "process", "threads sum", "difference");
    for (size_t e = 0; e < d->E; e++) {
        const struct pm_rankstat *rs = &rep->rank[n * d->E + e];

        int is_time = pm_event_is_time(&d->events[e]);
        pm_fmt_value(p, sizeof p, rs->proc.has_total, rs->proc.total, &rs->proc, is_time);
        pm_fmt_value(s, sizeof s, rs->sum.has_total, rs->sum.total, &rs->sum, is_time);
        if (rs->proc.has_total && rs->sum.has_total) {
            if (is_time)
                pm_fmt_time(diff, sizeof diff, rs->proc.total - rs->sum.total);
            else
                pm_fmt_count(diff, sizeof diff, rs->proc.total - rs->sum.total);
            if (rs->proc.estimate || rs->sum.estimate)
                strcat(diff, "~");
        } else {
            snprintf(diff, sizeof diff, "n/a");
        }
        pm_text_field(out, d->events[e].name, PM_NAME_W, PM_LEFT);
        putc(' ', out);
        pm_text_field(out, p, 13, PM_RIGHT);
        putc(' ', out);
        pm_text_field(out, s, 13, PM_RIGHT);
        putc(' ', out);
        pm_text_field(out, diff, 13, PM_RIGHT);
        putc('\n', out);
    }
}

static void pm_text_rank(FILE *out, const struct pm_report *rep)
{
    if (rep->d->N == 0)
        return;
    fputs("\nProcess totals (inherited counter set) vs. the sum of per-thread totals\n", out);
    for (size_t n = 0; n < rep->d->N; n++)
        pm_text_rank_row(out, rep, n);
    fputs("difference = ", out);
    pm_text_wrap(out, pm_unseen_label, 13);
}

/* --------------------------------------------------------- footnotes */

static const char *pm_flag_meaning(uint32_t bit)
{
    switch (bit) {
    case PM_FLAG_MULTIPLEXED: return "counts are a sample, scaled by enabled/running (marked ~)";
    case PM_FLAG_NOT_COUNTED: return "counters never ran in some visit: no estimate for it";
    case PM_FLAG_LOST_GENERATION:
        return "counter set reopened during a visit: its counts are missing (marked !)";
    case PM_FLAG_MIGRATED: return "thread changed CPU during a visit (per-thread counts are fine)";
    case PM_FLAG_UNBALANCED:
        return "unmatched begin/end, or closed by perfmark at exit (counted up to then)";
    case PM_FLAG_SHORT: return "too few slots (TopDown)";
    case PM_FLAG_PARTIAL: return "written by an emergency dump";
    }
    return "unknown to this reader";
}

static void pm_text_notes(FILE *out, const struct pm_report *rep)
{
    const struct pm_data *d = rep->d;
    int est = 0, na = 0, bad = 0;

    for (size_t i = 0; i < d->R * d->E; i++) {
        est |= rep->regev[i].estimate;
        na |= !rep->regev[i].has_total || !rep->regev[i].has_spread;
        bad |= rep->regev[i].untrusted;
    }
    for (size_t i = 0; i < d->T * d->E; i++) {
        est |= rep->thr[i].estimate;
        na |= !rep->thr[i].has_total;
    }
    if (!est && !na && !bad && rep->flagged_cells == 0)
        return;
    fputs("\nNotes\n", out);
    if (rep->flagged_cells)
        fputs("  flags (cells): NAME:n = the cells of n threads carry the flag\n", out);
    if (est) {
        fputs("  ~    ", out);
        pm_text_wrap(out, "estimate: the counters were multiplexed; each thread's count is "
                          "scaled by enabled/running time. 'counted' is the share of time "
                          "actually counted (sum running / sum enabled).", 7);
    }
    if (na) {
        fputs("  n/a  ", out);
        pm_text_wrap(out, "no value: the counters never ran while enabled (NOT_COUNTED), or "
                          "no thread visited the region", 7);
    }
    if (bad) {
        fputs("  !    ", out);
        pm_text_wrap(out, "incomplete, do not trust: some visits lost their counter set "
                          "(LOST_GENERATION) or some threads have no estimate; the value "
                          "undercounts", 7);
    }
    for (size_t i = 0; i < rep->nflags; i++) {
        if (rep->flags[i].cells == 0)
            continue;
        fputs("  ", out);
        pm_text_field(out, rep->flags[i].name, 16, PM_LEFT);
        putc(' ', out);
        pm_text_wrap(out, pm_flag_meaning(rep->flags[i].bit), 19);
    }
}

static void pm_render_text(FILE *out, const struct pm_report *rep)
{
    pm_text_header(out, rep);
    pm_text_regions(out, rep);
    for (size_t e = 0; e < rep->d->E && rep->d->R > 0; e++)
        pm_text_event(out, rep, e);
    pm_text_threads(out, rep);
    if (rep->d->E)
        pm_text_thread_events(out, rep);
    pm_text_rank(out, rep);
    pm_text_notes(out, rep);
}

/* ================================================================= JSON */

static void pm_json_str(FILE *out, const char *s)
{
    size_t i = 0, n = strlen(s);

    putc('"', out);
    while (i < n) {
        uint32_t cp;
        size_t len = pm_utf8_decode((const unsigned char *)s + i, n - i, &cp);

        if (cp == PM_BAD)
            fputs("\\ufffd", out);
        else if (cp == '"' || cp == '\\')
            fprintf(out, "\\%c", (char)cp);
        else if (cp == '\n')
            fputs("\\n", out);
        else if (cp == '\r')
            fputs("\\r", out);
        else if (cp == '\t')
            fputs("\\t", out);
        else if (cp < 0x20 || cp == 0x7F || cp == 0x2028 || cp == 0x2029)
            fprintf(out, "\\u%04" PRIx32, cp);
        else
            fwrite(s + i, 1, len, out);
        i += len;
    }
    putc('"', out);
}

/* Doubles with round-trip precision; no value (or not finite) is null. */
static void pm_json_num(FILE *out, int has, double v)
{
    if (has && isfinite(v))
        fprintf(out, "%.17g", v);
    else
        fputs("null", out);
}

static void pm_json_key(FILE *out, const char *key)
{
    pm_json_str(out, key);
    putc(':', out);
}

static void pm_json_evstat(FILE *out, const struct pm_evstat *s, int spread)
{
    fprintf(out, "{\"raw\":%" PRIu64 ",\"total\":", s->raw);
    pm_json_num(out, s->has_total, s->total);
    if (spread) {
        fputs(",\"min\":", out);
        pm_json_num(out, s->has_spread, s->min);
        fputs(",\"mean\":", out);
        pm_json_num(out, s->has_spread, s->mean);
        fputs(",\"max\":", out);
        pm_json_num(out, s->has_spread, s->max);
    }
    fprintf(out, ",\"estimate\":%s,\"counted_share\":", s->estimate ? "true" : "false");
    pm_json_num(out, s->has_share, s->share);
    if (spread)
        fprintf(out, ",\"untrusted\":%s,\"threads_na\":%zu", s->untrusted ? "true" : "false",
                s->n_na);
    putc('}', out);
}

static void pm_json_flags(FILE *out, const struct pm_report *rep, const size_t *cells)
{
    int first = 1;

    putc('{', out);
    for (size_t i = 0; i < rep->nflags; i++) {
        if (!cells[i])
            continue;
        if (!first)
            putc(',', out);
        pm_json_key(out, rep->flags[i].name);
        fprintf(out, "%zu", cells[i]);
        first = 0;
    }
    putc('}', out);
}

static void pm_json_region(FILE *out, const struct pm_report *rep, size_t i)
{
    const struct pm_data *d = rep->d;
    size_t r = rep->order[i];
    const struct pm_region *g = &d->regions[r];
    const struct pm_regstat *s = &rep->reg[r];

    fprintf(out, "    {\"index\":%zu,\"row\":%zu,\"path\":", i, r);
    pm_json_str(out, g->path);
    fputs(",\"name\":", out);
    pm_json_str(out, g->name);
    fprintf(out, ",\"parent\":%lld,\"depth\":%d,\"kind\":",
            g->parent < 0 ? -1LL : (long long)rep->pos[g->parent], (int)g->depth);
    pm_json_str(out, g->kind);
    fprintf(out, ",\"visits\":%" PRIu64 ",\"threads_visited\":%zu", s->visits, s->nvisited);
    fprintf(out, ",\"wall_ns\":{\"total\":%" PRIu64, s->wall_total);
    if (s->nvisited)
        fprintf(out, ",\"min\":%" PRIu64 ",\"mean\":%.17g,\"max\":%" PRIu64 "}", s->wall_min,
                s->wall_mean, s->wall_max);
    else
        fputs(",\"min\":null,\"mean\":null,\"max\":null}", out);
    fputs(",\"events\":{", out);
    for (size_t e = 0; e < d->E; e++) {
        if (e)
            putc(',', out);
        pm_json_key(out, rep->evkey[e]);
        pm_json_evstat(out, &s->ev[e], 1);
    }
    fputs("},\"flags\":", out);
    pm_json_flags(out, rep, s->flag_cells);
    fputs("}", out);
}

static void pm_json_thread(FILE *out, const struct pm_report *rep, size_t t)
{
    const struct pm_data *d = rep->d;
    const struct pm_thread *th = &d->threads[t];

    fprintf(out, "    {\"index\":%zu,\"rank\":%d,\"thread\":%d,\"pid\":%" PRId64 ",\"tid\":%" PRId64
                 ",\"host\":",
            t, (int)th->rank, (int)th->thread, th->pid, th->tid);
    pm_json_str(out, th->host);
    fprintf(out, ",\"cpu_first\":%d,\"cpu_last\":%d,\"exited\":%s,\"open_at_end\":%d",
            (int)th->cpu_first, (int)th->cpu_last, th->exited ? "true" : "false",
            (int)th->open_at_end);
    fprintf(out, ",\"wall_ns\":%" PRIu64 ",\"events\":{", d->thread_wall_ns[t]);
    for (size_t e = 0; e < d->E; e++) {
        if (e)
            putc(',', out);
        pm_json_key(out, rep->evkey[e]);
        pm_json_evstat(out, &rep->thr[t * d->E + e], 0);
    }
    fputs("}}", out);
}

static void pm_json_rank_event(FILE *out, const struct pm_rankstat *rs)
{
    int diff = rs->proc.has_total && rs->sum.has_total;

    fprintf(out, "{\"process_raw\":%" PRIu64 ",\"process\":", rs->proc.raw);
    pm_json_num(out, rs->proc.has_total, rs->proc.total);
    fprintf(out, ",\"process_estimate\":%s,\"counted_share\":",
            rs->proc.estimate ? "true" : "false");
    pm_json_num(out, rs->proc.has_share, rs->proc.share);
    fputs(",\"threads_sum\":", out);
    pm_json_num(out, rs->sum.has_total, rs->sum.total);
    fprintf(out, ",\"threads_estimate\":%s,\"threads_na\":%zu,\"difference\":",
            rs->sum.estimate ? "true" : "false", rs->sum.n_na);
    pm_json_num(out, diff, rs->proc.total - rs->sum.total);
    putc('}', out);
}

static void pm_json_rank(FILE *out, const struct pm_report *rep, size_t n)
{
    const struct pm_data *d = rep->d;
    int first = 1;

    fprintf(out, "    {\"row\":%zu,\"threads\":[", n);
    for (size_t t = 0; t < d->T; t++)
        if (pm_rank_has_thread(d, n, t)) {
            fprintf(out, "%s%zu", first ? "" : ",", t);
            first = 0;
        }
    fputs("],\"events\":{", out);
    for (size_t e = 0; e < d->E; e++) {
        if (e)
            putc(',', out);
        pm_json_key(out, rep->evkey[e]);
        pm_json_rank_event(out, &rep->rank[n * d->E + e]);
    }
    fputs("}}", out);
}

static void pm_json_head(FILE *out, const struct pm_report *rep)
{
    const struct pm_data *d = rep->d;
    const struct {
        const char *key;
        const char *val;
    } strs[] = {
        {"perfmark_version", d->perfmark_version}, {"command", d->command},
        {"host", d->host}, {"start_time", d->start_time}, {"clock", d->clock},
        {"events_requested", d->events_requested}, {"event_group", d->event_group},
        {"fallback", d->fallback},
    };

    fprintf(out, "{\n  \"schema_version\":%d,\n  \"json_format\":1,\n  \"file\":",
            (int)d->schema_version);
    pm_json_str(out, rep->path);
    for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++) {
        fprintf(out, ",\n  ");
        pm_json_key(out, strs[i].key);
        pm_json_str(out, strs[i].val);
    }
    fprintf(out, ",\n  \"pid\":%" PRId64 ",\n  \"duration_ns\":%" PRIu64
                 ",\n  \"kernel_groups\":%d,\n  \"bind_cpu\":%d,\n  \"partial\":%s",
            d->pid, d->duration_ns, (int)d->kernel_groups, (int)d->bind_cpu,
            d->partial ? "true" : "false");
    fputs(",\n  \"events_measured\":[", out);
    for (size_t e = 0; e < d->E; e++) {
        if (e)
            putc(',', out);
        pm_json_str(out, d->events[e].name);
    }
    fputs("],\n  \"events\":[", out);
    for (size_t e = 0; e < d->E; e++) {
        fputs(e ? ",\n    {\"name\":" : "\n    {\"name\":", out);
        pm_json_str(out, d->events[e].name);
        fputs(",\"key\":", out);
        pm_json_str(out, rep->evkey[e]);
        fputs(",\"pfm_name\":", out);
        pm_json_str(out, d->events[e].pfm_name);
        fprintf(out, ",\"group\":%d}", (int)d->events[e].group);
    }
    fputs("],\n", out);
}

static void pm_json_summary(FILE *out, const struct pm_report *rep)
{
    const struct pm_data *d = rep->d;

    fprintf(out, "  \"threads_count\":%zu,\n  \"cells\":%zu,\n  \"flagged_cells\":%zu,\n", d->T,
            rep->cells, rep->flagged_cells);
    fputs("  \"flags_summary\":{", out);
    for (size_t i = 0; i < rep->nflags; i++) {
        if (i)
            putc(',', out);
        pm_json_key(out, rep->flags[i].name);
        fprintf(out, "%zu", rep->flags[i].cells);
    }
    fputs("},\n  \"messages\":[", out);
    for (size_t i = 0; i < d->M; i++) {
        fputs(i ? ",\n    " : "\n    ", out);
        pm_json_str(out, d->messages[i]);
    }
    fputs("],\n", out);
}

static void pm_render_json(FILE *out, const struct pm_report *rep)
{
    const struct pm_data *d = rep->d;

    pm_json_head(out, rep);
    pm_json_summary(out, rep);
    fputs("  \"regions\":[", out);
    for (size_t i = 0; i < d->R; i++) {
        fputs(i ? ",\n" : "\n", out);
        pm_json_region(out, rep, i);
    }
    fputs("],\n  \"threads\":[", out);
    for (size_t t = 0; t < d->T; t++) {
        fputs(t ? ",\n" : "\n", out);
        pm_json_thread(out, rep, t);
    }
    fputs("],\n  \"rank_totals\":[", out);
    for (size_t n = 0; n < d->N; n++) {
        fputs(n ? ",\n" : "\n", out);
        pm_json_rank(out, rep, n);
    }
    fputs("],\n  \"rank_difference_means\":", out);
    pm_json_str(out, pm_unseen_label);
    fputs("\n}\n", out);
}

/* ================================================================== CSV */

/* RFC 4180 quoting; invalid UTF-8 becomes U+FFFD. A field starting with a
 * formula character gets a leading ' so spreadsheets show it as text. */
static void pm_csv_str(FILE *out, const char *s)
{
    size_t i = 0, n = strlen(s);
    int guard = n > 0 && strchr("=+-@\t\r", s[0]) != NULL;
    int quote = strpbrk(s, ",\"\r\n") != NULL;

    if (quote)
        putc('"', out);
    if (guard)
        putc('\'', out);
    while (i < n) {
        uint32_t cp;
        size_t len = pm_utf8_decode((const unsigned char *)s + i, n - i, &cp);

        if (cp == PM_BAD)
            fputs("\xEF\xBF\xBD", out);
        else if (cp == '"')
            fputs("\"\"", out);
        else
            fwrite(s + i, 1, len, out);
        i += len;
    }
    if (quote)
        putc('"', out);
}

static void pm_csv_num(FILE *out, int has, double v)
{
    putc(',', out);
    if (has && isfinite(v))
        fprintf(out, "%.17g", v);
}

static const char pm_csv_header[] =
    "index,row,parent,depth,path,name,kind,visits,threads_visited,"
    "wall_total_ns,wall_min_ns,wall_mean_ns,wall_max_ns,flags,"
    "event,event_group,raw_total,total,min,mean,max,estimate,counted_share,untrusted,threads_na\n";

static void pm_csv_region_part(FILE *out, const struct pm_report *rep, size_t i)
{
    const struct pm_data *d = rep->d;
    size_t r = rep->order[i];
    const struct pm_region *g = &d->regions[r];
    const struct pm_regstat *s = &rep->reg[r];
    char flags[1024];

    fprintf(out, "%zu,%zu,%lld,%d,", i, r, g->parent < 0 ? -1LL : (long long)rep->pos[g->parent],
            (int)g->depth);
    pm_csv_str(out, g->path);
    putc(',', out);
    pm_csv_str(out, g->name);
    putc(',', out);
    pm_csv_str(out, g->kind);
    fprintf(out, ",%" PRIu64 ",%zu,%" PRIu64, s->visits, s->nvisited, s->wall_total);
    if (s->nvisited)
        fprintf(out, ",%" PRIu64 ",%.17g,%" PRIu64 ",", s->wall_min, s->wall_mean, s->wall_max);
    else
        fputs(",,,,", out);
    pm_region_flag_list(rep, s, ";", flags, sizeof flags);
    pm_csv_str(out, flags);
}

static void pm_csv_event_part(FILE *out, const struct pm_report *rep, const struct pm_evstat *s,
                              size_t e)
{
    putc(',', out);
    pm_csv_str(out, rep->d->events[e].name);
    fprintf(out, ",%d,%" PRIu64, (int)rep->d->events[e].group, s->raw);
    pm_csv_num(out, s->has_total, s->total);
    pm_csv_num(out, s->has_spread, s->min);
    pm_csv_num(out, s->has_spread, s->mean);
    pm_csv_num(out, s->has_spread, s->max);
    fprintf(out, ",%s", s->estimate ? "true" : "false");
    pm_csv_num(out, s->has_share, s->share);
    fprintf(out, ",%s,%zu\n", s->untrusted ? "true" : "false", s->n_na);
}

static void pm_render_csv(FILE *out, const struct pm_report *rep)
{
    const struct pm_data *d = rep->d;

    fputs(pm_csv_header, out);
    for (size_t i = 0; i < d->R; i++) {
        size_t r = rep->order[i];

        if (d->E == 0) { /* still one row per region */
            pm_csv_region_part(out, rep, i);
            fputs(",,,,,,,,,,,\n", out);
        }
        for (size_t e = 0; e < d->E; e++) {
            pm_csv_region_part(out, rep, i);
            pm_csv_event_part(out, rep, &rep->reg[r].ev[e], e);
        }
    }
}

/* =============================================================== public */

enum pm_format { PM_FMT_TEXT, PM_FMT_CSV, PM_FMT_JSON };

#define PM_REPORT_TIMEOUT 300 /* seconds; PERFMARK_REPORT_TIMEOUT overrides, 0 = none */

static void pm_set_err(char *err, size_t errlen, const char *path, const char *msg)
{
    if (!err || errlen == 0)
        return;
    snprintf(err, errlen, "%s%s%s", path ? path : "", path ? ": " : "", msg);
    for (char *p = err; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            *p = '?';
}

/* Load and render in the calling process. */
static int pm_report_direct(const char *path, enum pm_format fmt, FILE *out, char *err,
                            size_t errlen)
{
    struct pm_data d;
    struct pm_report rep;
    int rc = 0;

    if (pm_data_load(path, &d, err, errlen) < 0)
        return -1;
    if (pm_report_build(&rep, &d, path) < 0) {
        pm_set_err(err, errlen, path, "out of memory");
        rc = -1;
    } else if (fmt == PM_FMT_TEXT) {
        pm_render_text(out, &rep);
    } else if (fmt == PM_FMT_CSV) {
        pm_render_csv(out, &rep);
    } else {
        pm_render_json(out, &rep);
    }
    pm_report_free(&rep);
    pm_data_free(&d);
    return rc;
}

/* Result of the child, in memory shared with the parent. */
struct pm_shared {
    int done;
    int rc;
    char err[1024];
};

static unsigned pm_timeout(void)
{
    const char *s = getenv("PERFMARK_REPORT_TIMEOUT");
    char *end;
    unsigned long v;

    if (!s || !*s)
        return PM_REPORT_TIMEOUT;
    errno = 0;
    v = strtoul(s, &end, 10);
    if (errno || *end || v > 86400)
        return PM_REPORT_TIMEOUT;
    return (unsigned)v;
}

static _Noreturn void pm_child(int fd, const char *path, enum pm_format fmt, struct pm_shared *sh)
{
    FILE *w = fdopen(fd, "w");
    int rc = -1;
    int devnull = open("/dev/null", O_WRONLY);

    /* glibc and HDF5 abort messages would break the one-line error contract */
    if (devnull >= 0) {
        dup2(devnull, STDERR_FILENO);
        close(devnull);
    }
    signal(SIGALRM, SIG_DFL);
    signal(SIGPIPE, SIG_DFL);
    alarm(pm_timeout());
    if (!w) {
        pm_set_err(sh->err, sizeof sh->err, path, "cannot set up the report pipe");
    } else {
        rc = pm_report_direct(path, fmt, w, sh->err, sizeof sh->err);
        if (fflush(w) != 0 && rc == 0) {
            pm_set_err(sh->err, sizeof sh->err, path, "cannot write the report");
            rc = -1;
        }
    }
    sh->rc = rc;
    /* published before the pipe closes: the parent may only see EOF */
    __atomic_store_n(&sh->done, 1, __ATOMIC_SEQ_CST);
    if (w)
        fclose(w);
    _exit(rc == 0 ? 0 : 1); /* no atexit/stdio flush: those belong to the parent */
}

/* Read the child's whole report; the caller's stream only gets a complete one. */
static int pm_read_all(int fd, char **buf, size_t *len)
{
    size_t cap = 65536;
    char *p = malloc(cap);

    *len = 0;
    *buf = NULL;
    if (!p)
        return -1;
    for (;;) {
        ssize_t n;

        if (*len == cap) {
            char *grown = cap <= SIZE_MAX / 2 ? realloc(p, cap * 2) : NULL;
            if (!grown) {
                free(p);
                return -1;
            }
            p = grown;
            cap *= 2;
        }
        n = read(fd, p + *len, cap - *len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            free(p);
            return -1;
        }
        if (n == 0)
            break;
        *len += (size_t)n;
    }
    *buf = p;
    return 0;
}

static void pm_child_died(const char *path, int status, char *err, size_t errlen)
{
    char msg[256];

    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
        snprintf(msg, sizeof msg, "gave up after %u s: the file looks damaged (the HDF5 library "
                 "did not finish reading it)", pm_timeout());
    else if (WIFSIGNALED(status))
        snprintf(msg, sizeof msg, "damaged HDF5 file: the HDF5 library crashed reading it (%s)",
                 strsignal(WTERMSIG(status)));
    else
        snprintf(msg, sizeof msg, "the report process failed unexpectedly");
    pm_set_err(err, errlen, path, msg);
}

static int pm_wait(pid_t pid, int *status)
{
    while (waitpid(pid, status, 0) < 0)
        if (errno != EINTR)
            return -1;
    return 0;
}

/* HDF5 1.10 can crash or spin on corrupt metadata (e.g. a damaged global
 * heap under a variable-length string): no check on our side can prevent
 * that, so the file is read in a child process and a crash becomes a
 * message. Falls back to reading in-process when fork is not possible. */
static int pm_report_isolated(const char *path, enum pm_format fmt, FILE *out, char *err,
                              size_t errlen)
{
    struct pm_shared *sh;
    int fds[2], status = 0, rc, waited;
    char *buf = NULL;
    size_t len = 0;
    pid_t pid;

    sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (sh == MAP_FAILED)
        return pm_report_direct(path, fmt, out, err, errlen);
    memset(sh, 0, sizeof *sh);
    if (pipe(fds) != 0) {
        munmap(sh, sizeof *sh);
        return pm_report_direct(path, fmt, out, err, errlen);
    }
    pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        munmap(sh, sizeof *sh);
        return pm_report_direct(path, fmt, out, err, errlen);
    }
    if (pid == 0) {
        close(fds[0]);
        pm_child(fds[1], path, fmt, sh);
    }
    close(fds[1]);
    rc = pm_read_all(fds[0], &buf, &len);
    close(fds[0]);
    waited = pm_wait(pid, &status);
    if (rc < 0) {
        pm_set_err(err, errlen, path, "out of memory reading the report");
    } else if (__atomic_load_n(&sh->done, __ATOMIC_SEQ_CST)) {
        rc = sh->rc;
        if (rc != 0 && err && errlen > 0)
            snprintf(err, errlen, "%s", sh->err);
    } else {
        rc = -1;
        pm_child_died(path, waited == 0 ? status : 0, err, errlen);
    }
    if (rc == 0 && len > 0 && fwrite(buf, 1, len, out) != len)
        rc = -1; /* reported below through ferror */
    free(buf);
    munmap(sh, sizeof *sh);
    return rc;
}

int pm_report_file(const char *path, const char *format, FILE *out, char *err, size_t errlen)
{
    enum pm_format fmt;
    char msg[256];
    int rc;

    if (err && errlen > 0)
        err[0] = '\0';
    if (!format || strcmp(format, "text") == 0) {
        fmt = PM_FMT_TEXT;
    } else if (strcmp(format, "csv") == 0) {
        fmt = PM_FMT_CSV;
    } else if (strcmp(format, "json") == 0) {
        fmt = PM_FMT_JSON;
    } else {
        snprintf(msg, sizeof msg, "unknown report format '%.64s' (use text, csv or json)", format);
        pm_set_err(err, errlen, NULL, msg);
        return -1;
    }
    if (!out) {
        pm_set_err(err, errlen, path, "no output stream");
        return -1;
    }
    if (!path) {
        pm_set_err(err, errlen, NULL, "no file given");
        return -1;
    }
    rc = pm_report_isolated(path, fmt, out, err, errlen);
    if (fflush(out) != 0 || ferror(out)) {
        snprintf(msg, sizeof msg, "cannot write the report: %s", strerror(errno));
        if (rc == 0 || (err && err[0] == '\0'))
            pm_set_err(err, errlen, path, msg);
        rc = -1;
    }
    return rc;
}
