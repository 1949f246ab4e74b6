#define _GNU_SOURCE
#include "pm_sampler.h"
#include "pm_unwind.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

static uint32_t pm_max_sites = 1u << 20;

void pm_sampler_set_max_sites(uint32_t max_sites) { pm_max_sites = max_sites ? max_sites : 1; }

/* ---- open, close ------------------------------------------------------------ */

static void pm_sampler_idle(struct pm_sampler *s)
{
    s->cursor->head = NULL;
    __atomic_store_n(&s->cursor->tail, 0, __ATOMIC_RELAXED);
}

static void pm_sampler_close_fds(struct pm_sampler *s)
{
    for (int i = 0; i < s->nevents; i++) {
        if (s->fd[i] >= 0)
            close(s->fd[i]);
        s->fd[i] = -1;
    }
}

/* Map the first event's ring: the asked size, else smaller (the kernel
 * charges rings to a per-user budget, perf_event_mlock_kb). */
static int pm_sampler_map(struct pm_sampler *s, unsigned pages)
{
    size_t pagesize = (size_t)sysconf(_SC_PAGESIZE);
    for (; pages >= 1; pages /= 2) {
        size_t bytes = (1 + (size_t)pages) * pagesize;
        void *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, s->fd[0], 0);
        if (m != MAP_FAILED) {
            s->page = m;
            s->data = (unsigned char *)m + pagesize;
            s->data_bytes = (size_t)pages * pagesize;
            s->map_bytes = bytes;
            return 0;
        }
        if (errno != EPERM && errno != ENOMEM)
            return -1;
    }
    return -1;
}

int pm_sampler_open(struct pm_sampler *s, pid_t tid, struct pm_sample_cursor *cursor,
                    const int32_t *cur, const struct pm_sample_spec *spec)
{
    memset(s, 0, sizeof *s);
    s->cursor = cursor;
    s->cur = cur;
    s->tid = tid;
    s->max_sites = pm_max_sites;
    for (int i = 0; i < PM_MAX_SAMPLE_EVENTS; i++)
        s->fd[i] = -1;
    pm_sampler_idle(s);
    if (!spec || !spec->n)
        return 0;
    s->nevents = spec->n;
    s->callchain = spec->callchain;
    s->stack_bytes = spec->stack_bytes;
    int err = 0;
    for (int i = 0; i < spec->n && !err; i++) {
        struct perf_event_attr attr = spec->ev[i].attr;
        s->fd[i] = pm_perf_open(&attr, -1, -1);
        if (s->fd[i] < 0 || ioctl(s->fd[i], PERF_EVENT_IOC_ID, &s->id[i]) != 0)
            err = errno ? errno : EINVAL;
    }
    if (!err && pm_sampler_map(s, spec->pages) != 0)
        err = errno ? errno : ENOMEM;
    /* Every event writes into the first one's ring. */
    for (int i = 1; i < spec->n && !err; i++)
        if (ioctl(s->fd[i], PERF_EVENT_IOC_SET_OUTPUT, s->fd[0]) != 0)
            err = errno;
    if (err) {
        if (s->page)
            munmap(s->page, s->map_bytes);
        s->page = NULL;
        pm_sampler_close_fds(s);
        s->nevents = 0;
        errno = err;
        return -1;
    }
    s->cursor->head = (const volatile uint64_t *)&s->page->data_head;
    for (int i = 0; i < spec->n; i++)
        ioctl(s->fd[i], PERF_EVENT_IOC_ENABLE, 0);
    return 0;
}

static inline void pm_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ volatile("yield");
#endif
}

static void pm_sampler_lock(struct pm_sampler *s)
{
    for (unsigned spins = 0; __atomic_exchange_n(&s->lock, 1, __ATOMIC_ACQUIRE); spins++) {
        if (spins > 64)
            sched_yield();  /* the holder may have been descheduled */
        else
            pm_cpu_relax();
    }
}

