/* pm_session_out — where a measured process's file goes, and getting it
 * there: the path asked for (PERFMARK_OUTPUT: a file, or a directory that
 * gets the default name; else perfmark-<job id or start time>.h5 in the
 * directory the program started in), tagged per rank and per fork child;
 * the bytes stored (pm_store.h: fallback places, never over a file), with
 * one message saying where they went; the job's file through the job
 * writer, or this process's own. pm_session.c decides when. */
#ifndef PM_SESSION_OUT_H
#define PM_SESSION_OUT_H

#include "pm_writer.h"

#include <stddef.h>

/* What decides where the file goes, as the session has it. */
struct pm_out_where {
    const char *output;       /* PERFMARK_OUTPUT; "" for the default name */
    int output_is_dir;        /* it named a directory when measuring started */
    const char *start_cwd;    /* relative paths resolve here ("": as they are) */
    const char *job, *stamp;  /* the job id ("" outside a job), the start time */
    int rank;                 /* the MPI rank, -1 outside MPI */
    int fork_child;           /* a fork child of the measured process */
    const char *fallback_dir; /* PERFMARK_FALLBACK_DIR ("" none) */
    int quiet;                /* PERFMARK_QUIET: no "wrote" line */
};

/* The path asked for; `per_rank`: this rank's own file (".rankN"). */
void pm_out_path(const struct pm_out_where *w, int per_rank, char *out, size_t len);

/* This process's own file; a summary on stderr when it cannot be built or
 * no place takes it. `written`: the path it went to, or "". */
void pm_out_process_file(const struct pm_out_where *w, const struct pm_output *o, char *written,
                         size_t len);

/* The job's file through `job` (pm_writer.h) over the job's `comm`: its
 * verdict, >= 0 done on every rank, -1 each rank writes its own, -2 built
 * but nowhere to go. `written` as above (rank 0). */
int pm_out_job_file(const struct pm_out_where *w, const struct pm_output *o, pm_writer_job_fn job,
                    struct pm_comm *comm, char *written, size_t len);

#endif
