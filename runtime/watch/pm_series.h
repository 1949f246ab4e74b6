/* pm_series — counts over time (PERFMARK_INTERVAL): a thread of its own
 * reads every measured thread's counter set, and the process's inherited
 * set, every interval (reading another thread's group is allowed; the
 * markers are not touched), and keeps per thread one row per interval:
 * when, the region the thread was in, and the counts since the previous row.
 *
 * Every thread's rows telescope: the first starts from the reading its
 * totals start from, and a last row at its end runs to the reading its
 * totals end at, so the rows of a thread sum to its /thread totals exactly
 * (unless its counters were reopened in between: LOST_GENERATION).
 *
 * Memory is bounded (PERFMARK_SERIES_MEMORY, default 64 MiB per process):
 * when the rows would pass it, every two adjacent intervals are merged into
 * one and the interval doubles (said once, and the file's interval says
 * the resolution kept). docs/design.md, "Interval series". */
#ifndef PM_SERIES_H
#define PM_SERIES_H

#include "pm_thread.h"

#include <stddef.h>
#include <stdint.h>

#define PM_SERIES_MEMORY_DEFAULT ((size_t)64 << 20)

/* A row's header; then `stride` count words (deltas). */
struct pm_series_row {
    uint64_t time_ns;  /* CLOCK_REALTIME at the reading (ranks line up) */
    uint32_t tick;     /* interval number since the start, at the current interval */
    int32_t node;      /* the thread's innermost node then, -1: none */
    uint32_t flags;    /* PM_FLAG_LOST_GENERATION: no deltas in this row */
    uint32_t pad;
};
#define PM_SERIES_HEADER_WORDS (sizeof(struct pm_series_row) / 8)

/* One thread's rows (or the process's: thread NULL). */
struct pm_series_track {
    struct pm_thread *thread;
    uint64_t *rows;      /* nrows x (PM_SERIES_HEADER_WORDS + stride) words */
    size_t nrows, cap;
    uint64_t *last;      /* the reading the next row's deltas start from */
    uint64_t gen;
    int ended;
};

/* What the writer gets (pm_output.series). */
struct pm_series {
    uint64_t interval_ns;      /* as kept: the asked interval, doubled per merge */
    uint64_t asked_ns;
    unsigned stride;
    struct pm_series_track **track;  /* threads' tracks, in thread index order */
    int32_t ntracks;
    struct pm_series_track process;  /* the inherited set's rows */
    int merges;                /* times adjacent intervals were merged */
};

/* Start the thread (after the event set is known). 0, or -1 with errno. */
int pm_series_start(uint64_t interval_ns, unsigned stride, struct pm_counterset *process_set,
                    size_t memory);
/* A thread starts being read (its rows start from its totals' base). */
void pm_series_add(struct pm_thread *t);
/* A thread's totals are settled (its exit, or the process's end): its last
 * row, to the reading they end at (t->base). */
void pm_series_end_thread(struct pm_thread *t);
/* The process set's last row, to its final reading. */
void pm_series_end_process(const uint64_t *reading);
/* Stop reading: join the thread (finalize), or only ask it (emergency). */
void pm_series_stop(void);
void pm_series_stop_async(void);
/* The rows, for the writer (NULL when not running). */
const struct pm_series *pm_series_get(void);
/* In a fork child: no series thread; drop everything. */
void pm_series_after_fork(void);

/* Parse PERFMARK_INTERVAL: digits with ns/us/ms/s (no unit: ms). 0 and the
 * interval in ns (at least 1 ms), or -1 with a sentence in err. */
int pm_series_parse_interval(const char *text, uint64_t *ns, char *err, size_t errlen);

#endif