static void pm_sampler_unlock(struct pm_sampler *s)
{
    __atomic_store_n(&s->lock, 0, __ATOMIC_RELEASE);
}

void pm_sampler_close(struct pm_sampler *s)
{
    if (!s->page)
        return;
    pm_sampler_lock(s);
    for (int i = 0; i < s->nevents; i++)
        ioctl(s->fd[i], PERF_EVENT_IOC_DISABLE, 0);
    struct perf_event_mmap_page *page = s->page;
    pm_sampler_idle(s);
    s->page = NULL;
    s->data = NULL;
    munmap(page, s->map_bytes);
    pm_sampler_close_fds(s);
    pm_sampler_unlock(s);
}

void pm_sampler_forget(struct pm_sampler *s)
{
    /* The mapping in this child is a copy of the parent's ring: drop our
     * view of it, never consume from it. */
    if (s->page)
        munmap(s->page, s->map_bytes);
    s->page = NULL;
    s->data = NULL;
    pm_sampler_close_fds(s);
    pm_sampler_idle(s);
    s->lock = 0;
    if (s->sites)
        memset(s->sites, 0xff, ((size_t)s->mask + 1) * sizeof *s->sites);
    s->nsites = 0;
    s->sites_full = 0;
    if (s->nodestat)
        memset(s->nodestat, 0, (size_t)s->nodestat_cap * (size_t)s->nevents * PM_SN_WORDS * 8);
    s->nchains = s->chain_ips_used = 0;
    if (s->chain_hash)
        memset(s->chain_hash, 0, ((size_t)s->chain_hash_mask + 1) * sizeof *s->chain_hash);
    s->stash_used = 0;
    s->stacks_unwound = s->stacks_dropped = s->stacks_failed = 0;
    s->records = s->bad_records = s->unknown_ids = 0;
}

/* ---- what is kept -------------------------------------------------------------- */

static uint64_t *pm_nodestat_slot(struct pm_sampler *s, int32_t node, int event)
{
    int32_t row = node + 1;
    if (row < 0)
        return NULL;
    if (row >= s->nodestat_cap) {
        int32_t cap = s->nodestat_cap ? s->nodestat_cap : 16;
        while (cap <= row)
            cap *= 2;
        size_t words = (size_t)s->nevents * PM_SN_WORDS;
        uint64_t *grown = realloc(s->nodestat, (size_t)cap * words * 8);
        if (!grown)
            return NULL;
        memset(grown + (size_t)s->nodestat_cap * words, 0,
               (size_t)(cap - s->nodestat_cap) * words * 8);
        s->nodestat = grown;
        s->nodestat_cap = cap;
    }
    return s->nodestat + ((size_t)row * (size_t)s->nevents + (size_t)event) * PM_SN_WORDS;
}

int pm_sampler_has_data(const struct pm_sampler *s)
{
    return s->nsites > 0 || s->nodestat_cap > 0;
}

static inline uint64_t pm_mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return x;
}

static uint32_t pm_site_hash(uint64_t ip, int32_t node, uint32_t event, uint32_t chain)
{
    return (uint32_t)pm_mix(ip ^ pm_mix((uint64_t)(uint32_t)node << 32 | event) ^
                            (uint64_t)chain << 17);
}

static int pm_sites_grow(struct pm_sampler *s)
{
    uint32_t size = s->mask ? (s->mask + 1) * 2 : 256;
    struct pm_sample_site *sites = malloc((size_t)size * sizeof *sites);
    if (!sites)
        return -1;
    memset(sites, 0xff, (size_t)size * sizeof *sites);
    for (uint32_t i = 0; s->sites && i <= s->mask; i++) {
        const struct pm_sample_site *old = &s->sites[i];
        if (old->event == UINT32_MAX)
            continue;
        uint32_t h = pm_site_hash(old->ip, old->node, old->event, old->chain) & (size - 1);
        while (sites[h].event != UINT32_MAX)
            h = (h + 1) & (size - 1);
        sites[h] = *old;
    }
    free(s->sites);
    s->sites = sites;
    s->mask = size - 1;
    return 0;
}

