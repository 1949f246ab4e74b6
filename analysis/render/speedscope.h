/*
 * speedscope.h — the sampled profile as a speedscope file (render/speedscope.c).
 */
#ifndef PM_RENDER_SPEEDSCOPE_H
#define PM_RENDER_SPEEDSCOPE_H

#include "h5read.h"
#include "model/folded.h"

#include <stdio.h>

/* One "sampled" profile per sampled event (f[e]: its folded stacks), frames
 * shared. name: the file's name, shown by speedscope. 0, or -1 when out of
 * memory (the output is then incomplete). */
int pm_render_speedscope(FILE *out, const struct pm_file *d, const struct pm_folded *f,
                         const char *name);

#endif /* PM_RENDER_SPEEDSCOPE_H */
