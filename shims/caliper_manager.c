/* Caliper's ConfigManager, C interface (libperfmark-caliper.so).
 *
 * A Caliper-instrumented code takes a configuration string from its
 * command line, add()s it, checks error(), start()s, and flush()es at the
 * end. Here the one configuration with an effect is runtime-report:
 * flush() of a started manager asks for perfmark's text report of the run,
 * printed once the file is written at exit (caliper_report.c). "none" and
 * "" are nothing. Anything else is an error in Caliper's words, from a
 * parser of Caliper's grammar: config[(option[=value],...)], ...,
 * option=value. The program is never stopped: it reads error() and goes
 * on, as with Caliper. */
#include "caliper/cali-manager.h"
#include "caliper_shim.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PM_PUBLIC __attribute__((visibility("default")))
#define PM_MGR_IDTOR 0x706d  /* ours: "pm" */
#define PM_MSG_IDTOR 0x706e
#define PM_MAX_REPORTS 8

/* The configs and their options: data, as Caliper's JSON specs are. */
#define PM_RUNTIME_REPORT "Print perfmark's text report of the run at exit (perfmark report)"
static const struct pm_config {
    const char *name, *description, *documentation;
} pm_configs[] = {
    {"runtime-report", PM_RUNTIME_REPORT,
     PM_RUNTIME_REPORT "\n"
     " output\n  Where the report goes: stderr (the default), stdout or a file name\n"
     " aggregate_across_ranks\n  Accepted; perfmark's report always covers every rank of "
     "the job (per rank: perfmark report --by rank)"},
};
static const char *const pm_options[] = {"output", "aggregate_across_ranks"};
#define PM_N_CONFIGS (sizeof pm_configs / sizeof *pm_configs)
#define PM_N_OPTIONS (sizeof pm_options / sizeof *pm_options)

struct pm_mgr {
    int error;
    char msg[256];
    char *extra;          /* first unknown key, in Caliper's (alphabetical) order */
    int started;
    int nreports;
    char *report_output[PM_MAX_REPORTS]; /* NULL: from the defaults */
    char *default_output;                /* set_default_parameter, or output=... */
    char *config_output;                 /* ..._for_config("runtime-report", ...) */
};

static int pm_is_option(const char *key)
{
    for (size_t i = 0; i < PM_N_OPTIONS; i++)
        if (strcmp(key, pm_options[i]) == 0)
            return 1;
    return 0;
}

static void pm_set(char **slot, const char *val)
{
    free(*slot);
    *slot = val ? strdup(val) : NULL;
}

/* ---- the parser: Caliper's grammar and error messages ------------------- */

struct pm_in {
    const char *s;
    size_t at;
    struct pm_mgr *m;
};

static int pm_error(struct pm_in *in, const char *fmt, const char *arg, int context)
{
    struct pm_mgr *m = in->m;
    m->error = 1;
    snprintf(m->msg, sizeof m->msg, fmt, arg);
    if (context && in->s[in->at]) {
        /* like Caliper: " at " and up to 15 characters from the offending one */
        size_t from = in->at ? in->at - 1 : 0, n = strlen(in->s + from);
        size_t len = strlen(m->msg);
        snprintf(m->msg + len, sizeof m->msg - len, " at %.15s%s", in->s + from,
                 n > 15 ? "..." : "");
    }
    return -1;
}

/* The next character that is not white space, consumed; 0 at the end. */
static char pm_next(struct pm_in *in)
{
    while (in->s[in->at] && isspace((unsigned char)in->s[in->at]))
        in->at++;
    return in->s[in->at] ? in->s[in->at++] : 0;
}

/* A word up to one of ,=()\n (backslash escapes one), trimmed. */
static void pm_word(struct pm_in *in, char *out, size_t len)
{
    size_t n = 0;
    while (in->s[in->at] && isspace((unsigned char)in->s[in->at]))
        in->at++;
    for (char c; (c = in->s[in->at]) && !strchr(",=()\n", c); in->at++) {
        if (c == '\\' && in->s[in->at + 1])
            c = in->s[++in->at];
        if (n + 1 < len)
            out[n++] = c;
    }
    while (n && isspace((unsigned char)out[n - 1]))
        n--;
    out[n] = '\0';
}

