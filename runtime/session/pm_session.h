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

#include <stddef.h>

struct pm_comm;  /* the job's ranks (job/pm_comm.h) */

enum pm_session_state { PM_OFF = 0, PM_LAZY, PM_ON, PM_STOPPED };

extern volatile int pm_state;

/* The calling thread's state, creating it (and starting a LAZY session) on
 * first use; NULL when the process is not measured. */
struct pm_thread *pm_session_thread_slow(void);

static inline struct pm_thread *pm_session_thread(void)
{
    struct pm_thread *t = pm_self;
    /* relaxed atomic (a plain load on x86): finalize may set it meanwhile */
    if (__builtin_expect(t != NULL && __atomic_load_n(&pm_state, __ATOMIC_RELAXED) == PM_ON, 1))
        return t;
    return pm_session_thread_slow();
}

/* 0 when another copy of libperfmark in this process owns the markers. */
int pm_markers_are_primary(void);

/* A thread of this process starts (pthread_create's wrapper): with
 * PERFMARK_THREADS=all (the default) it gets its counter set and row,
 * whether or not it ever calls a marker. Its state is prepared by the
 * thread that starts it (NULL: not counted) and started on the new thread
 * before its start routine (born), or freed if it never started (unborn). */
struct pm_thread *pm_session_thread_prepare(void);
void pm_session_thread_born(struct pm_thread *prepared);
void pm_session_thread_unborn(struct pm_thread *prepared);
/* The thread's name as it ends (or at the write): recorded in its row, and
 * matched against PERFMARK_THREADS_EXCLUDE (a match leaves the row out of
 * the file; the main thread is never left out). */
void pm_session_thread_named(struct pm_thread *t, const char *name);

/* The MPI identity, known for sure after MPI_Init; starts a LAZY session
 * (a process that initialises MPI is an application rank). */
void pm_session_set_rank(int rank, int size);

/* PERFMARK_PIN waits for this rank's place on its node (the launcher did
 * not say): MPI_Init finds it with MPI_COMM_TYPE_SHARED and hands it over. */
int pm_session_wants_local_rank(void);
void pm_session_set_local(int local_rank, int local_size);
/* Node mode: whether the pids of the node's ranks are wanted, and them
 * (local rank 0 then watches the node's CPUs). */
int pm_session_wants_node(void);
void pm_session_set_node(int local_rank, const int *pids, int n);

/* 0 when this process will never measure (OFF: not launched under
 * perfmark, or a launcher, shell or other tool); 1 when it does, may start
 * later (LAZY), or the constructor has not decided yet. */
int pm_session_may_measure(void);

/* The MPI library this process calls (pm_auto_mpi_library): its ABI
 * (NULL: MPI calls not measured), what it is, and why MPI calls are not
 * measured (NULL: they are), said once on stderr (rank 0) and kept. */
void pm_session_set_mpi(const char *abi, const char *what, const char *problem);
/* Said once about MPI (stderr on rank 0, and kept). */
void pm_session_mpi_note(const char *text);
/* The ABI of the MPI whose calls are measured here, or NULL. */
const char *pm_session_mpi_abi(void);

/* libgomp's constructs are measured at its entry points (wrappers/gomp). */
void pm_session_set_openmp_gomp(void);
/* The OpenMP runtime started the OMPT tool (its version string). */
void pm_session_set_openmp(const char *runtime_version);

/* Write the file now (idempotent). Called at exit with NULL, and by the
 * MPI_Finalize wrapper with the job's comm: MPI still works and every rank
 * is here, so the ranks write one file for the whole job. */
void pm_session_finalize(struct pm_comm *job);
/* The job is dying (MPI_Abort): write this process's own file now, every
 * cell flagged PARTIAL. */
void pm_session_finalize_partial(void);
/* exec() is about to replace this program image (pm_exec.c): write its file
 * now. Returns 1 if written (the measurement has stopped). */
int pm_session_before_exec(const char *what);

#endif
