/* pm_session_out — where a measured process's file goes, and getting it
 * there (pm_session_out.h). */
#define _GNU_SOURCE
#include "pm_session_out.h"
#include "pm_config.h"
#include "pm_log.h"
#include "pm_store.h"
#include "pm_summary.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* perfmark-<job id or local time>.h5: ranks of one job share the job id. */
static void pm_default_name(const struct pm_out_where *w, char *out, size_t len)
{
    snprintf(out, len, "perfmark-%s.h5", w->job[0] ? w->job : w->stamp);
}

/* Insert `tag` before a trailing ".h5" (or append it). */
static void pm_insert_tag(char *path, size_t len, const char *tag)
{
    char stem[PM_PATH_MAX];
    snprintf(stem, sizeof stem, "%s", path);
    size_t n = strlen(stem);
    int has_ext = n > 3 && strcmp(stem + n - 3, ".h5") == 0;
    if (has_ext)
        stem[n - 3] = '\0';
    snprintf(path, len, "%s%s%s", stem, tag, has_ext ? ".h5" : "");
}

void pm_out_path(const struct pm_out_where *w, int per_rank, char *out, size_t len)
{
    char name[128];
    pm_default_name(w, name, sizeof name);
    struct stat st;
    if (!w->output[0])
        snprintf(out, len, "%s", name);
    else if (w->output_is_dir || (stat(w->output, &st) == 0 && S_ISDIR(st.st_mode)))
        snprintf(out, len, "%s/%s", w->output, name);
    else
        snprintf(out, len, "%s", w->output);
    if (out[0] != '/' && w->start_cwd[0]) {
        char rel[PM_PATH_MAX];
        snprintf(rel, sizeof rel, "%s", out);
        snprintf(out, len, "%s/%s", w->start_cwd, rel);
    }
    char tag[64];
    if (per_rank && w->rank >= 0) {
        snprintf(tag, sizeof tag, ".rank%d", w->rank);
        pm_insert_tag(out, len, tag);
    }
    if (w->fork_child) {
        snprintf(tag, sizeof tag, ".child-%ld", (long)getpid());
        pm_insert_tag(out, len, tag);
    }
}

/* One file's write: where it is wanted, and where to note where it went. */
struct pm_out_ctx {
    const struct pm_out_where *w;
    const struct pm_output *o;
    const char *want;
    char what[64];
    char *written;
    size_t written_len;
};

/* Where the bytes went, said once. */
static void pm_announce(const struct pm_out_ctx *c, const char *final)
{
    snprintf(c->written, c->written_len, "%s", final);
    if (!c->w->quiet)
        fprintf(stderr, "perfmark: wrote %s (%s, events: %s) — see: perfmark report %s\n",
                final, c->what, c->o->set->n ? c->o->set->group_name : "none", final);
}

/* A finished file's bytes to `want` or a fallback (pm_store.h), with one
 * message saying where they went. 0, or -1 when no place took them. */
static int pm_out_store_image(const void *image, size_t len, void *arg)
{
    const struct pm_out_ctx *c = arg;
    struct pm_store_result r;
    if (pm_store_bytes(c->want, image, len, c->w->fallback_dir, &r) != 0) {
        pm_msg(PM_MSG_ONCE, "%s; no other place took the data either (tried %s): a summary "
               "follows on stderr", r.why, r.tried[0] ? r.tried : "none");
        return -1;
    }
    if (r.place > 0)
        pm_msg(PM_MSG_ONCE, "%s; wrote %s instead", r.why, r.final);
    else if (strcmp(r.final, c->want) != 0)
        pm_msg(PM_MSG_ONCE, "%s already exists (perfmark never overwrites a file); wrote %s",
               c->want, r.final);
    pm_announce(c, r.final);
    return 0;
}

int pm_out_job_file(const struct pm_out_where *w, const struct pm_output *o, pm_writer_job_fn job,
                    struct pm_comm *comm, char *written, size_t len)
{
    char want[PM_PATH_MAX], tmp[PM_PATH_MAX + 64], final[PM_PATH_MAX + 16],
        err[PM_PATH_MAX + 256] = "";
    written[0] = '\0';
    pm_out_path(w, 0, want, sizeof want);
    struct pm_out_ctx ctx = {.w = w, .o = o, .want = want, .written = written,
                             .written_len = len};
    snprintf(ctx.what, sizeof ctx.what, "one file for %d rank(s)", o->ranks);
    int verdict = job(comm, o, want, tmp, sizeof tmp, pm_out_store_image, &ctx, err, sizeof err);
    if (verdict == -1 && err[0])
        pm_msg(w->rank > 0 ? PM_MSG_FILE_ONLY : PM_MSG_ONCE,
               "%s; each rank writes its own file instead", err);
    if (verdict != 2)
        return verdict;
    /* Written collectively at tmp: rank 0 puts it in place. */
    if (pm_store_publish(tmp, want, final, sizeof final) != 0) {
        /* The data is complete in tmp: say where rather than lose it. */
        pm_msg(PM_MSG_ONCE, "cannot rename %s into place (%s); the job's data is in %s", tmp,
               strerror(errno), tmp);
        return 1;
    }
    if (strcmp(final, want) != 0)
        pm_msg(PM_MSG_ONCE, "%s already exists (perfmark never overwrites a file); wrote %s",
               want, final);
    pm_announce(&ctx, final);
    return 1;
}

void pm_out_process_file(const struct pm_out_where *w, const struct pm_output *o, char *written,
                         size_t len)
{
    char want[PM_PATH_MAX], err[PM_PATH_MAX + 256] = "";
    written[0] = '\0';
    pm_out_path(w, 1, want, sizeof want);
    struct pm_out_ctx ctx = {.w = w, .o = o, .want = want, .written = written,
                             .written_len = len};
    snprintf(ctx.what, sizeof ctx.what, "%d thread(s)", (int)o->nthreads);
    void *image = NULL;
    size_t bytes = 0;
    if (pm_h5out_image(o, pm_writer_large_image, &image, &bytes, err, sizeof err) != 0) {
        pm_msg(PM_MSG_ONCE, "could not build the measurement's file (%s): a summary follows "
               "on stderr", err);
        pm_summary_print(o, stderr);
        return;
    }
    if (pm_out_store_image(image, bytes, &ctx) != 0)
        pm_summary_print(o, stderr);
    free(image);
}
