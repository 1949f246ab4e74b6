/*
 * json_fmt.c — what the report's JSON sections share: a key, and a
 * top-level list of objects (json_fmt.h).
 */
#include "render/json/json_fmt.h"
#include "render/common/render_common.h"

#include <stdio.h>

void pm_json_key(FILE *out, const char *key)
{
    pm_json_str(out, key);
    putc(':', out);
}

/* A top-level key whose value is a list of n objects, one per line. */
void pm_json_list(FILE *out, const char *key, const struct pm_report *rep, size_t n,
                  void (*item)(FILE *, const struct pm_report *, size_t))
{
    fprintf(out, "  \"%s\":[", key);
    for (size_t i = 0; i < n; i++) {
        fputs(i ? ",\n" : "\n", out);
        item(out, rep, i);
    }
    putc(']', out);
}
