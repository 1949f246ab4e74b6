/* flame_svg.h — the sampled profile's flame graphs on the HTML page. */
#ifndef PM_FLAME_SVG_H
#define PM_FLAME_SVG_H

#include "model/report_model.h"

#include <stdio.h>

/* One icicle per sampled event (rep->flame), with its search box and the
 * page's one script; nothing without flame graphs. */
void pm_svg_flames(FILE *out, const struct pm_report *rep);
/* "'sha256-...'" of that script, for the page's Content-Security-Policy. */
const char *pm_flame_script_hash(void);

#endif
