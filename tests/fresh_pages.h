/* Pages whose first write takes exactly one page fault, for tests that
 * check page-fault counts against ground truth.
 *
 * An anonymous mapping with transparent huge pages off (where THP is
 * "always", a write into a malloc'd buffer can fault in 2 MiB at once), the
 * system's page size (64 KiB on some arm64 kernels), and a ring: when every
 * page has been written, MADV_DONTNEED empties them and the next write to
 * each faults again, so a test of 10^6 faults needs only the ring in memory. */
#ifndef PM_TEST_FRESH_PAGES_H
#define PM_TEST_FRESH_PAGES_H

#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

struct fresh_pages {
    char *base;
    long pages, next, size;
};

static inline void fresh_pages_init(struct fresh_pages *f, long ring_pages)
{
    f->size = sysconf(_SC_PAGESIZE);
    f->pages = ring_pages > 0 ? ring_pages : 1;
    f->next = 0;
    f->base = mmap(NULL, (size_t)(f->pages * f->size), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (f->base == MAP_FAILED) {
        perror("mmap");
        abort();
    }
    madvise(f->base, (size_t)(f->pages * f->size), MADV_NOHUGEPAGE);
}

/* One write to a page not written since it was last emptied: one fault. */
static inline void fresh_pages_touch(struct fresh_pages *f)
{
    if (f->next == f->pages) {
        madvise(f->base, (size_t)(f->pages * f->size), MADV_DONTNEED);
        f->next = 0;
    }
    ((volatile char *)f->base)[f->next++ * f->size] = 1;
}

static inline void fresh_pages_free(struct fresh_pages *f)
{
    munmap(f->base, (size_t)(f->pages * f->size));
}

#endif
