/*
 * diff_render.h — `perfmark diff` in each format (diff_text.c, diff_json.c,
 * diff_csv.c), from the diff's model only.
 */
#ifndef PM_DIFF_RENDER_H
#define PM_DIFF_RENDER_H

#include "model/diff_model.h"
#include "model/diff_profile.h"

#include <stdio.h>

void pm_render_diff_text(FILE *out, const struct pm_diff *df);
void pm_render_diff_json(FILE *out, const struct pm_diff *df);
void pm_render_diff_csv(FILE *out, const struct pm_diff *df);
/* Each regression beyond the threshold as one line "perfmark diff:
 * regression: ..." (nothing without --threshold). */
void pm_render_diff_regressions(FILE *out, const struct pm_diff *df);

#endif /* PM_DIFF_RENDER_H */
