/*
 * profile_json.h — the sampled profile as the JSON report's "samples" key
 * (profile_json.c); report_json.c appends it for files with samples.
 */
#ifndef PM_PROFILE_JSON_H
#define PM_PROFILE_JSON_H

#include "model/report_model.h"

#include <stdio.h>

/* ,\n  "samples":{...}  — nothing when the file has no samples. */
void pm_render_json_profile(FILE *out, const struct pm_report *rep);

#endif
