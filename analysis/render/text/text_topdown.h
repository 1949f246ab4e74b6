/*
 * text_topdown.h — TopDown in the terminal report (text_topdown.c).
 */
#ifndef PM_TEXT_TOPDOWN_H
#define PM_TEXT_TOPDOWN_H

#include "model/report_model.h"

#include <stdio.h>

/* The TopDown tables, or why there is no breakdown; nothing when the file
 * has no TopDown. */
void pm_text_topdown(FILE *out, const struct pm_report *rep);

#endif /* PM_TEXT_TOPDOWN_H */
