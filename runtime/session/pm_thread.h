/* pm_thread — one OS thread's measurement state: its counter set, its
 * region tree (nodes keyed by parent and name: regions are call paths), the
 * stack of open regions with the reading taken at each begin, and a small
 * cache from name pointers to name ids.
 *
 * Hot path rules: enter/exit touch only this struct (TLS, no lock), do one
 * counter read and no allocation once a region path has been seen and the
 * stack has reached its depth. Memory grows with distinct paths, not visits. */
#ifndef PM_THREAD_H
#define PM_THREAD_H

#include "pm_counterset.h"
#include "pm_sampler.h"

#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>

#define PM_NAME_CACHE 256

/* How a region's visits are measured (docs/design.md, "Which visits read
 * counters"). */
enum pm_mode {
    PM_MODE_COUNTED = 0, /* counters read at enter and exit */
    PM_MODE_TIMER,       /* throttled: visits and time only, counts stay in the parent */
    PM_MODE_POLL,        /* an MPI poll or query: never read; time sampled after the warm-up */
};

/* One cache line exactly (the array is 64-byte aligned): every counter
 * read evicts much of L1, and a node touched at each exit should cost one
 * line to bring back. What only some regions need is in pm_node_cold. */
struct pm_node {
    int32_t parent;   /* node index, -1 at top level */
    int32_t name;     /* pm_names id */
    uint32_t flags;   /* pm_flag bits */
    uint32_t depth;
    uint64_t visits;  /* every visit, whatever its mode */
    uint64_t ticks;   /* inclusive, pm_clock ticks, of the visits that were timed */
    const char *str;  /* the interned name, for end(name) without a lookup */
    union {
        uint64_t windows;  /* counted regions: counter read windows inside the visits (TopDown SHORT) */
        uint64_t untimed;  /* PM_MODE_POLL: visits counted without taking the time */
    };
    uint64_t reads;   /* counter reads perfmark made inside the counted visits (nested regions') */
    uint8_t kind;     /* enum pm_kind */
    uint8_t mode;     /* enum pm_mode */
} __attribute__((aligned(64)));

_Static_assert(sizeof(struct pm_node) == 64, "struct pm_node must stay one cache line");

/* Per node, beside the hot line: MPI bytes and the throttle's record. */
struct pm_node_cold {
    uint64_t bytes;          /* automatic regions: bytes moved (MPI: count x type size) */
    uint64_t throttled_from; /* first visit taken without a reading (0: never throttled) */
    uint64_t folded;         /* overflow bucket: begins inside an open visit of itself */
    uint32_t bytes_unknown;  /* visits whose byte count could not be determined (saturates) */
};

/* Which visits read counters: one policy per process (PERFMARK_THROTTLE),
 * set before the first thread starts. */
struct pm_visit_policy {
    uint64_t warmup;       /* visits before a region is judged; 0: never throttle */
    uint64_t limit_ticks;  /* throttle a region whose mean visit is shorter than this */
    int polls;             /* MPI polls and queries take no reading (PM_MODE_POLL) */
};
extern struct pm_visit_policy pm_policy;

/* What each thread samples (PERFMARK_SAMPLE), set before the first thread
 * starts; NULL or no events: no sampling. */
extern const struct pm_sample_spec *pm_sampling;

/* One in this many visits of a poll region is timed after its warm-up
 * (the stride between timed visits is drawn at random around it). */
#define PM_POLL_SAMPLE 32

/* A frame of the open-region stack: this header, then the reading taken at
 * enter (stride words; absent readings are not looked at). */
enum {
    PM_F_NODE = 0,  /* node | cpu << 32 | mode << 56 */
    PM_F_TICKS,     /* time at enter, taken after the reading */
    PM_F_GEN,       /* generation of the reading */
    PM_F_WINDOW,    /* reads - TopDown enter lag, for windows */
    PM_F_NAME,      /* the name the region was entered with (buckets hold many) */
    PM_F_READS,     /* reads after the enter reading, for nested reads */
    PM_FRAME_HEADER
};
/* Frame modes beyond enum pm_mode: a begin folded into the overflow bucket
 * that is already the innermost region (no time, no counts); a region a
 * thread is only placed under (pm_thread_place: no visit, no time, no
 * counts, its frame's name stored as -1 - name so no end call matches it). */
#define PM_FRAME_PLACED 6
#define PM_FRAME_FOLDED 7

struct pm_name_slot {
    const char *key;       /* the caller's pointer */
    const char *interned;  /* to check the caller did not reuse the buffer */
    int32_t id;
    int32_t memo_parent;   /* last parent this name was entered under ... */
    int32_t memo_node;     /* ... and the node it gave (skips the tree hash) */
};

