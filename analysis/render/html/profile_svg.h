/*
 * profile_svg.h — the sampled profile on the HTML page (profile_svg.c): a
 * <section> of bar charts of each region's top functions and a table of its
 * top lines. Like report_svg.h, it knows only the model and render/common;
 * report_html.c places it.
 */
#ifndef PM_PROFILE_SVG_H
#define PM_PROFILE_SVG_H

#include "model/report_model.h"

#include <stdio.h>

/* A whole <section id="samples"> or nothing (no samples in the file). */
void pm_svg_profile(FILE *out, const struct pm_report *rep);

#endif
