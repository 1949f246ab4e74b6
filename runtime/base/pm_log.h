/* pm_log — the one way perfmark tells the user something.
 *
 * Every message goes to stderr as "perfmark: ..." (unless PERFMARK_QUIET=1)
 * and is kept so the writer can store it in /messages. Repetitive problems
 * (unbalanced markers in a loop) use a kind: the first few of a kind are
 * printed, the rest only counted and summarised once at exit. */
#ifndef PM_LOG_H
#define PM_LOG_H

#include <stddef.h>

enum pm_msg_kind {
    PM_MSG_ONCE = 0,        /* ordinary, printed every time it is called */
    PM_MSG_FILE_ONLY,       /* kept for the file, not printed (e.g. the same
                               start-up notice on every rank but 0) */
    PM_MSG_UNBALANCED,      /* marker misuse */
    PM_MSG_NAME,            /* odd region names (truncated, ...) */
    PM_MSG_COUNTERS,        /* counter reads failing / reopened */
    PM_MSG_KINDS
};


#define PM_MSG_KEEP_MAX 1000

void pm_log_set_quiet(int quiet);
void pm_msg(enum pm_msg_kind kind, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Print one summary line per kind that was throttled. */
void pm_msg_summarise(void);
/* Messages kept so far (for the file); valid until exit. */
size_t pm_msg_count(void);
const char *pm_msg_get(size_t i);
/* Drop the stored messages (the child after fork starts its own list). */
void pm_msg_reset(void);

#endif