/* The slot of (node, event, ip, chain), created if new; NULL when memory is
 * short. Beyond the cap a new IP goes to the node's "other" site. */
static struct pm_sample_site *pm_site(struct pm_sampler *s, int32_t node, uint32_t event,
                                      uint64_t ip, uint32_t chain)
{
    if ((s->nsites + 1) * 2 > s->mask + 1 && pm_sites_grow(s) != 0)
        return NULL;
    for (int attempt = 0; attempt < 2; attempt++) {
        uint32_t h = pm_site_hash(ip, node, event, chain) & s->mask;
        for (;; h = (h + 1) & s->mask) {
            struct pm_sample_site *e = &s->sites[h];
            if (e->event == UINT32_MAX)
                break;
            if (e->ip == ip && e->node == node && e->event == event && e->chain == chain)
                return e;
        }
        if (s->nsites < s->max_sites || ip == PM_SAMPLE_OTHER_IP) {
            struct pm_sample_site *e = &s->sites[h];
            *e = (struct pm_sample_site){.ip = ip, .node = node, .event = event, .chain = chain};
            s->nsites++;
            return e;
        }
        s->sites_full = 1;
        ip = PM_SAMPLE_OTHER_IP;
        chain = 0;
    }
    return NULL;
}

/* ---- call chains ------------------------------------------------------------------ */

#define PM_CHAIN_MAX 64

static uint32_t pm_chain_hash(const uint64_t *ips, uint32_t n)
{
    uint64_t h = n;
    for (uint32_t i = 0; i < n; i++)
        h = pm_mix(h ^ ips[i]);
    return (uint32_t)h | 1;
}

static int pm_chain_table_grow(struct pm_sampler *s)
{
    uint32_t size = s->chain_hash_mask ? (s->chain_hash_mask + 1) * 2 : 256;
    uint32_t *hash = calloc(size, sizeof *hash);
    if (!hash)
        return -1;
    for (uint32_t k = 0; k < s->nchains; k++) {
        uint32_t h = pm_chain_hash(s->chain_ips + s->chain_start[k], s->chain_len[k]) & (size - 1);
        while (hash[h])
            h = (h + 1) & (size - 1);
        hash[h] = k + 1;
    }
    free(s->chain_hash);
    s->chain_hash = hash;
    s->chain_hash_mask = size - 1;
    return 0;
}

/* The id + 1 of this chain of caller IPs (interned), 0 if it cannot be kept. */
static uint32_t pm_chain_id(struct pm_sampler *s, const uint64_t *ips, uint32_t n)
{
    if (!n)
        return 0;
    if ((s->nchains + 1) * 2 > s->chain_hash_mask && pm_chain_table_grow(s) != 0)
        return 0;
    uint32_t h = pm_chain_hash(ips, n) & s->chain_hash_mask;
    for (; s->chain_hash[h]; h = (h + 1) & s->chain_hash_mask) {
        uint32_t k = s->chain_hash[h] - 1;
        if (s->chain_len[k] == n && memcmp(s->chain_ips + s->chain_start[k], ips, n * 8) == 0)
            return k + 1;
    }
    if (s->nchains >= s->max_sites)
        return 0;
    if (s->nchains == s->chain_cap) {
        uint32_t cap = s->chain_cap ? s->chain_cap * 2 : 256;
        uint32_t *start = realloc(s->chain_start, cap * sizeof *start);
        if (!start)
            return 0;
        s->chain_start = start;
        uint32_t *len = realloc(s->chain_len, cap * sizeof *len);
        if (!len)
            return 0;
        s->chain_len = len;
        s->chain_cap = cap;
    }
    if (s->chain_ips_used + n > s->chain_ips_cap) {
        uint32_t cap = s->chain_ips_cap ? s->chain_ips_cap : 4096;
        while (cap < s->chain_ips_used + n)
            cap *= 2;
        uint64_t *grown = realloc(s->chain_ips, (size_t)cap * 8);
        if (!grown)
            return 0;
        s->chain_ips = grown;
        s->chain_ips_cap = cap;
    }
    uint32_t k = s->nchains++;
    s->chain_start[k] = s->chain_ips_used;
    s->chain_len[k] = n;
    memcpy(s->chain_ips + s->chain_ips_used, ips, n * 8);
    s->chain_ips_used += n;
    s->chain_hash[h] = k + 1;
    return k + 1;
}