struct pm_handle_memo {
    int32_t name, parent, node;
};

#define PM_HANDLE_MEMO 256

/* Where a thread's totals come from (/threads.totals_from). */
enum pm_totals_from {
    PM_TOTALS_OWN = 0,          /* its own counters, from its start or first sight */
    PM_TOTALS_AT_EXIT = 1,      /* the kernel's record at its exit: birth to exit */
    PM_TOTALS_FIRST_REGION = 2, /* its own counters from its first region (running at the write) */
    PM_TOTALS_PROC = 3,         /* /proc, software events only (running at the write, never in a region) */
    PM_TOTALS_NONE = 4,         /* none: its exit record was lost (not counted) */
};

/* What pthread_create (or thrd_create) was asked to run: the start
 * wrapper (wrappers/threads) hands it to the new thread through its
 * prepared state. */
struct pm_thread_birth {
    void *(*start)(void *);
    int (*start_c11)(void *);
    void *arg;
};

struct pm_thread {
    /* Hot: what every enter and exit touches, first and together (the
     * counter read between them evicts much of L1). */
    int32_t cur;            /* innermost open node, -1 at top */
    struct pm_sample_cursor smpc;  /* the sampling ring's head and our tail (pm_sampler.h) */
    int32_t depth, stack_cap;
    int cpu_last;           /* CPU at the latest exit (written on every exit) */
    unsigned stride;        /* words per reading: E counts, G enabled, G running */
    unsigned frame_words;
    uint32_t child_mask;
    uint64_t *stack;        /* frames of frame_words: PM_F_* header, then the reading */
    struct pm_node *nodes;  /* region tree, parents before children */
    uint64_t *acc;          /* nodes × stride accumulated deltas */
    uint64_t *scratch;      /* reading at exit */
    uint64_t reads;         /* counter reads so far: windows between reads */
    uint64_t throttle_warmup, throttle_ticks;  /* pm_policy, copied to the hot lines */
    uint64_t poll_countdown;  /* poll visits until the next timed one */
    uint64_t rng;             /* xorshift state for the poll sampling stride */
    uint64_t base_generation;
    /* The name cache and the handle memo (11 KiB): allocated when the
     * thread first enters a region (pm_thread_tables), freed at its end, so
     * that a thread that never does (counted from its birth all the same)
     * costs no more than its totals. */
    struct pm_name_slot *cache;          /* PM_NAME_CACHE slots */
    struct pm_handle_memo *handle_memo;  /* PM_HANDLE_MEMO slots */
    int32_t *child;         /* hash (parent, name) → node; -1 empty */
    uint64_t *child_key;
    struct pm_counterset cs;

    /* Cold: thread identity, totals, growth. */
    struct pm_node_cold *cold;  /* per node */
    int32_t nnodes, node_cap;
    int32_t overflow_node;  /* "too many regions" bucket, -1 until needed */
    int32_t index;          /* thread number in this process, order of first sight */
    pid_t tid;
    int cpu_first;
    char binding[64];       /* CPU affinity as a cpulist when first seen (after PERFMARK_PIN) */
    int exited;
    int adopted;            /* 1: running before perfmark started, counted from outside
                               since; 2: it has since called a marker and took over */
    int excluded;           /* left out by its name (PERFMARK_THREADS_EXCLUDE) */
    char name[16];          /* the thread's name at its end (comm, 15 bytes) */
    struct pm_thread_birth birth;  /* the start wrapper's routine and argument, carried
                                      here so that the new thread allocates nothing
                                      (zeros: not born through the wrapper) */
    int32_t pin_slot;       /* its place in PERFMARK_PIN=threads' order, -1 until its
                               first region or construct */
    int open_at_end;
    /* Counted by the process-wide set from its birth (no counters of its
     * own until its first region): its totals are the kernel's record at
     * its exit (pm_thread_exits.h), or, still running at the write, its own
     * counters' or /proc's. */
    int by_exit;
    uint32_t exit_groups;   /* groups of its exit record taken so far (into scratch) */
    struct pm_thread *exit_next;  /* in the stack of threads ended, not yet expected */
    uint64_t born_ns;       /* CLOCK_MONOTONIC at its birth: which of the threads
                               given one tid an exit record belongs to */
    int totals_from;        /* enum pm_totals_from */
    const struct pm_eventset *set;
    uint64_t *base;         /* reading the thread totals run from */
    uint32_t total_flags;   /* LOST_GENERATION if the totals missed a reopen */
    int final_read;         /* t->base is a reading taken at the end (take-back may use it) */
    int totals_fresh;       /* totals just (re)started: the next rebase is expected */
    uint64_t *total;        /* whole-thread totals (stride words) */
    uint64_t start_ticks, end_ticks;
    /* Held while the thread settles itself at its exit, or while the
     * finalizing thread settles it at process exit: the two may race. */
    pthread_mutex_t settle_lock;
    struct pm_sampler smp;  /* samples by region (idle when not sampling) */
};

