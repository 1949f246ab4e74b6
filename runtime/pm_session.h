/* pm_session — the process lifecycle: decide whether this process is
 * measured, start (events, process-wide set, fork handlers), pick up
 * threads, and write the file at the end.
 *
 * States: OFF (not launched under perfmark: markers do nothing), LAZY
 * (perfmark is enabled in the environment but this process is not the one
 * `perfmark run` launched, e.g. a helper started by a script: it starts on
 * its first marker call), ON, and STOPPED (after the file was written). */
#ifndef PM_SESSION_H
#define PM_SESSION_H

#include "pm_thread.h"

enum pm_session_state { PM_OFF = 0, PM_LAZY, PM_ON, PM_STOPPED };

extern volatile int pm_state;

/* The calling thread's state, creating it (and starting a LAZY session) on
 * first use; NULL when the process is not measured. */
struct pm_thread *pm_session_thread_slow(void);

static inline struct pm_thread *pm_session_thread(void)
{
    struct pm_thread *t = pm_self;
    if (__builtin_expect(t != NULL && pm_state == PM_ON, 1))
        return t;
    return pm_session_thread_slow();
}

/* 0 when another copy of libperfmark in this process owns the markers. */
int pm_markers_are_primary(void);

/* The MPI identity, known for sure after MPI_Init; starts a LAZY session
 * (a process that initialises MPI is an application rank). */
void pm_session_set_rank(int rank, int size);

/* Write the file now (idempotent). Called at exit; later also by the MPI
 * finalize wrapper. */
void pm_session_finalize(void);

#endif
