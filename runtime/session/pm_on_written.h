/* pm_on_written — for perfmark's own shims: run a callback once, after this
 * process's measurement has been written at the end of a normal run (the
 * Caliper shim prints `perfmark report` of the file for a runtime-report
 * config, shims/caliper_report.c).
 *
 * pm_on_file_written is exported from libperfmark.so but is no part of the
 * public API (perfmark.h): a shim from the same build calls it, declared
 * weak, so that an older libperfmark.so preloaded in its place only means
 * "not available", never a failed symbol lookup. */
#ifndef PM_ON_WRITTEN_H
#define PM_ON_WRITTEN_H

/* `file`: the file holding this process's data as written (the job's one
 * file on the rank that put it in place), or NULL when this process put no
 * file anywhere (the other ranks of a job file, or every place refused it);
 * `rank`: this process's MPI rank, 0 without MPI. */
typedef void (*pm_written_fn)(const char *file, int rank, void *arg);

/* 0 if fn will be called; -1 when this process is not being measured (or
 * its file is already written), or 8 callbacks are registered already.
 * Not called after a partial write (a signal, MPI_Abort) nor in a fork
 * child: the callback belongs to the run that registered it. */
int pm_on_file_written(pm_written_fn fn, void *arg);

/* Runtime side (pm_session.c), which calls in and is never called back
 * from here: accept registrations (1, measuring starts) or refuse them (0,
 * measuring stopped); the file was written: run the callbacks once. */
void pm_on_written_accept(int yes);
void pm_on_written_run(const char *file, int rank);

#endif
