/*
 * h5read.h — load a perfmark HDF5 file (docs/hdf5-schema.md) into memory:
 * whole (pm_file_load), or all but the cell arrays, which pm_file_rows then
 * reads a block of thread rows at a time (pm_file_open, the report's
 * streaming pass).
 *
 * The loader checks every shape against T/R/E/G before anything is used, so
 * the report code can index the arrays without further checks. Strings are
 * never NULL (a missing or NULL string reads as "").
 */
#ifndef PM_H5READ_H
#define PM_H5READ_H

#include <stddef.h>
#include <stdint.h>

/* The schema version this reader understands. */

/* Data-quality flags of /region/flags (schema 1). The file is the contract
 * between the layers: analysis does not include runtime/count/pm_flags.h, so these
 * copies carry the PM_FILE_ prefix and cannot clash with its PM_FLAG_ names. */
enum {
    PM_FILE_FLAG_MULTIPLEXED = 0x01,
    PM_FILE_FLAG_NOT_COUNTED = 0x02,
    PM_FILE_FLAG_LOST_GENERATION = 0x04,
    PM_FILE_FLAG_MIGRATED = 0x08,
    PM_FILE_FLAG_UNBALANCED = 0x10,
    PM_FILE_FLAG_SHORT = 0x20,
    PM_FILE_FLAG_PARTIAL = 0x40,
    /* added with the throttle: the reader takes these bits for what the
     * schema says only where /region/flags names them so (every writer that
     * sets them does; an older file may use the bits for something else):
     * pm_file.flag_timer_only and friends */
    PM_FILE_FLAG_TIMER_ONLY = 0x80, /* by design no counter reading (MPI polls) */
    PM_FILE_FLAG_THROTTLED = 0x100, /* no readings after throttled_from */
    PM_FILE_FLAG_OVERHEAD = 0x200,  /* perfmark's own reads > 10 % of the counts */
    PM_FILE_FLAG_SAMPLES_LOST = 0x400 /* samples lost or throttled (files with /samples) */
};

/* /samples/events (schema revision 7) */
struct pm_file_sample_event {
    char *name, *requested, *unit;
    uint32_t type;
    uint64_t config, period;
};

/* /samples/modules: an object samples fell in */
struct pm_file_module {
    char *build_id, *path;
};

/* /node (node mode): one watched CPU, one other process */
struct pm_file_node_cpu {
    int32_t rank, cpu;
    uint64_t span_ns, own_ns, foreign_ns, idle_ns, lost;
    uint64_t mpi_span_ns, mpi_own_ns, mpi_foreign_ns, mpi_idle_ns; /* MPI_Init to Finalize */
};
struct pm_file_node_row {  /* one CPU in one interval (--interval) */
    int32_t rank, cpu;
    uint64_t time_ns, own_ns, foreign_ns, idle_ns;
};
struct pm_file_node_proc {
    int32_t rank, cpu;
    int64_t pid;
    char *comm;
    uint64_t ns;
};

/* /samples/hits: samples at one instruction of one (thread, region, event) */
struct pm_file_hit {
    int32_t thread, region, event, module;
    uint64_t offset, count;
    int64_t chain;
};

/* /samples/chains: a sample's callers, frames [first, first + length) of
 * /samples/frames, innermost first; /samples/frames: a return address */
struct pm_file_chain {
    uint64_t first;
    int32_t length;
};
struct pm_file_frame {
    int32_t module;
    uint64_t offset;
};

struct pm_file_event {
    char *name;
    char *pfm_name;
    int32_t group;
    uint32_t type;
    uint64_t config, config1, config2;
    uint8_t exclude_user, exclude_kernel;
};

struct pm_file_region {
    char *name;
    int32_t parent;
    int32_t depth;
    char *kind;
    char *path;
};

struct pm_file_thread {
    int32_t rank;
    int32_t thread;
    int64_t pid, tid;
    char *host;
    int32_t cpu_first, cpu_last;
    uint8_t exited;
    int32_t open_at_end;
    /* placement (files that have it: pm_file.has_placement) */
    int32_t core_first, core_last, package_first, package_last, numa_first, numa_last;
    char *binding;
    char *name;             /* the thread's name, "" in files before revision 8 */
    char *start;            /* the function it started in ("" likewise) */
    uint8_t totals_from;    /* where its totals come from (0 before revision 12) */
};

/* /threads.totals_from as a word ("own" for an unknown value). */
const char *pm_totals_from_name(uint8_t from);

/* What the report keeps of every /threads row: the rest of a row is read
 * when printed (pm_file_thread_rows), so memory does not grow with it. */
struct pm_file_tid {
    int32_t rank;
    int32_t thread;
};

