/* pm_auto — automatic regions: the runtime's whole interface to wrappers/
 * (the OMPT tool, and the MPI wrapper libraries, one per MPI ABI). Wrappers
 * translate outside events into these calls and nothing else; the runtime
 * never sees mpi.h.
 *
 * The MPI wrapper libraries (libperfmark_mpi_<abi>.so) are separate objects
 * that link libperfmark.so: what they use is exported from it
 * (pm_wrapper_api.h).
 *
 * A wrapper resolves its region once (pm_auto_region never fails while
 * memory lasts, whether or not this process is measured), then brackets the
 * real call:
 *
 *     static int32_t region = -1;
 *     if (region < 0) region = pm_auto_region("MPI_Send", PM_KIND_MPI);
 *     int on = pm_auto_enter(region) == 0;
 *     rc = PMPI_Send(...);
 *     if (on) pm_auto_exit(region, bytes);
 */
#ifndef PM_AUTO_H
#define PM_AUTO_H

#include "pm_names.h"
#include "pm_session.h"
#include "pm_wrapper_api.h"

#include <stdint.h>


PM_WRAPPER_API int32_t pm_auto_region(const char *name, enum pm_kind kind);
/* The same for a call that only polls or queries (MPI_Test*, MPI_Iprobe,
 * ...): its visits never read counters, so what it costs stays in the
 * enclosing region; after a warm-up only a sample of its calls is timed
 * (docs/design.md, "Which visits read counters"). */
PM_WRAPPER_API int32_t pm_auto_poll_region(const char *name, enum pm_kind kind);
/* 0 when the region was entered (the caller must then exit it); anything
 * else: nothing to exit (not measured, or a poll counted without a frame). */
PM_WRAPPER_API int pm_auto_enter(int32_t region);
/* `bytes` < 0: unknown (counted as such, never guessed). */
PM_WRAPPER_API int pm_auto_exit(int32_t region, int64_t bytes);

/* A poll region's visit after its warm-up, counted inline: a polling loop
 * makes millions, and most of them are only counted. 1 when this visit was
 * counted that way (nothing to exit); 0: call pm_auto_enter, which also
 * handles first sight, the warm-up, the timed sample and another parent.
 * Nothing here can touch errno. */
static inline __attribute__((always_inline)) int pm_auto_poll_counted(int32_t region)
{
    struct pm_thread *t = pm_self;
    if (t == NULL || region < 0 || __atomic_load_n(&pm_state, __ATOMIC_RELAXED) != PM_ON)
        return 0;
    const struct pm_handle_memo *m = &t->handle_memo[(uint32_t)region & (PM_HANDLE_MEMO - 1)];
    if (m->name != region || m->parent != t->cur || m->node < 0)
        return 0;
    struct pm_node *n = &t->nodes[m->node];
    if (n->mode != PM_MODE_POLL || n->visits < t->throttle_warmup || t->poll_countdown <= 1)
        return 0;
    t->poll_countdown--;
    n->visits++;
    n->untimed++;
    return 1;
}

/* A thread is being started (the pthread_create wrapper): its state,
 * prepared by the starting thread with what it is to run (NULL: not
 * counted); then, on the new thread, before its start routine, counted from
 * here, `birth` given back (the state may be gone after); or freed when the
 * start failed. The new thread allocates nothing on the way. */
void *pm_auto_thread_prepare(const struct pm_thread_birth *birth);
void pm_auto_thread_born(void *prepared, struct pm_thread_birth *birth);
void pm_auto_thread_unborn(void *prepared);

/* Place the calling thread under `region` without visiting it (an OpenMP
 * worker under the path its team was forked from), and undo the innermost
 * placement. 0 when done (the caller must then unplace it). */
int pm_auto_place(int32_t region);
int pm_auto_unplace(void);
/* The calling thread's open path, top first, as region ids (at most max);
 * how many there are, or -1 when the thread is not measured. */
int32_t pm_auto_path(int32_t *regions, int32_t max);

/* libgomp's entry points are interposed (wrappers/gomp): OpenMP constructs
 * of GCC-built code are visible. */
void pm_auto_gomp_active(void);
/* The OMPT tool was initialised by the OpenMP runtime (its version string):
 * OpenMP constructs are visible. */
void pm_auto_ompt_active(const char *runtime_version);
/* 0 when this process will never measure (not launched under perfmark, or
 * a launcher, shell or other tool): an interposer then stays out of the way
 * entirely; 1 when it measures, may start later, or cannot tell yet. */
int pm_auto_may_measure(void);

/* MPI_Init(_thread) returned: the process is an application rank (a LAZY
 * process starts measuring now) and this is its authoritative identity. */
PM_WRAPPER_API void pm_auto_mpi_init(int rank, int size);
/* PERFMARK_PIN still needs this rank's place among the ranks of its node
 * (no launcher variable said): MPI_Init should find it
 * (MPI_COMM_TYPE_SHARED) and hand it over. */
PM_WRAPPER_API int pm_auto_wants_local_rank(void);
PM_WRAPPER_API void pm_auto_mpi_local(int local_rank, int local_size);
/* Node mode (PERFMARK_NODE) wants the pids of the node's ranks: the
 * MPI_Init wrapper gathers them on MPI_COMM_TYPE_SHARED and passes them
 * with this rank's place among them (local rank 0 watches the node). */
PM_WRAPPER_API int pm_auto_wants_node(void);
PM_WRAPPER_API void pm_auto_mpi_node(int local_rank, const int *pids, int n);
/* MPI_Finalize was called: write everything now, while MPI still works,
 * the job's file through `job` (its ranks, pm_comm.h). */
PM_WRAPPER_API void pm_auto_mpi_finalize(struct pm_comm *job);
/* MPI_Abort was called: the job is being torn down; save this rank's data
 * in its own file (flagged PARTIAL) before it goes. */
PM_WRAPPER_API void pm_auto_mpi_abort(void);
/* The MPI library this process calls, as the MPI dispatcher found it: its
 * ABI ("openmpi", "mpich", or NULL: none measured) and a description
 * (library and version). `problem`: why MPI calls are not measured, said
 * once (NULL when they are). */
void pm_auto_mpi_library(const char *abi, const char *what, const char *problem);
/* Something about MPI the user should know, said once (rank 0; the file
 * keeps every rank's). */
PM_WRAPPER_API void pm_auto_mpi_note(const char *text);
/* MPI calls nest inside each other (an MPI library calling its own entry
 * points): only the outermost is a region (pm_mpi.h). */
extern __thread int pm_mpi_depth __attribute__((tls_model("initial-exec")));

#endif