/* ---- the ring --------------------------------------------------------------------- */

/* Word `pos` bytes into the ring (records are 8-byte aligned, so a word
 * never straddles the end). */
static inline uint64_t pm_ring_word(const struct pm_sampler *s, uint64_t pos)
{
    return *(const uint64_t *)(s->data + (pos & (s->data_bytes - 1)));
}

static int pm_event_of(const struct pm_sampler *s, uint64_t id)
{
    for (int i = 0; i < s->nevents; i++)
        if (s->id[i] == id)
            return i;
    return -1;
}

/* A copied stack waiting for the unwinder: the sample's registers in DWARF
 * order and `bytes` of stack from its SP. */
struct pm_stack_rec {
    int32_t node;
    uint32_t event;
    uint64_t ip;
    uint64_t bytes;
    uint64_t regs[PM_UNWIND_NREGS];
};

/* Bytes `pos`.. of the ring into out (a record may wrap around its end). */
static void pm_ring_copy(const struct pm_sampler *s, uint64_t pos, void *out, size_t len)
{
    size_t at = (size_t)(pos & (s->data_bytes - 1)), first = s->data_bytes - at;
    if (first > len)
        first = len;
    memcpy(out, s->data + at, first);
    memcpy((unsigned char *)out + first, s->data, len - first);
}

/* Keep the sample's registers and stack for pm_sampler_unwind: 0; -1 when
 * the record has none to unwind (no user registers: a kernel thread), -2
 * when the stash is full (the sample then counts without callers). The
 * record: abi, regs (abi != 0), size, data[size], dyn_size (size != 0)
 * after the id and the IP. */
static int pm_stash_stack(struct pm_sampler *s, uint64_t pos, uint64_t size, int32_t node,
                          int event, uint64_t ip)
{
    uint64_t at = 24, nregs = (uint64_t)__builtin_popcountll(PM_UNWIND_REGS_MASK);
    if (!PM_UNWIND_SUPPORTED || size < at + 16 || pm_ring_word(s, pos + at) == 0)
        return -1;
    uint64_t regs_at = at + 8;
    at = regs_at + 8 * nregs;
    if (at + 16 > size)
        return -1;
    uint64_t copied = pm_ring_word(s, pos + at);
    if (copied == 0 || copied > size - at - 16)
        return -1;
    uint64_t used = pm_ring_word(s, pos + at + 8 + copied);
    if (used > copied)
        used = copied;
    used &= ~7ull;
    size_t need = sizeof(struct pm_stack_rec) + (size_t)used;
    if (s->stash_closed || s->stash_used + need > PM_STASH_MAX)
        return -2;
    if (s->stash_used + need > s->stash_cap) {
        size_t cap = s->stash_cap ? s->stash_cap : 64 * 1024;
        while (cap < s->stash_used + need)
            cap *= 2;
        unsigned char *grown = realloc(s->stash, cap);
        if (!grown)
            return -2;
        s->stash = grown;
        s->stash_cap = cap;
    }
    struct pm_stack_rec rec = {.node = node, .event = (uint32_t)event, .ip = ip, .bytes = used};
    uint64_t sample_regs[PM_UNWIND_NREGS];
    for (uint64_t i = 0; i < nregs && i < PM_UNWIND_NREGS; i++)
        sample_regs[i] = pm_ring_word(s, pos + regs_at + 8 * i);
    pm_unwind_regs_from_sample(sample_regs, rec.regs);
    memcpy(s->stash + s->stash_used, &rec, sizeof rec);
    pm_ring_copy(s, pos + at + 8, s->stash + s->stash_used + sizeof rec, (size_t)used);
    s->stash_used += need;
    return 0;
}