/* A block of /threads rows: rows[t - t0] is row t, for t in [t0, t0 + nt). */
struct pm_thread_rows {
    size_t t0, nt, cap;
    const struct pm_file_thread *rows;
    struct pm_file_thread *own; /* the buffer of a streamed file */
};

/* One named flag bit; the built-in schema-1 names plus any unknown single-bit
 * attribute found on /region/flags, sorted by bit. */
struct pm_file_flagname {
    uint32_t bit;
    char *name;
};

struct pm_file {
    /* root attributes (missing optional strings read as "") */
    int32_t schema_version;
    char *perfmark_version;
    char *command;
    char *host;
    int64_t pid;
    char *start_time;
    uint64_t duration_ns;
    char *clock;
    char *events_requested;
    char *events_measured;
    char *event_group;
    char *fallback;
    char *fallback_cause; /* "no_tables", "no_pmu", both, "not_counted", or "" */
    char *cpu;            /* the CPU perfmark saw, or "" (older files) */
    int32_t kernel_groups;
    int32_t bind_cpu;
    uint8_t partial;
    int32_t rank;  /* the writer's rank, -1 in a job file; 0 when absent */
    int32_t ranks; /* ranks in the job; 0 when absent (files before MPI support) */
    char *topdown_method;   /* "", perf_metrics, skylake, zen4, arm, atom (or a method
                               this reader does not know) */
    int32_t topdown_levels; /* 0 when absent */
    char *cpu_model;        /* the CPU-model table of the topdown group, or "" */
    char *threads_seen;     /* which threads have rows and from when ("" before revision 8) */
    char *throttle;         /* which visits read counters ("warmup=100,k=40", "off"), or
                               "" (files before the throttle) */

    size_t T, R, E, G, N, M;

    /* a summary file (root attribute detail = "summary", read_summary.c):
     * the rows are the kept ranks'; the report's state over every rank,
     * and the job's thread rows its statistics name (ref_*, ascending) */
    int summary;
    char *summary_layout;
    uint64_t summary_threads; /* thread rows of the whole job */
    unsigned char *summary_state;
    size_t summary_state_len;
    int32_t *kept_rank;       /* [nkept] ascending */
    uint64_t *kept_row;       /* [nkept] the job's row of each one's first thread */
    size_t *kept_first;       /* [nkept] and its first row here */
    size_t nkept;
    uint64_t *ref_row;        /* [nrefs] */
    int32_t *ref_rank, *ref_thread;
    size_t nrefs;

    struct pm_file_event *events;   /* [E] */
    struct pm_file_region *regions; /* [R], parent < own row */
    struct pm_file_thread *threads; /* [T] after pm_file_load; NULL after pm_file_open
                                       (pm_file_thread_rows reads them a block at a time) */
    struct pm_file_tid *tids;       /* [T] rank and thread of every row, both ways */
    int has_placement;              /* /threads has binding and core/package/NUMA fields */

    uint64_t *visits;     /* [T,R] */
    uint64_t *wall_ns;    /* [T,R] */
    uint32_t *flags;      /* [T,R] */
    uint64_t *counts;     /* [T,R,E] */
    uint64_t *enabled_ns; /* [T,R,G] */
    uint64_t *running_ns; /* [T,R,G] */
    /* optional in the file (older writers): all zeros when absent */
    uint64_t *bytes;         /* [T,R] */
    uint64_t *bytes_unknown; /* [T,R] */
    /* which visits read counters and what that cost (files since the
     * throttle; has_visit_data). Absent: reads, timer_visits and
     * throttled_from are zeros, and timed_visits is NULL after pm_file_load,
     * meaning every visit was timed (pm_file_rows then gives visits) */
    uint64_t *reads;          /* [T,R] counter readings inside the counted visits */
    uint64_t *timer_visits;   /* [T,R] visits that took no reading */
    uint64_t *timed_visits;   /* [T,R] visits whose time wall_ns holds */
    uint64_t *throttled_from; /* [T,R] first visit taken without a reading, 0: none */
    int has_visit_data;       /* the file has any of the four */
    uint32_t flag_timer_only, flag_throttled, flag_overhead; /* PM_FILE_FLAG_* where the
                                                                 file names them so, else 0 */

    /* /thread totals: [T] after pm_file_load; NULL after pm_file_open, whose
     * readers take them a block of rows at a time (pm_file_totals) */
    uint64_t *thread_wall_ns;    /* [T] */
    uint64_t *thread_counts;     /* [T,E] */
    uint64_t *thread_enabled_ns; /* [T,G] */
    uint64_t *thread_running_ns; /* [T,G] */
    uint32_t *thread_flags;      /* [T], all zeros when absent (older writers) */
    uint64_t *thread_reads;      /* [T] every reading perfmark made, zeros when absent */
    double *thread_read_cost_ns; /* [T] what one reading cost, zeros when absent */
    int has_read_cost;           /* the file has /thread/read_cost_ns */

