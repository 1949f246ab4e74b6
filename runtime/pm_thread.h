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

#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>

#define PM_NAME_CACHE 256

/* One cache line exactly (the array is 64-byte aligned): every counter
 * read evicts much of L1, and a node touched at each exit should cost one
 * line to bring back. */
struct pm_node {
    int32_t parent;   /* node index, -1 at top level */
    int32_t name;     /* pm_names id */
    uint32_t flags;   /* pm_flag bits */
    uint32_t depth;
    uint64_t visits;
    uint64_t ticks;   /* inclusive, pm_clock ticks */
    const char *str;  /* the interned name, for end(name) without a lookup */
    uint64_t windows;        /* counter read windows inside the visits (TopDown SHORT) */
    uint64_t bytes;          /* automatic regions: bytes moved (MPI: count x type size) */
    uint32_t bytes_unknown;  /* visits whose byte count could not be determined (saturates) */
    uint8_t kind;            /* enum pm_kind */
} __attribute__((aligned(64)));

_Static_assert(sizeof(struct pm_node) == 64, "struct pm_node must stay one cache line");

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

struct pm_thread {
    /* Hot: what every enter and exit touches, first and together (the
     * counter read between them evicts much of L1). */
    int32_t cur;            /* innermost open node, -1 at top */
    int32_t depth, stack_cap;
    int cpu_last;           /* CPU at the latest exit (written on every exit) */
    unsigned stride;        /* words per reading: E counts, G enabled, G running */
    unsigned frame_words;
    uint32_t child_mask;
    uint64_t *stack;        /* frames of frame_words: node|cpu, ticks, generation, reads, reading */
    struct pm_node *nodes;  /* region tree, parents before children */
    uint64_t *acc;          /* nodes × stride accumulated deltas */
    uint64_t *scratch;      /* reading at exit */
    uint64_t reads;         /* counter reads so far: windows between reads */
    uint64_t base_generation;
    int32_t *child;         /* hash (parent, name) → node; -1 empty */
    uint64_t *child_key;
    struct pm_counterset cs;

    /* Cold: thread identity, totals, growth. */
    int32_t nnodes, node_cap;
    int32_t overflow_node;  /* "too many regions" bucket, -1 until needed */
    int32_t index;          /* thread number in this process, order of first sight */
    pid_t tid;
    int cpu_first;
    char binding[64];       /* CPU affinity as a cpulist when first seen (after PERFMARK_PIN) */
    int exited;
    int open_at_end;
    uint64_t *base;         /* reading the thread totals run from */
    uint32_t total_flags;   /* LOST_GENERATION if the totals missed a reopen */
    int totals_fresh;       /* totals just (re)started: the next rebase is expected */
    uint64_t *total;        /* whole-thread totals (stride words) */
    uint64_t start_ticks, end_ticks;
    /* Held while the thread settles itself at its exit, or while the
     * finalizing thread settles it at process exit: the two may race. */
    pthread_mutex_t settle_lock;

    struct pm_name_slot cache[PM_NAME_CACHE];
    struct pm_handle_memo handle_memo[PM_HANDLE_MEMO];
};

/* The calling thread's state, NULL until its first marker call. */
extern __thread struct pm_thread *pm_self __attribute__((tls_model("initial-exec")));

struct pm_thread *pm_thread_create(const struct pm_eventset *set, int bind_cpu, int pinned,
                                   int32_t index);
/* Region by name id (handles); 0, or -1 when the call was unbalanced. */
int pm_thread_enter(struct pm_thread *t, int32_t name);
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
 * regions are flagged but not closed. */
void pm_thread_finish_remote(struct pm_thread *t);
/* In a fork child: reopen counters lazily, forget the parent's data. */
void pm_thread_after_fork(struct pm_thread *t);
/* Any data worth writing? */
int pm_thread_has_data(const struct pm_thread *t);

#endif