/* Count one sample at (node, event, ip) with its chain of callers. */
static void pm_count_sample(struct pm_sampler *s, int32_t node, int event, uint64_t ip,
                            uint32_t chain)
{
    struct pm_sample_site *site = pm_site(s, node, (uint32_t)event, ip, chain);
    if (site)
        site->count++;
}

static void pm_take_sample(struct pm_sampler *s, uint64_t pos, uint64_t size, int32_t node)
{
    int event = pm_event_of(s, pm_ring_word(s, pos + 8));
    if (event < 0) {
        s->unknown_ids++;
        return;
    }
    uint64_t ip = pm_ring_word(s, pos + 16);
    uint64_t *stat = pm_nodestat_slot(s, node, event);
    if (stat)
        stat[PM_SN_SAMPLES]++;
    if (s->callchain == PM_CHAIN_DWARF) {
        /* counted once unwound; one without a stack to unwind, now */
        int kept = pm_stash_stack(s, pos, size, node, event, ip);
        if (kept == 0)
            return;
        if (kept == -1)
            s->stacks_failed++;
        else
            s->stacks_dropped++;
        pm_count_sample(s, node, event, ip, 0);
        return;
    }
    uint32_t chain = 0;
    if (s->callchain == PM_CHAIN_FP && size >= 32) {
        uint64_t nr = pm_ring_word(s, pos + 24), ips[PM_CHAIN_MAX];
        uint32_t n = 0;
        if (nr > (size - 32) / 8)
            nr = (size - 32) / 8;
        for (uint64_t i = 0; i < nr && n < PM_CHAIN_MAX; i++) {
            uint64_t a = pm_ring_word(s, pos + 32 + 8 * i);
            if (a >= (uint64_t)PERF_CONTEXT_MAX)  /* PERF_CONTEXT_USER and friends */
                continue;
            if (n == 0 && a == ip)  /* the sampled IP itself */
                continue;
            ips[n++] = a;
        }
        chain = pm_chain_id(s, ips, n);
    }
    pm_count_sample(s, node, event, ip, chain);
}

/* A LOST, LOST_SAMPLES or THROTTLE record: its event is the last word (the
 * sample_id's identifier). */
static void pm_take_loss(struct pm_sampler *s, uint32_t type, uint64_t pos, uint64_t size,
                         int32_t node)
{
    int event = pm_event_of(s, pm_ring_word(s, pos + size - 8));
    if (event < 0)
        event = 0;  /* a loss of the ring itself: credit the first event */
    uint64_t *stat = pm_nodestat_slot(s, node, event);
    if (!stat)
        return;
    if (type == PERF_RECORD_LOST)
        stat[PM_SN_LOST] += pm_ring_word(s, pos + 16);
    else if (type == PERF_RECORD_LOST_SAMPLES)
        stat[PM_SN_LOST] += pm_ring_word(s, pos + 8);
    else
        stat[PM_SN_THROTTLED]++;
}

/* Everything in the ring, credited to the innermost node now. Caller holds
 * the lock. */
static void pm_sampler_drain_locked(struct pm_sampler *s)
{
    if (!s->page)
        return;
    uint64_t head = __atomic_load_n(&s->page->data_head, __ATOMIC_ACQUIRE);
    uint64_t tail = s->cursor->tail;
    int32_t node = __atomic_load_n(s->cur, __ATOMIC_RELAXED);
    while (tail < head) {
        uint64_t w = pm_ring_word(s, tail);
        uint32_t type = (uint32_t)w;
        uint64_t size = w >> 48;
        if (size < 8 || size % 8 || tail + size > head) {
            s->bad_records++;
            tail = head;  /* nothing after a broken record can be trusted */
            break;
        }
        s->records++;
        if (type == PERF_RECORD_SAMPLE && size >= 24)
            pm_take_sample(s, tail, size, node);
        else if ((type == PERF_RECORD_LOST && size >= 32) ||
                 (type == PERF_RECORD_LOST_SAMPLES && size >= 24) ||
                 (type == PERF_RECORD_THROTTLE && size >= 40))
            pm_take_loss(s, type, tail, size, node);
        tail += size;
    }
    __atomic_store_n(&s->page->data_tail, tail, __ATOMIC_RELEASE);
    __atomic_store_n(&s->cursor->tail, tail, __ATOMIC_RELEASE);
}

