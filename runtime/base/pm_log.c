#include "pm_log.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* How many messages of a throttled kind are printed before we only count. */
#define PM_MSG_PRINT_PER_KIND 5

static pthread_mutex_t pm_log_lock = PTHREAD_MUTEX_INITIALIZER;
static int pm_quiet;
static char *pm_kept[PM_MSG_KEEP_MAX];
static size_t pm_nkept;
static size_t pm_ndropped;
static unsigned long pm_kind_seen[PM_MSG_KINDS];

static const char *const pm_kind_name[PM_MSG_KINDS] = {
    "", "", "unbalanced marker call", "region name problem", "counter problem",
};

void pm_log_set_quiet(int quiet) { pm_quiet = quiet; }

static void pm_keep(const char *text)
{
    if (pm_nkept < PM_MSG_KEEP_MAX) {
        char *copy = strdup(text);
        if (copy)
            pm_kept[pm_nkept++] = copy;
    } else {
        pm_ndropped++;
    }
}

void pm_msg(enum pm_msg_kind kind, const char *fmt, ...)
{
    int saved = errno;  /* callers may sit on a marker's path */
    char text[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);

    pthread_mutex_lock(&pm_log_lock);
    unsigned long seen = ++pm_kind_seen[kind];
    if (kind == PM_MSG_ONCE || kind == PM_MSG_FILE_ONLY || seen <= PM_MSG_PRINT_PER_KIND) {
        pm_keep(text);  /* as is: the report escapes what it shows */
        if (!pm_quiet && kind != PM_MSG_FILE_ONLY) {
            /* Region names and paths are user data: no control characters
             * (C0, DEL, UTF-8 C1) reach the terminal raw. */
            for (size_t i = 0; text[i]; i++) {
                unsigned char c = (unsigned char)text[i];
                if (c < 0x20 || c == 0x7f)
                    text[i] = '?';
                else if (c == 0xc2 && (unsigned char)text[i + 1] >= 0x80 &&
                         (unsigned char)text[i + 1] <= 0x9f)
                    memmove(text + i, text + i + 1, strlen(text + i + 1) + 1), text[i] = '?';
            }
            fprintf(stderr, "perfmark: %s\n", text);
        }
    }
    pthread_mutex_unlock(&pm_log_lock);
    errno = saved;
}

void pm_msg_summarise(void)
{
    for (int k = PM_MSG_FILE_ONLY + 1; k < PM_MSG_KINDS; k++) {
        unsigned long seen = pm_kind_seen[k];
        if (seen > PM_MSG_PRINT_PER_KIND)
            pm_msg(PM_MSG_ONCE, "%lu more of kind '%s' were not printed (%lu in all; "
                   "the affected regions are flagged in the file)",
                   seen - PM_MSG_PRINT_PER_KIND, pm_kind_name[k], seen);
    }
}

size_t pm_msg_count(void) { return pm_nkept + (pm_ndropped ? 1 : 0); }

const char *pm_msg_get(size_t i)
{
    static char dropped[96];
    if (i < pm_nkept)
        return pm_kept[i];
    snprintf(dropped, sizeof dropped, "(%zu further messages were not kept)", pm_ndropped);
    return dropped;
}

void pm_msg_reset(void)
{
    for (size_t i = 0; i < pm_nkept; i++)
        free(pm_kept[i]);
    pm_nkept = 0;
    pm_ndropped = 0;
    memset(pm_kind_seen, 0, sizeof pm_kind_seen);
}