    uint64_t *rank_counts;     /* [N,E] */
    uint64_t *rank_enabled_ns; /* [N,G] */
    uint64_t *rank_running_ns; /* [N,G] */

    char **messages; /* [M] */

    struct pm_file_flagname *flagnames;
    size_t nflagnames;

    /* sampling (revision 7; S = K = H = 0 in files without it) */
    size_t S, K, H;
    struct pm_file_sample_event *sample_events; /* [S] */
    struct pm_file_module *sample_modules;      /* [K] */
    char *sample_requested;                     /* /samples@requested, "" */
    int sample_counting;                        /* /samples@counting: counts by sampling */
    char sample_callchain[8];                   /* /samples@callchain: none, fp, dwarf;
                                                   "" before revision 10 */
    uint32_t sample_stack_bytes;                /* /samples@stack_bytes (dwarf) */
    uint64_t *sample_lost, *sample_throttled;   /* [R*S] Σ over threads of the cells */
    uint64_t *sample_root_lost, *sample_root_throttled; /* [S] Σ of /thread/samples_* */
    struct pm_file_hit *sample_hits;            /* [H] after pm_file_load; NULL after
                                                   pm_file_open (pm_file_hits) */

    /* counts over time (revision 7; I = J = 0 without them) */
    size_t I, J;
    uint64_t series_asked_ns;   /* /series@asked_ns */
    uint64_t *series_interval;  /* [T] /series/thread_interval_ns (zeros without) */

    /* node mode (revision 7; NP = NQ = 0 without it) */
    size_t NP, NQ, NV;
    struct pm_file_node_cpu *node_cpus;   /* [NP] */
    struct pm_file_node_proc *node_procs; /* [NQ] */

    /* added with issue 6 (streaming): thread rows per chunk of /region/counts
     * (0 when not chunked), and the open file of pm_file_open (NULL after
     * pm_file_load, whose cell arrays above are in memory instead) */
    size_t chunk_threads;
    struct pm_file_stream *stream;
};

/* Rows [t0, t0 + nt) of the [T,R], [T,R,E] and [T,R,G] cell arrays, indexed
 * like the whole arrays with t - t0 (pm_cell_tr and friends). */
struct pm_cells {
    size_t t0, nt, cap;
    const uint64_t *visits, *wall_ns, *counts, *enabled_ns, *running_ns, *bytes, *bytes_unknown;
    const uint32_t *flags;
    /* zeros where the file lacks them; timed_visits is then visits */
    const uint64_t *reads, *timer_visits, *timed_visits, *throttled_from;
    void *buf[12]; /* owned buffers of a streamed file (NULL in memory) */
};

/* Rows [t0, t0 + nt) of the /thread totals, indexed with t - t0: wall_ns,
 * flags, reads and read_cost_ns [nt], counts [nt,E], enabled_ns and
 * running_ns [nt,G]. */
struct pm_totals {
    size_t t0, nt, cap;
    const uint64_t *wall_ns, *counts, *enabled_ns, *running_ns;
    const uint32_t *flags;
    const uint64_t *reads;
    const double *read_cost_ns;
    void *buf[7]; /* owned buffers of a streamed file (NULL in memory) */
};

/* Software clock events (task-clock, cpu-clock) count nanoseconds. */
static inline int pm_file_event_is_time(const struct pm_file_event *ev)
{
    return ev->type == 1 /* PERF_TYPE_SOFTWARE */ &&
           (ev->config == 0 /* CPU_CLOCK */ || ev->config == 1 /* TASK_CLOCK */);
}

/* Row-major indices into the [T,R], [T,R,E] and [T,R,G] arrays. */
static inline size_t pm_tr(const struct pm_file *d, size_t t, size_t r)
{
    return t * d->R + r;
}

static inline size_t pm_tre(const struct pm_file *d, size_t t, size_t r, size_t e)
{
    return (t * d->R + r) * d->E + e;
}

static inline size_t pm_trg(const struct pm_file *d, size_t t, size_t r, size_t g)
{
    return (t * d->R + r) * d->G + g;
}

/* Cell c of a chunk: thread row t (absolute), region r. */
static inline size_t pm_cell_tr(const struct pm_file *d, const struct pm_cells *c, size_t t,
                                size_t r)
{
    return (t - c->t0) * d->R + r;
}

/* Load `path`. Returns 0, or -1 with a one-line message "PATH: what" in err.
 * On failure *d is left empty (pm_file_free is still safe to call). */