void pm_sampler_drain_owner(struct pm_sampler *s)
{
    int saved = errno;  /* growing the tables may touch it; it is the program's */
    pm_sampler_lock(s);
    pm_sampler_drain_locked(s);
    pm_sampler_unlock(s);
    errno = saved;
}

int pm_sampler_drain_try(struct pm_sampler *s)
{
    if (__atomic_exchange_n(&s->lock, 1, __ATOMIC_ACQUIRE))
        return 0;
    pm_sampler_drain_locked(s);
    pm_sampler_unlock(s);
    return 1;
}

/* ---- DWARF call paths ------------------------------------------------------------ */

static int pm_unwind_stopped;

void pm_sampler_unwind_stop(void) { __atomic_store_n(&pm_unwind_stopped, 1, __ATOMIC_RELEASE); }

int pm_sampler_unwind(struct pm_sampler *s)
{
    if (s->callchain != PM_CHAIN_DWARF || !__atomic_load_n(&s->stash_used, __ATOMIC_RELAXED))
        return 0;
    int saved = errno;
    /* Take the stash, leave the spare: the owner goes on copying into it
     * while the stacks are unwound without the lock. */
    pm_sampler_lock(s);
    unsigned char *buf = s->stash;
    size_t used = s->stash_used, cap = s->stash_cap;
    s->stash = s->spare;
    s->stash_cap = s->spare_cap;
    s->stash_used = 0;
    s->spare = NULL;
    s->spare_cap = 0;
    pm_sampler_unlock(s);
    for (size_t at = 0; at + sizeof(struct pm_stack_rec) <= used;) {
        struct pm_stack_rec rec;
        memcpy(&rec, buf + at, sizeof rec);
        const unsigned char *stack = buf + at + sizeof rec;
        at += sizeof rec + (size_t)rec.bytes;
        uint64_t callers[PM_CHAIN_MAX];
        /* a sample taken in the kernel (a system call): the user IP where
         * it entered is its innermost caller */
        int in_kernel = rec.ip != rec.regs[PM_UNWIND_IP];
        if (in_kernel)
            callers[0] = rec.regs[PM_UNWIND_IP];
        if (__atomic_load_n(&pm_unwind_stopped, __ATOMIC_ACQUIRE))
            break;  /* the emergency dump writes the tables now: leave them be */
        int n = pm_unwind_stack(rec.regs, stack, (size_t)rec.bytes, callers + in_kernel,
                                PM_CHAIN_MAX - in_kernel);
        n = n < 0 ? in_kernel : n + in_kernel;
        pm_sampler_lock(s);
        if (n > 0)
            s->stacks_unwound++;
        else
            s->stacks_failed++;
        uint32_t chain = n > 0 ? pm_chain_id(s, callers, (uint32_t)n) : 0;
        pm_count_sample(s, rec.node, (int)rec.event, rec.ip, chain);
        pm_sampler_unlock(s);
    }
    pm_sampler_lock(s);
    if (!s->spare && !s->stash_closed) {
        s->spare = buf;
        s->spare_cap = cap;
        buf = NULL;
    }
    pm_sampler_unlock(s);
    free(buf);
    errno = saved;
    return 1;
}

void pm_sampler_stash_free(struct pm_sampler *s)
{
    pm_sampler_lock(s);
    free(s->stash);
    free(s->spare);
    s->stash = s->spare = NULL;
    s->stash_used = s->stash_cap = s->spare_cap = 0;
    s->stash_closed = 1;
    pm_sampler_unlock(s);
}