/* "=value" or "(value)" after `key`, or nothing; -1 on a syntax error. */
static int pm_value(struct pm_in *in, const char *key, char *out, size_t len)
{
    out[0] = '\0';
    size_t back = in->at;
    char c = pm_next(in);
    if (c == '=') {
        pm_word(in, out, len);
        if (!out[0]) {
            char what[128];
            snprintf(what, sizeof what, "%.100s=", key);
            return pm_error(in, "Expected value after \"%s\"", what, 1);
        }
    } else if (c == '(') {
        size_t n = 0;
        for (int depth = 1; in->s[in->at]; in->at++) {
            char d = in->s[in->at];
            if ((d == ')' && --depth == 0))
                break;
            depth += d == '(';
            if (n + 1 < len)
                out[n++] = d;
        }
        out[n] = '\0';
        if (pm_next(in) != ')')
            return pm_error(in, "Missing ')' after \"%s\"(", key, 1);
    } else {
        in->at = back;
    }
    return 0;
}

/* A config's "(option=value,...)"; its output in *output. */
static int pm_arglist(struct pm_in *in, char **output)
{
    size_t back = in->at;
    if (pm_next(in) != '(') {
        in->at = back;
        return 0;
    }
    char c;
    do {
        char key[128], val[4096];
        pm_word(in, key, sizeof key);
        if (key[0]) {
            if (!pm_is_option(key))
                return pm_error(in, "Unknown option: %s", key, 0);
            if (pm_value(in, key, val, sizeof val) != 0)
                return -1;
            if (strcmp(key, "output") == 0)
                pm_set(output, val[0] ? val : "true");
        }
        c = pm_next(in);
    } while (c == ',');
    if (c != ')')
        return pm_error(in, "Expected ')'", NULL, 1);
    return 0;
}

static void pm_add(struct pm_mgr *m, const char *config)
{
    struct pm_in in = {config ? config : "", 0, m};
    char *outputs[PM_MAX_REPORTS] = {0};
    int n = 0, failed = 0;
    char c = pm_next(&in);
    if (!c)
        return; /* only white space: nothing, and no error */
    in.at--;
    do {
        char key[128], val[4096];
        pm_word(&in, key, sizeof key);
        if (strcmp(key, "runtime-report") == 0) {
            char *output = NULL;
            if (pm_arglist(&in, &output) != 0) {
                free(output);
                failed = 1;
                break;
            }
            if (n < PM_MAX_REPORTS)
                outputs[n++] = output;
            else
                free(output);
        } else if (strcmp(key, "none") == 0 || !key[0]) {
            /* nothing (perfmark takes "none" as Caliper's examples mean it) */
        } else {
            if (pm_value(&in, key, val, sizeof val) != 0) {
                failed = 1;
                break;
            }
            if (strcmp(key, "output") == 0)
                pm_set(&m->default_output, val[0] ? val : "true");
            else if (!pm_is_option(key) && (!m->extra || strcmp(key, m->extra) < 0))
                pm_set(&m->extra, key);
        }
        c = pm_next(&in);
    } while (c == ',');
    if (!failed && c) {
        char what[2] = {c, 0};
        pm_error(&in, "Unexpected '%s'", what, 1);
        failed = 1;
    }
    /* As in Caliper: a syntax error adds nothing; an unknown key is an error
     * but the configs beside it are added. */
    for (int i = 0; i < n; i++) {
        if (!failed && m->nreports < PM_MAX_REPORTS)
            m->report_output[m->nreports++] = outputs[i];
        else
            free(outputs[i]);
    }
    if (!failed && m->extra) {
        m->error = 1;
        snprintf(m->msg, sizeof m->msg, "Unknown config or parameter: %s", m->extra);
    }
}

/* ---- the C interface ---------------------------------------------------- */

static struct pm_mgr *pm_mgr(cali_ConfigManager *self)
{
    return self && self->idtor == PM_MGR_IDTOR ? self->addr : NULL;
}

PM_PUBLIC cali_ConfigManager *cali_ConfigManager_new(cali_ConfigManager *SHC_rv)
{
    if (!SHC_rv)
        return NULL;
    SHC_rv->addr = calloc(1, sizeof(struct pm_mgr));
    SHC_rv->idtor = SHC_rv->addr ? PM_MGR_IDTOR : 0;
    return SHC_rv;
}

