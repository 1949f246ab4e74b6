/*
 * folded.h — a sampled profile as folded stacks: the collapsed-stack text
 * that FlameGraph (flamegraph.pl), inferno and speedscope read. One line per
 * distinct stack: its frames from the root down, joined by ';', a space,
 * its samples. The root frames are the sample's region path (every
 * enclosing region, outermost first), then its recorded callers, outermost
 * first (`perfmark run --sample-callchain`), then the function the sample
 * fell in. Lines are sorted, so the same file gives the same bytes
 * (render/folded.c prints them).
 */
#ifndef PM_FOLDED_H
#define PM_FOLDED_H

#include "h5read.h"

#include <stddef.h>
#include <stdint.h>

/* The sampled event named `want` (its name or the form it was requested
 * in), or the first when want is NULL; SIZE_MAX when there is none. */
size_t pm_folded_event(const struct pm_file *d, const char *want);

/* Distinct stacks, sorted (strcmp), with their samples. */
struct pm_folded {
    char **stack;
    uint64_t *count;
    size_t n;
};

/* Event e's stacks of a file open for streaming. 0, or -1 with a message
 * in err. pm_folded_free either way. */
int pm_folded_build(const struct pm_file *d, size_t e, struct pm_folded *f, char *err,
                    size_t errlen);
void pm_folded_free(struct pm_folded *f);

#endif /* PM_FOLDED_H */