/* The calling thread's state, NULL until its first marker call. */
extern __thread struct pm_thread *pm_self __attribute__((tls_model("initial-exec")));

/* The start routine a thread was born with, or NULL. */
static inline const void *pm_thread_start_fn(const struct pm_thread *t)
{
    return t->birth.start ? (const void *)t->birth.start : (const void *)t->birth.start_c11;
}

struct pm_thread *pm_thread_create(const struct pm_eventset *set, int bind_cpu, int pinned,
                                   int32_t index);
/* pm_thread_create in two steps: the state allocated on any thread (the one
 * starting a thread: the new thread's first allocation would make glibc
 * build it a malloc arena, most of what a thread's start cost perfmark),
 * then started on the thread itself (its counters opened). An allocated
 * state never started is freed with pm_thread_free_unstarted. */
struct pm_thread *pm_thread_alloc(const struct pm_eventset *set, int32_t index, pid_t tid);
void pm_thread_start(struct pm_thread *t, int bind_cpu, int pinned);
/* The same for a thread the process-wide set counts from its birth
 * (by_exit): no counters of its own until pm_thread_open_counters, at its
 * first region. */
void pm_thread_start_by_exit(struct pm_thread *t);
void pm_thread_open_counters(struct pm_thread *t, int bind_cpu, int pinned);
void pm_thread_free_unstarted(struct pm_thread *t);
/* The tables a thread needs to enter regions (its name cache and handle
 * memo): 0 when allocated (before its pm_self is set), -1 without memory.
 * Released at its end: nothing enters a region after. */
int pm_thread_tables(struct pm_thread *t);
void pm_thread_release_tables(struct pm_thread *t);
/* A thread of this process that was already running when perfmark started
 * (`tid`): its counters opened on it from the calling thread, its totals
 * from now; no samples. It takes its state over at its first marker
 * (pm_thread_take_over, on that thread). */
struct pm_thread *pm_thread_adopt(const struct pm_eventset *set, int bind_cpu, int pinned,
                                  int32_t index, pid_t tid);
void pm_thread_take_over(struct pm_thread *t);

/* Region by name id (handles): 0 when entered (exit it), -1 when the call
 * was refused, PM_ENTER_COUNTED when a poll visit was counted without a
 * frame (do not exit it). */
#define PM_ENTER_COUNTED 1
int pm_thread_enter(struct pm_thread *t, int32_t name);
/* Place the thread under region `name` (below its innermost one) without
 * visiting it: what it enters next nests there, so an OpenMP worker's work
 * sits at the path its team was forked from. Undone by pm_thread_unplace
 * (the innermost frame must be a placement). 0 or -1. */
int pm_thread_place(struct pm_thread *t, int32_t name);
int pm_thread_unplace(struct pm_thread *t);
/* The names of the regions from the top down to the innermost open one (or
 * placement), at most `max`; how many there are (more than `max`: the
 * caller had too little room). */
int32_t pm_thread_path(const struct pm_thread *t, int32_t *names, int32_t max);
int pm_thread_exit(struct pm_thread *t, int32_t name);
/* Automatic region exit with the bytes the call moved (< 0: unknown). */
int pm_thread_exit_bytes(struct pm_thread *t, int32_t name, int64_t bytes);
/* Region by name string; same contract. */
int pm_thread_begin_name(struct pm_thread *t, const char *name);
int pm_thread_end_name(struct pm_thread *t, const char *name);
int32_t pm_thread_name_id(struct pm_thread *t, const char *name);
/* Close every open region (flagged UNBALANCED), settle totals. `why` names
 * the occasion for the message ("exited", "is still running at exit"). */
void pm_thread_finish(struct pm_thread *t, const char *why);
/* Settle totals of a thread that is still running elsewhere; its open
 * visits are counted up to now (flagged PARTIAL and UNBALANCED) but not
 * closed. */
void pm_thread_finish_remote(struct pm_thread *t);
/* In a fork child: reopen counters lazily, forget the parent's data. */
void pm_thread_after_fork(struct pm_thread *t);
/* Any data worth writing? */
int pm_thread_has_data(const struct pm_thread *t);

#endif
