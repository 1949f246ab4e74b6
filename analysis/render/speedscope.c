/*
 * speedscope.c — the sampled profile in speedscope's file format
 * (https://www.speedscope.app/file-format-schema.json): the frames shared by
 * every profile, then one "sampled" profile per sampled event whose stacks
 * (frame indices, root first) are the folded stacks (model/folded.h) and
 * whose weights are their samples. Samples, not estimated counts: unit
 * "none", the period said in the profile's name.
 */
#include "render/speedscope.h"
#include "render/common/render_common.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Frame names, each once, in the order first met. */
struct pm_frames {
    char **name;
    size_t n, cap;
    size_t *slot; /* hash: index + 1, 0 empty */
    size_t mask;
};

static size_t pm_name_hash(const char *s, size_t len)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return (size_t)h;
}

/* The index of the frame named s[0, len), added when new; SIZE_MAX when out
 * of memory. */
static size_t pm_frame_id(struct pm_frames *t, const char *s, size_t len)
{
    if ((t->n + 1) * 2 > t->mask + 1 || !t->slot) {
        size_t size = t->slot ? (t->mask + 1) * 2 : 1024;
        size_t *slot = calloc(size, sizeof *slot);
        if (!slot)
            return SIZE_MAX;
        for (size_t i = 0; i < t->n; i++) {
            size_t j = pm_name_hash(t->name[i], strlen(t->name[i])) & (size - 1);
            while (slot[j])
                j = (j + 1) & (size - 1);
            slot[j] = i + 1;
        }
        free(t->slot);
        t->slot = slot, t->mask = size - 1;
    }
    size_t j = pm_name_hash(s, len) & t->mask;
    for (; t->slot[j]; j = (j + 1) & t->mask) {
        const char *x = t->name[t->slot[j] - 1];
        if (strlen(x) == len && memcmp(x, s, len) == 0)
            return t->slot[j] - 1;
    }
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 256;
        char **name = realloc(t->name, cap * sizeof *name);
        if (!name)
            return SIZE_MAX;
        t->name = name, t->cap = cap;
    }
    char *copy = strndup(s, len);
    if (!copy)
        return SIZE_MAX;
    t->name[t->n] = copy;
    t->slot[j] = ++t->n;
    return t->n - 1;
}

static void pm_frames_free(struct pm_frames *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->name[i]);
    free(t->name), free(t->slot);
}

/* Every stack's frames (split at ';', which no frame name holds) as
 * indices, stack after stack: ids[at[k] .. at[k + 1]). */
static int pm_index_stacks(struct pm_frames *t, const struct pm_folded *f, size_t **ids,
                           size_t **at)
{
    size_t total = 0;
    for (size_t k = 0; k < f->n; k++) {
        total++;
        for (const char *c = f->stack[k]; *c; c++)
            total += *c == ';';
    }
    *ids = malloc((total ? total : 1) * sizeof **ids);
    *at = malloc((f->n + 1) * sizeof **at);
    if (!*ids || !*at)
        return -1;
    size_t n = 0;
    for (size_t k = 0; k < f->n; k++) {
        (*at)[k] = n;
        for (const char *s = f->stack[k];;) {
            const char *end = strchr(s, ';');
            size_t len = end ? (size_t)(end - s) : strlen(s);
            size_t id = pm_frame_id(t, s, len);
            if (id == SIZE_MAX)
                return -1;
            (*ids)[n++] = id;
            if (!end)
                break;
            s = end + 1;
        }
    }
    (*at)[f->n] = n;
    return 0;
}

int pm_render_speedscope(FILE *out, const struct pm_file *d, const struct pm_folded *f,
                         const char *name)
{
    struct pm_frames t = {0};
    size_t **ids = calloc(d->S ? d->S : 1, sizeof *ids), **at = calloc(d->S ? d->S : 1, sizeof *at);
    int rc = ids && at ? 0 : -1;
    for (size_t e = 0; rc == 0 && e < d->S; e++)
        rc = pm_index_stacks(&t, &f[e], &ids[e], &at[e]);
    if (rc == 0) {
        fputs("{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",", out);
        fputs("\"exporter\":\"perfmark\",\"name\":", out);
        pm_json_str(out, name);
        fputs(",\"activeProfileIndex\":0,\"shared\":{\"frames\":[", out);
        for (size_t i = 0; i < t.n; i++) {
            fputs(i ? ",{\"name\":" : "{\"name\":", out);
            pm_json_str(out, t.name[i]);
            fputc('}', out);
        }
        fputs("]},\"profiles\":[", out);
        for (size_t e = 0; e < d->S; e++) {
            const struct pm_file_sample_event *ev = &d->sample_events[e];
            uint64_t samples = 0;
            char title[512];
            for (size_t k = 0; k < f[e].n; k++)
                samples += f[e].count[k];
            snprintf(title, sizeof title, "%s: samples (1 sample ~ %llu %s)", ev->name,
                     (unsigned long long)ev->period, ev->unit && ev->unit[0] ? ev->unit : "events");
            fputs(e ? ",{\"type\":\"sampled\",\"name\":" : "{\"type\":\"sampled\",\"name\":", out);
            pm_json_str(out, title);
            fprintf(out, ",\"unit\":\"none\",\"startValue\":0,\"endValue\":%llu,\"samples\":[",
                    (unsigned long long)samples);
            for (size_t k = 0; k < f[e].n; k++) {
                fputs(k ? ",[" : "[", out);
                for (size_t i = at[e][k]; i < at[e][k + 1]; i++)
                    fprintf(out, i > at[e][k] ? ",%zu" : "%zu", ids[e][i]);
                fputc(']', out);
            }
            fputs("],\"weights\":[", out);
            for (size_t k = 0; k < f[e].n; k++)
                fprintf(out, k ? ",%llu" : "%llu", (unsigned long long)f[e].count[k]);
            fputs("]}", out);
        }
        fputs("]}\n", out);
    }
    for (size_t e = 0; ids && at && e < d->S; e++)
        free(ids[e]), free(at[e]);
    free(ids), free(at);
    pm_frames_free(&t);
    return rc;
}
