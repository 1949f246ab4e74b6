/*
 * folded.c — folded stacks as text (model/folded.h): "frame;frame;... N",
 * one line per stack, what flamegraph.pl and inferno read.
 */
#include "render/folded.h"

void pm_render_folded(FILE *out, const struct pm_folded *f)
{
    for (size_t i = 0; i < f->n; i++)
        fprintf(out, "%s %llu\n", f->stack[i], (unsigned long long)f->count[i]);
}
