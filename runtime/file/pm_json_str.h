/* pm_json_str.h — one JSON string, for the build-time generators of
 * schema.json (schema/pm_schema_json.c) and models.json
 * (runtime/count/pm_models_json.c). Header-only: python/setup.py compiles the
 * latter with the C compiler and runtime/ as its only include directory.
 * (The report has its own writer, analysis/render/common.) */
#ifndef PM_JSON_STR_H
#define PM_JSON_STR_H

#include <stdio.h>

/* s as a JSON string, null for NULL; UTF-8 passes through (JSON is UTF-8). */
static inline void pm_json_put_str(FILE *f, const char *s)
{
    if (!s) {
        fputs("null", f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            fprintf(f, "\\%c", *s);
        else if ((unsigned char)*s < 0x20)
            fprintf(f, "\\u%04x", (unsigned char)*s);
        else
            fputc(*s, f);
    }
    fputc('"', f);
}

#endif /* PM_JSON_STR_H */
