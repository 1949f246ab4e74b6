/* node_svg.h — node mode on the HTML page (node_svg.c): a <section> with a
 * stacked bar per watched CPU. Knows only the model and render/common. */
#ifndef PM_NODE_SVG_H
#define PM_NODE_SVG_H

#include "model/report_model.h"

#include <stdio.h>

void pm_svg_node(FILE *out, const struct pm_report *rep);

#endif
