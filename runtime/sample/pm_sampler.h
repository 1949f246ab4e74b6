/* pm_sampler — one thread's samples: its sampling events write into one
 * perf ring buffer (the kernel formats each sample; no signal reaches the
 * program), and the records are attributed to the region open on the
 * thread at the moment they were taken.
 *
 * Why attribution is exact without timestamps: the innermost region only
 * changes in a marker, and every marker first empties the ring (one
 * compare of the ring's head with our tail when nothing is pending). So
 * whatever the ring holds was taken while the current innermost region was
 * open, and whoever drains it — the owner in a marker, or the process's
 * drainer thread when the ring fills inside a long region — credits it to
 * that region. The two never drain at once (a lock taken only when there is
 * something to drain). docs/design.md, "Sampling".
 *
 * What is kept: per (region node, event, instruction pointer) a count; per
 * (node, event) the samples, and the samples the kernel lost (PERF_RECORD_LOST)
 * or throttled (PERF_RECORD_THROTTLE). Node -1 is the thread's root: samples
 * taken outside every region. Memory grows with distinct (node, IP) pairs,
 * capped (PERFMARK_SAMPLE_MAX_SITES): beyond, a node's new IPs fold into
 * one "other" site per (node, event). */
#ifndef PM_SAMPLER_H
#define PM_SAMPLER_H

#include "pm_sample_spec.h"

#include <stdint.h>
#include <sys/types.h>

/* The owner's hot view of its ring: a marker compares *head with tail. */
struct pm_sample_cursor {
    const volatile uint64_t *head;  /* the ring's data_head, NULL when not sampling */
    uint64_t tail;                  /* bytes consumed (written under the lock) */
};

/* One (node, event, IP) with its count. ip PM_SAMPLE_OTHER_IP: the node's
 * sites beyond the cap. */
struct pm_sample_site {
    uint64_t ip;
    int32_t node;     /* -1: the thread's root */
    uint32_t event;   /* index into the spec; UINT32_MAX: empty slot */
    uint64_t count;
    uint32_t chain;   /* call chain id + 1 (pm_sampler.chains), 0: none */
    uint32_t pad;
};
#define PM_SAMPLE_OTHER_IP UINT64_MAX

/* Per (node, event): samples, lost samples, throttle episodes. */
enum { PM_SN_SAMPLES, PM_SN_LOST, PM_SN_THROTTLED, PM_SN_WORDS };

struct pm_sampler {
    struct pm_sample_cursor *cursor;  /* in the owner's pm_thread (hot lines) */
    const int32_t *cur;               /* the owner's innermost node */
    int lock;                         /* 1 while someone drains */
    int nevents;
    int fd[PM_MAX_SAMPLE_EVENTS];
    uint64_t id[PM_MAX_SAMPLE_EVENTS];    /* the kernel's id of each event */
    struct perf_event_mmap_page *page;    /* NULL: not sampling */
    unsigned char *data;                  /* the ring's data pages */
    size_t data_bytes, map_bytes;
    int callchain;
    pid_t tid;

    /* sites: open addressing on (node, event, ip, chain) */
    struct pm_sample_site *sites;
    uint32_t mask, nsites, max_sites;
    int sites_full;
    /* per node + 1 (index 0: the root), nevents × PM_SN_WORDS each */
    uint64_t *nodestat;
    int32_t nodestat_cap;
    /* call chains, interned: chain k is chain_ips[chain_start[k] .. +chain_len[k]) */
    uint64_t *chain_ips;
    uint32_t *chain_start, *chain_len, *chain_hash;
    uint32_t nchains, chain_cap, chain_ips_used, chain_ips_cap, chain_hash_mask;
    uint64_t records, bad_records;        /* for messages */
    uint64_t unknown_ids;
    /* DWARF call paths: the copied stacks of samples taken, waiting to be
     * unwound off the sampled thread (pm_sampler_unwind): records of
     * struct pm_stack_rec + the stack, in `stash`; `spare` is an emptied
     * buffer swapped in while the unwinder works on the other. */
    unsigned stack_bytes;
    unsigned char *stash, *spare;
    size_t stash_used, stash_cap, spare_cap;
    int stash_closed;                     /* its thread is gone: no more stashing */
    uint64_t stacks_unwound, stacks_dropped, stacks_failed;
};

