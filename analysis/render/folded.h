/*
 * folded.h — folded stacks as text (render/folded.c).
 */
#ifndef PM_RENDER_FOLDED_H
#define PM_RENDER_FOLDED_H

#include "model/folded.h"

#include <stdio.h>

void pm_render_folded(FILE *out, const struct pm_folded *f);

#endif /* PM_RENDER_FOLDED_H */
