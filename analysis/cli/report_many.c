/*
 * report_many.c — `perfmark report A B ...`: each file's report, in turn,
 * as one output a reader of that format takes whole. A file that cannot be
 * reported is said on stderr (and in JSON and HTML) and the others still
 * are; the caller exits non-zero when any failed.
 *
 *   text  the reports one after the other (each starts with its file's
 *         name), a blank line between them
 *   json  an array of the report objects; a failed file is {"file", "error"}
 *   csv   one table: a first column `file`, then the union of the files'
 *         columns in order of first sight (a column a file lacks is empty
 *         in its rows), so that the rows of every file line up by name
 *   html  one page: the files' links, then each report's body in a section
 *         of its own (its anchors prefixed so that two reports never share
 *         one)
 *
 * The renderers are not asked to know about several files: each report is
 * made whole (pm_report_file_opts, in its guarded child) and composed here.
 */
#define _GNU_SOURCE
#include "report_many.h"

#include "cli/report.h"
#include "render/common/render_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct pm_one {
    const char *file;
    char *text; /* the report, NUL-terminated; NULL when it failed */
    size_t len;
    char err[1024];
};

static void pm_one_make(struct pm_one *o, const char *format, const struct pm_report_opts *opts)
{
    FILE *mem = open_memstream(&o->text, &o->len);
    if (!mem) {
        snprintf(o->err, sizeof o->err, "%s: out of memory", o->file);
        return;
    }
    int rc = pm_report_file_opts(o->file, format, opts, mem, o->err, sizeof o->err);
    fclose(mem);
    if (rc != 0) {
        free(o->text);
        o->text = NULL;
    }
}

/* ---- csv: one table ---------------------------------------------------------- */

/* One RFC 4180 field from *p (our own output: quoted fields double their
 * quotes); the raw bytes, quotes included, are [start, *p). Returns 1 when
 * the record ends after it (line end or the text's end). */
static int pm_csv_field(const char **p, const char **start, size_t *len)
{
    const char *s = *p;
    *start = s;
    if (*s == '"') {
        for (s++; *s; s++)
            if (*s == '"' && s[1] == '"')
                s++;
            else if (*s == '"') {
                s++;
                break;
            }
    } else {
        while (*s && *s != ',' && *s != '\n')
            s++;
    }
    *len = (size_t)(s - *start);
    int end = *s != ',';
    *p = *s ? s + 1 : s;
    return end;
}

struct pm_fields {
    const char **at;
    size_t *len;
    size_t n, cap;
};

static int pm_fields_add(struct pm_fields *f, const char *at, size_t len)
{
    if (f->n == f->cap) {
        size_t cap = f->cap ? 2 * f->cap : 64;
        const char **a = realloc(f->at, cap * sizeof *a);
        if (a)
            f->at = a;
        size_t *l = a ? realloc(f->len, cap * sizeof *l) : NULL;
        if (!l)
            return -1;
        f->len = l;
        f->cap = cap;
    }
    f->at[f->n] = at;
    f->len[f->n++] = len;
    return 0;
}

/* The fields of the record at *p. */
static int pm_csv_record(const char **p, struct pm_fields *f)
{
    f->n = 0;
    for (;;) {
        const char *at;
        size_t len;
        int end = pm_csv_field(p, &at, &len);
        if (pm_fields_add(f, at, len) != 0)
            return -1;
        if (end)
            return 0;
    }
}

static size_t pm_column_of(const struct pm_fields *cols, const char *at, size_t len)
{
    for (size_t i = 0; i < cols->n; i++)
        if (cols->len[i] == len && memcmp(cols->at[i], at, len) == 0)
            return i;
    return SIZE_MAX;
}

static int pm_many_csv(struct pm_one *all, int n, FILE *out)
{
    struct pm_fields cols = {0}, rec = {0};
    size_t *map = NULL;
    int rc = -1;
    for (int k = 0; k < n; k++) { /* the union of the headers */
        const char *p = all[k].text;
        if (!p || pm_csv_record(&p, &rec) != 0)
            continue;
        for (size_t i = 0; i < rec.n; i++)
            if (pm_column_of(&cols, rec.at[i], rec.len[i]) == SIZE_MAX &&
                pm_fields_add(&cols, rec.at[i], rec.len[i]) != 0)
                goto done;
    }
    fputs("file", out);
    for (size_t i = 0; i < cols.n; i++)
        fprintf(out, ",%.*s", (int)cols.len[i], cols.at[i]);
    fputc('\n', out);
    if (!(map = malloc((cols.n + 1) * sizeof *map)))
        goto done;
    struct pm_fields row = {0};
    for (int k = 0; k < n; k++) {
        const char *p = all[k].text;
        if (!p || pm_csv_record(&p, &rec) != 0)
            continue;
        size_t width = rec.n;
        for (size_t i = 0; i < width; i++)
            map[i] = pm_column_of(&cols, rec.at[i], rec.len[i]);
        /* the header's positions, kept: rec is reused for the rows */
        size_t *col_of = malloc((width + 1) * sizeof *col_of);
        if (!col_of)
            goto done;
        memcpy(col_of, map, width * sizeof *map);
        while (*p) {
            if (pm_csv_record(&p, &row) != 0) {
                free(col_of);
                free(row.at), free(row.len);
                goto done;
            }
            pm_csv_str(out, all[k].file);
            for (size_t c = 0; c < cols.n; c++) {
                fputc(',', out);
                for (size_t i = 0; i < width && i < row.n; i++)
                    if (col_of[i] == c)
                        fwrite(row.at[i], 1, row.len[i], out);
            }
            fputc('\n', out);
        }
        free(col_of);
    }
    free(row.at), free(row.len);
    rc = 0;
done:
    free(map);
    free(cols.at), free(cols.len), free(rec.at), free(rec.len);
    return rc;
}

