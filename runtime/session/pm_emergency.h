/* pm_emergency — keep the data when the program is told to stop (SIGTERM
 * from a batch system at its time limit, from mpirun when another rank
 * aborted or died; SIGINT; SIGHUP; SIGXCPU) or crashes (SIGSEGV, SIGBUS,
 * SIGFPE, SIGILL, SIGABRT). `sigaction` and `signal` are interposed so that
 * handlers the program installs later are chained to, not lost.
 *
 * The handler does only async-signal-safe things: it writes one byte to a
 * pipe, waits (poll, bounded) for a dump thread started beforehand to write
 * this process's file, flagged PARTIAL, and then hands the signal on: to the
 * handler the program had installed before perfmark's, or to the default
 * action (re-raised). The dump runs in that ordinary thread, not in signal
 * context, and takes only try-locks, so it cannot wait for a lock the
 * interrupted thread holds; if it cannot finish in time, the signal goes on
 * and the data is lost as it would have been without perfmark. */
#ifndef PM_EMERGENCY_H
#define PM_EMERGENCY_H

/* Install the handlers and start the dump thread (once, in a measured
 * process). `dump` is called on the dump thread with the signal number.
 * `mpi_rank`: this process is a rank of an MPI job, whose peers are told to
 * stop at the same moment: after its dump it lingers a little (a few times
 * the dump's own time, 0.2 to 3 s) before a stop request goes on, so that a
 * launcher that kills every rank when the first one ends (MPICH's Hydra)
 * does not cut the peers' dumps short. */
void pm_emergency_install(void (*dump)(int sig), int mpi_rank);

#endif
