/* node_text.h — node mode in the terminal report (node_text.c). */
#ifndef PM_NODE_TEXT_H
#define PM_NODE_TEXT_H

#include "model/report_model.h"

#include <stdio.h>

void pm_render_text_node(FILE *out, const struct pm_report *rep);

#endif
