/* pm_pin — where ranks and threads run. Optional pinning with hwloc
 * (PERFMARK_PIN) and the placement recorded per thread in the file.
 *
 *   keep     (default) an existing binding (mpirun --bind-to, srun
 *            --cpu-bind, OMP_PROC_BIND) is respected and only recorded
 *   none     the same, said explicitly: perfmark never binds
 *   ranks    each local rank is bound to a disjoint share of the cores
 *   threads  as ranks, and thread number k of a rank (order of first sight,
 *            main thread 0) is bound to PU k of its rank's share; more
 *            threads than PUs wrap around, reported, never an error
 *
 * The local rank comes from the launcher's variables, or, when they do not
 * give it, from MPI_COMM_TYPE_SHARED at MPI_Init (binding then happens
 * there). Nothing here is on a hot path. */
#ifndef PM_PIN_H
#define PM_PIN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "pm_place.h"

enum pm_pin_mode { PM_PIN_KEEP = 0, PM_PIN_NONE, PM_PIN_RANKS, PM_PIN_THREADS };

/* "keep", "none", "ranks", "threads" → mode; -1 if unknown. */
int pm_pin_parse(const char *text);

/* Called once when measurement starts; local_rank/local_size < 0 when the
 * environment does not say (then pinning waits for pm_pin_set_local).
 * `cpus` (PERFMARK_PIN_CPUS, "" if unset): the CPUs the shares are cut
 * from, "LIST" on every host or "HOST:LIST" on that host only (what
 * `perfmark run` sets from its own affinity); else every CPU this node
 * allows. */
void pm_pin_start(enum pm_pin_mode mode, const char *cpus, int local_rank, int local_size);
/* 1 if pinning still waits for the local rank (MPI_Init should find it). */
int pm_pin_needs_local(void);
/* The local rank, found at MPI_Init: binds the process now. Threads seen
 * so far must be re-pinned by the caller with pm_pin_thread. */
void pm_pin_set_local(int local_rank, int local_size);
/* Bind thread `tid` (threads mode) as thread number `index` of this rank.
 * Returns the PU it was bound to, or -1 when this mode binds no threads. */
int pm_pin_thread(pid_t tid, int32_t index);

/* The application binds the calling thread to OS CPU `cpu` itself (a
 * shim's likwid_pinThread): through the same hwloc topology, counted for
 * pm_pin_describe. 0, or -1 with errno (EINVAL: no such CPU here). */
int pm_pin_self_to(int cpu);

/* Thread `tid`'s CPU affinity as a cpulist ("0-3,8"), "?" if unknown;
 * a list longer than `len` ends in "...". */
void pm_pin_affinity(pid_t tid, char *out, size_t len);
/* One sentence for the file's `pinning` attribute: the mode and what was
 * done (shares, oversubscription). */
void pm_pin_describe(char *out, size_t len);

/* Placement of an OS CPU number (pm_place.h); -1 where unknown (cpu < 0,
 * or no topology). From sysfs (pm_place.c) unless hwloc's topology is
 * loaded already (pinning) or sysfs cannot say as hwloc would. */
void pm_pin_place(int cpu, struct pm_place *out);
/* Around fork(): the child must not inherit the topology's lock held by a
 * thread that was loading it (pm_pin_place loads it when the file is written). */
void pm_pin_before_fork(void);
void pm_pin_after_fork(void);

#endif
