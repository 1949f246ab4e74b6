/*
 * flame.h — a sampled profile as a tree for a flame graph (an icicle: the
 * root on top): the folded stacks (folded.h) merged by frame, so that a
 * node is one frame under one path from the root, with the samples of
 * every stack through it. The top levels are the region paths, so a
 * region's node is that region's own flame graph.
 *
 * Children are ordered by name (as flamegraph.pl orders them), which gives
 * each node its place: `start`, the samples left of it under the root.
 */
#ifndef PM_FLAME_H
#define PM_FLAME_H

#include "model/folded.h"

#include <stddef.h>
#include <stdint.h>

struct pm_flame_node {
    size_t name;          /* into pm_flame.name */
    size_t parent;        /* SIZE_MAX: the root */
    uint32_t depth;       /* 0: the root ("all"), 1: the outermost frames */
    uint64_t start;       /* samples left of it */
    uint64_t samples;     /* inclusive */
    uint64_t self;        /* stacks ending here */
};

struct pm_flame {
    char **name;
    size_t nname;
    struct pm_flame_node *node;  /* the root first, then each node before its children */
    size_t n;
    uint32_t depth;              /* the deepest node's */
};

/* The tree of the stacks in f. 0, or -1 out of memory (pm_flame_free
 * either way). */
int pm_flame_build(const struct pm_folded *f, struct pm_flame *out);
void pm_flame_free(struct pm_flame *fl);

/* The smallest samples a node needs to be drawn so that at most `max`
 * nodes are (and at least 1/1000 of the root: narrower than a pixel of a
 * 1000-pixel graph). */
uint64_t pm_flame_min_samples(const struct pm_flame *fl, size_t max);

#endif /* PM_FLAME_H */