int pm_file_load(const char *path, struct pm_file *d, char *err, size_t errlen);

void pm_file_free(struct pm_file *d);

/* Open `path` for streaming: everything pm_file_load reads except the cell
 * arrays, whose shapes are checked but which stay in the file (d->visits and
 * the other cell pointers are NULL); pm_file_rows reads them a chunk of
 * thread rows at a time. mpio != 0: through the MPI-IO driver on
 * MPI_COMM_WORLD (every rank must call it; the caller has initialised MPI).
 * Same return and error contract as pm_file_load. */
int pm_file_open(const char *path, struct pm_file *d, int mpio, char *err, size_t errlen);

/* Buffers for up to `cap` thread rows of d's cells (none needed in memory). */
int pm_cells_alloc(const struct pm_file *d, size_t cap, struct pm_cells *c);
void pm_cells_free(struct pm_cells *c);

/* The job's thread row of row t: t, or in a summary file t's row among all
 * ranks' (read_summary.c). */
size_t pm_file_job_row(const struct pm_file *d, size_t t);

/* Rows [t0, t0 + nt) into c: pointers into d's arrays after pm_file_load, a
 * hyperslab read (independent) after pm_file_open. Returns 0, or -1 with a
 * one-line message in err. */
int pm_file_rows(const struct pm_file *d, size_t t0, size_t nt, struct pm_cells *c, char *err,
                 size_t errlen);

/* Room for `cap` rows of the /thread totals (none needed in memory). */
int pm_totals_alloc(const struct pm_file *d, size_t cap, struct pm_totals *b);
void pm_totals_free(struct pm_totals *b);
/* Rows [t0, t0 + nt) of the /thread totals into b: pointers into d's arrays
 * after pm_file_load, hyperslab reads (independent) after pm_file_open.
 * Returns 0, or -1 with a one-line message in err (the rows then read as
 * zeros). */
int pm_file_totals(const struct pm_file *d, size_t t0, size_t nt, struct pm_totals *b, char *err,
                   size_t errlen);

/* Room for `cap` /threads rows (none needed after pm_file_load). */
int pm_thread_rows_alloc(const struct pm_file *d, size_t cap, struct pm_thread_rows *b);
void pm_thread_rows_free(struct pm_thread_rows *b);
/* Rows [t0, t0 + nt) of /threads into b: pointers into d->threads after
 * pm_file_load, one hyperslab read after pm_file_open (rank 0 alone may
 * call it under MPI-IO: independent). Returns 0, or -1 with a message in
 * err (the rows then read as zeros and ""). */
int pm_file_thread_rows(const struct pm_file *d, size_t t0, size_t nt, struct pm_thread_rows *b,
                        char *err, size_t errlen);

/* A block of /series rows: rows [i0, i0 + n), each array indexed i - i0:
 * time_ns, thread, region, flags [n], counts [n,E], enabled_ns and
 * running_ns [n,G]. process = 1: the process rows (/series/process_*:
 * thread holds the rank, region -1, flags 0). */
struct pm_series_block {
    size_t i0, n, cap;
    uint64_t *time_ns, *counts, *enabled_ns, *running_ns;
    int32_t *thread, *region;
    uint32_t *flags;
};
int pm_series_block_alloc(const struct pm_file *d, size_t cap, struct pm_series_block *b);
void pm_series_block_free(struct pm_series_block *b);
/* Returns 0, or -1 with a one-line message in err. */
int pm_file_series(const struct pm_file *d, int process, size_t i0, size_t n,
                   struct pm_series_block *b, char *err, size_t errlen);

/* Rows [v0, v0 + nv) of /node's interval rows into `out` (room for nv),
 * from the open file (pm_file_open). Returns 0, or -1 with a one-line
 * message in err. */
int pm_file_node_rows(const struct pm_file *d, size_t v0, size_t nv, struct pm_file_node_row *out,
                      char *err, size_t errlen);

/* Rows [h0, h0 + nh) of /samples/hits into `out` (room for nh): copied
 * from memory after pm_file_load, read after pm_file_open (independent I/O
 * under MPI-IO). Rows are as stored: the model checks their ranges.
 * Returns 0, or -1 with a one-line message in err. */
/* The whole /samples/chains and /samples/frames of a file open for
 * streaming (none: 0 rows), into new arrays the caller frees. 0, or -1 with
 * the message in err. */
int pm_file_call_chains(const struct pm_file *d, struct pm_file_chain **chains, size_t *nc,
                        struct pm_file_frame **frames, size_t *nf, char *err, size_t errlen);
int pm_file_hits(const struct pm_file *d, size_t h0, size_t nh, struct pm_file_hit *out,
                 char *err, size_t errlen);

#endif /* PM_H5READ_H */