/* Open the spec's events on the calling thread (`tid`, its id) into one
 * ring, or leave the sampler idle (cursor->head NULL) with errno set. `cur`
 * is the owner's innermost-node variable. 0 or -1. */
int pm_sampler_open(struct pm_sampler *s, pid_t tid, struct pm_sample_cursor *cursor,
                    const int32_t *cur, const struct pm_sample_spec *spec);
/* Drain in a marker, before the innermost region changes (waits for the
 * drainer thread if it holds the ring). */
void pm_sampler_drain_owner(struct pm_sampler *s);
/* Drain from another thread if no one else is: 1 if drained, 0 if busy. */
int pm_sampler_drain_try(struct pm_sampler *s);
/* Stop sampling and unmap (the owner, at its end; or finalize for a thread
 * that is gone). Counts stay. */
void pm_sampler_close(struct pm_sampler *s);
/* In a fork child: the ring and fds are the parent's. Forget them without
 * touching them; the child samples no more (its counts are reset). */
void pm_sampler_forget(struct pm_sampler *s);
/* Is there anything to drain? Not sampling costs one load and a branch
 * (every marker asks). */
static inline int pm_sampler_pending(const struct pm_sample_cursor *c)
{
    const volatile uint64_t *head = c->head;
    return head && __atomic_load_n(head, __ATOMIC_RELAXED) !=
                       __atomic_load_n(&c->tail, __ATOMIC_RELAXED);
}
/* Per (node, event) word w (PM_SN_*), 0 when never seen. Inline: the
 * writer (pm_h5out_samples.c) and perfmark-attach read it too. */
static inline uint64_t pm_sampler_nodestat(const struct pm_sampler *s, int32_t node, int event,
                                           int w)
{
    int32_t row = node + 1;
    if (row < 0 || row >= s->nodestat_cap || event < 0 || event >= s->nevents)
        return 0;
    return s->nodestat[((size_t)row * (size_t)s->nevents + (size_t)event) * PM_SN_WORDS +
                       (size_t)w];
}
/* Did the kernel lose or throttle samples of any event while `node` was
 * innermost? (the SAMPLES_LOST flag) */
static inline int pm_sampler_node_lost(const struct pm_sampler *s, int32_t node)
{
    for (int e = 0; e < s->nevents; e++)
        if (pm_sampler_nodestat(s, node, e, PM_SN_LOST) ||
            pm_sampler_nodestat(s, node, e, PM_SN_THROTTLED))
            return 1;
    return 0;
}
/* Any samples or losses at all. */
int pm_sampler_has_data(const struct pm_sampler *s);

/* The ring's fd for poll(), or -1. */
static inline int pm_sampler_poll_fd(const struct pm_sampler *s)
{
    return s->page ? s->fd[0] : -1;
}

/* Unwind the stacks copied so far (PM_CHAIN_DWARF) and count their call
 * paths: the drainer thread after a drain, a thread at its exit, the final
 * write. Never the sampled thread in a marker. 1 if there were any. */
int pm_sampler_unwind(struct pm_sampler *s);
/* A thread gone, its last stacks unwound: free the stash (an unwinder
 * still at work frees its buffer itself). */
void pm_sampler_stash_free(struct pm_sampler *s);
/* The emergency dump: unwinders stop at their next stack (the rest count
 * as failed), so that nothing grows the tables while they are written. */
void pm_sampler_unwind_stop(void);
/* Bytes of stacks a thread keeps waiting for the unwinder; past them a
 * sample is counted without its callers (stacks_dropped). */
#define PM_STASH_MAX (1u << 20)

/* PERFMARK_SAMPLE_MAX_SITES: distinct (node, event, IP) per thread. */
void pm_sampler_set_max_sites(uint32_t max_sites);

#endif
