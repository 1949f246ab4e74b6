/*
 * json_fmt.h — what the report's JSON sections share (json_fmt.c).
 */
#ifndef PM_JSON_FMT_H
#define PM_JSON_FMT_H

#include "model/report_model.h"

#include <stddef.h>
#include <stdio.h>

/* "key": (the key escaped as any string). */
void pm_json_key(FILE *out, const char *key);
/* "  \"key\":[" then item(out, rep, i) for i < n, one per line, then "]". */
void pm_json_list(FILE *out, const char *key, const struct pm_report *rep, size_t n,
                  void (*item)(FILE *, const struct pm_report *, size_t));

#endif /* PM_JSON_FMT_H */
