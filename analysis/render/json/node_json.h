/* node_json.h — node mode as the JSON report's "node" key (node_json.c). */
#ifndef PM_NODE_JSON_H
#define PM_NODE_JSON_H

#include "model/report_model.h"

#include <stdio.h>

void pm_render_json_node(FILE *out, const struct pm_report *rep);

#endif
