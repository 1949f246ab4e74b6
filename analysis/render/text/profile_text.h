/*
 * profile_text.h — the sampled profile as a section of the terminal report
 * (profile_text.c); report_text.c prints it after the region tables.
 */
#ifndef PM_PROFILE_TEXT_H
#define PM_PROFILE_TEXT_H

#include "model/report_model.h"

#include <stdio.h>

void pm_render_text_profile(FILE *out, const struct pm_report *rep);

#endif