/* ---- html: one page ---------------------------------------------------------- */

/* [*from, *to) of the first `open ... close` span in s, the tags excluded
 * (`open` may end before the tag's '>'). */
static int pm_span(const char *s, const char *open, const char *close, const char **from,
                   const char **to)
{
    const char *a = strstr(s, open);
    const char *b = a ? strchr(a, '>') : NULL;
    const char *c = b ? strstr(b + 1, close) : NULL;
    if (!c)
        return -1;
    *from = b + 1;
    *to = c;
    return 0;
}

/* The body, each anchor (id="..." and href="#...") prefixed with fK- so
 * that the sections of two reports never share one. User text cannot hold
 * these sequences: the renderer escapes every quote in it. */
static void pm_html_body(FILE *out, const char *s, const char *end, int k)
{
    static const char id_at[] = " id=\"", href_at[] = " href=\"#";
    const char *id = strstr(s, id_at), *href = strstr(s, href_at);

    /* each of the two searches moves on only past its own match: one pass */
    while (s < end) {
        const char *next = id && (!href || id < href) ? id : href;
        if (!next || next >= end) {
            fwrite(s, 1, (size_t)(end - s), out);
            return;
        }
        size_t head = next == id ? sizeof id_at - 1 : sizeof href_at - 1;
        fwrite(s, 1, (size_t)(next - s) + head, out);
        fprintf(out, "f%d-", k);
        s = next + head;
        if (next == id)
            id = strstr(s, id_at);
        else
            href = strstr(s, href_at);
    }
}

static int pm_many_html(struct pm_one *all, int n, FILE *out)
{
    const char *style = "", *style_end = style;
    for (int k = 0; k < n && style == style_end; k++)
        if (all[k].text)
            pm_span(all[k].text, "<style", "</style>", &style, &style_end);
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
          "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
          "style-src 'unsafe-inline'\">\n",
          out);
    fprintf(out, "<title>perfmark report: %d files</title>\n<style>%.*s</style>\n</head>\n<body>\n",
            n, (int)(style_end - style), style);
    fputs("<h1>perfmark report</h1>\n<ol>\n", out);
    for (int k = 0; k < n; k++) {
        fprintf(out, "<li><a href=\"#f%d\">", k);
        pm_html_esc(out, all[k].file, PM_HTML_MAX_CHARS, 1);
        fputs(all[k].text ? "</a></li>\n" : "</a> (could not be read)</li>\n", out);
    }
    fputs("</ol>\n", out);
    for (int k = 0; k < n; k++) {
        fprintf(out, "<section id=\"f%d\">\n", k);
        const char *b, *e;
        if (all[k].text && pm_span(all[k].text, "<body", "</body>", &b, &e) == 0) {
            pm_html_body(out, b, e, k);
        } else {
            fputs("<h2>", out);
            pm_html_esc(out, all[k].file, PM_HTML_MAX_CHARS, 1);
            fputs("</h2>\n<p>", out);
            pm_html_esc(out, all[k].err, PM_HTML_MAX_CHARS, 1);
            fputs("</p>\n", out);
        }
        fputs("</section>\n", out);
    }
    fputs("</body>\n</html>\n", out);
    return 0;
}

/* ---- all formats --------------------------------------------------------------- */

int pm_report_many(const char *const *files, int n, const char *format,
                   const struct pm_report_opts *opts, FILE *out, int write)
{
    struct pm_one *all = calloc((size_t)n, sizeof *all);
    if (!all) {
        fprintf(stderr, "perfmark report: out of memory\n");
        return n;
    }
    int failed = 0;
    for (int k = 0; k < n; k++) {
        all[k].file = files[k];
        pm_one_make(&all[k], format, opts);
        if (!all[k].text) {
            failed++;
            if (write)
                fprintf(stderr, "perfmark report: %s\n", all[k].err);
        }
    }
    if (write) {
        if (!strcmp(format, "json")) {
            fputs("[\n", out);
            for (int k = 0, first = 1; k < n; k++, first = 0) {
                fputs(first ? "" : ",\n", out);
                if (all[k].text) {
                    size_t len = all[k].len;
                    while (len && all[k].text[len - 1] == '\n')
                        len--;
                    fwrite(all[k].text, 1, len, out);
                } else {
                    fputs("{\"file\": ", out);
                    pm_json_str(out, all[k].file);
                    fputs(", \"error\": ", out);
                    pm_json_str(out, all[k].err);
                    fputc('}', out);
                }
            }
            fputs("\n]\n", out);
        } else if (!strcmp(format, "csv")) {
            if (pm_many_csv(all, n, out) != 0)
                fprintf(stderr, "perfmark report: out of memory\n"), failed = n;
        } else if (!strcmp(format, "html")) {
            pm_many_html(all, n, out);
        } else {
            for (int k = 0, first = 1; k < n; k++) {
                if (!all[k].text)
                    continue;
                fputs(first ? "" : "\n", out);
                fwrite(all[k].text, 1, all[k].len, out);
                first = 0;
            }
        }
    }
    for (int k = 0; k < n; k++)
        free(all[k].text);
    free(all);
    return failed;
}