PM_PUBLIC void cali_ConfigManager_delete(cali_ConfigManager *self)
{
    struct pm_mgr *m = pm_mgr(self);
    if (!m)
        return;
    for (int i = 0; i < m->nreports; i++)
        free(m->report_output[i]);
    free(m->extra);
    free(m->default_output);
    free(m->config_output);
    free(m);
    self->addr = NULL;
    self->idtor = 0;
}

/* Caliper keeps defaults for options no config has without a word; so
 * does this (only `output` changes anything here). */
PM_PUBLIC void cali_ConfigManager_set_default_parameter(cali_ConfigManager *self,
                                                        const char *option, const char *val)
{
    struct pm_mgr *m = pm_mgr(self);
    if (m && option && val && strcmp(option, "output") == 0)
        pm_set(&m->default_output, val);
}

PM_PUBLIC void cali_ConfigManager_set_default_parameter_for_config(cali_ConfigManager *self,
                                                                   const char *config,
                                                                   const char *option,
                                                                   const char *val)
{
    struct pm_mgr *m = pm_mgr(self);
    if (m && config && option && val && strcmp(config, "runtime-report") == 0 &&
        strcmp(option, "output") == 0)
        pm_set(&m->config_output, val);
}

PM_PUBLIC void cali_ConfigManager_add(cali_ConfigManager *self, const char *config)
{
    struct pm_mgr *m = pm_mgr(self);
    if (m)
        pm_add(m, config);
}

PM_PUBLIC bool cali_ConfigManager_error(cali_ConfigManager *self)
{
    struct pm_mgr *m = pm_mgr(self);
    return m && m->error;
}

PM_PUBLIC void cali_ConfigManager_error_msg_bufferify(cali_ConfigManager *self,
                                                      cali_SHROUD_array *out)
{
    if (!out)
        return;
    memset(out, 0, sizeof *out);
    struct pm_mgr *m = pm_mgr(self);
    char *msg = m && m->error && m->msg[0] ? strdup(m->msg) : NULL;
    out->cxx.addr = msg;
    out->cxx.idtor = msg ? PM_MSG_IDTOR : 0;
    out->addr.ccharp = msg; /* NULL for no message, as Caliper's */
    out->elem_len = msg ? strlen(msg) : 0;
    out->size = 1;
}

PM_PUBLIC void cali_SHROUD_memory_destructor(cali_SHROUD_capsule_data *cap)
{
    if (cap && cap->idtor == PM_MSG_IDTOR)
        free(cap->addr);
    if (cap) {
        cap->addr = NULL;
        cap->idtor = 0;
    }
}

PM_PUBLIC void cali_ConfigManager_start(cali_ConfigManager *self)
{
    struct pm_mgr *m = pm_mgr(self);
    if (m)
        m->started = 1;
}

/* perfmark measures the whole run: nothing to pause. */
PM_PUBLIC void cali_ConfigManager_stop(cali_ConfigManager *self) { (void)self; }

/* Caliper writes a started channel's output at flush(); perfmark's data is
 * complete only at exit, so flush() asks for the report then. */
PM_PUBLIC void cali_ConfigManager_flush(cali_ConfigManager *self)
{
    struct pm_mgr *m = pm_mgr(self);
    if (!m || !m->started)
        return;
    for (int i = 0; i < m->nreports; i++) {
        const char *out = m->report_output[i] ? m->report_output[i]
                          : m->config_output  ? m->config_output
                          : m->default_output ? m->default_output
                                              : "stderr";
        pm_cali_report_at_exit(out);
    }
}

PM_PUBLIC const char *perfmark_cali_config_name(int i)
{
    return i >= 0 && (size_t)i < PM_N_CONFIGS ? pm_configs[i].name : NULL;
}

PM_PUBLIC const char *perfmark_cali_config_doc(const char *name, int full)
{
    for (size_t i = 0; name && i < PM_N_CONFIGS; i++)
        if (strcmp(name, pm_configs[i].name) == 0)
            return full ? pm_configs[i].documentation : pm_configs[i].description;
    return NULL;
}
