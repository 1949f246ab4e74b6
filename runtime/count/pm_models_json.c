/*
 * pm_models_json — write the CPU-model tables (pm_cpu_models.c) as JSON at
 * build time: what a reader in another language (the Python package's
 * TopDown and derived metrics) loads instead of keeping its own copy of the
 * events and formulas. usage: pm_models_json OUT.json
 *
 * Only the table and its accessors are used (no libpfm4, no detection), so
 * that python/setup.py can compile this file with pm_cpu_models.c,
 * pm_cpu_id.c and pm_cpu_match.c alone.
 */
#include "pm_cpu_id.h"
#include "pm_cpu_models.h"

#include "pm_json_str.h"

#include <stdio.h>

/* The names a file's topdown_method attribute uses (report_topdown.c). */
static const char *pm_method_name(enum pm_td_method m)
{
    static const char *const names[PM_TD_NMETHODS] = {"", "perf_metrics", "skylake", "zen4",
                                                      "arm", "atom"};
    return (unsigned)m < PM_TD_NMETHODS ? names[m] : "";
}

static void pm_json_group(FILE *f, const struct pm_cpu_model *m, const struct pm_model_group *g)
{
    fputs("{\"name\": ", f);
    pm_json_put_str(f, g->name);
    fputs(", \"description\": ", f);
    pm_json_put_str(f, g->description);
    fputs(",\n       \"events\": [", f);
    for (int i = 0; i < pm_model_group_nevents(g); i++) {
        char q[256];
        /* the qualified name is what /events rows are matched against; null
         * where it does not fit (the report matches no row then) */
        int named = pm_cpu_model_event_name(m, g->events[i].pfm, q, sizeof q) == 0;

        fprintf(f, "%s{\"pfm\": ", i ? ", " : "");
        pm_json_put_str(f, g->events[i].pfm);
        fputs(", \"qualified\": ", f);
        pm_json_put_str(f, named ? q : NULL);
        fputs(", \"label\": ", f);
        pm_json_put_str(f, g->events[i].label);
        fputc('}', f);
    }
    fputs("],\n       \"derived\": [", f);
    for (int k = 0; k < PM_MODEL_MAX_DERIVED && g->derived[k].name; k++) {
        const struct pm_derived_def *d = &g->derived[k];

        fprintf(f, "%s{\"name\": ", k ? ", " : "");
        pm_json_put_str(f, d->name);
        fputs(", \"description\": ", f);
        pm_json_put_str(f, d->formula);
        /* %.17g: the reader's double is the table's, bit for bit */
        fprintf(f, ", \"num\": %d, \"den\": %d, \"scale\": %.17g}", d->num, d->den, d->scale);
    }
    fputs("]}", f);
}

/* The CPUs (pm_cpu_match.c) whose row is m: for people, not for matching. */
static void pm_json_cpus(FILE *f, const struct pm_cpu_model *m)
{
    static const char *const vendors[] = {"other", "intel", "amd", "arm"};
    int n = 0;

    fputc('[', f);
    for (const struct pm_cpu_match *c = pm_cpu_matches; c->cpu_name; c++) {
        if (!c->row || pm_cpu_model_find(c->row) != m)
            continue;
        fprintf(f, "%s{\"vendor\": \"%s\", \"family\": %u, \"model_lo\": %u, \"model_hi\": %u, "
                   "\"name\": ",
                n++ ? ", " : "", (unsigned)c->vendor < 4 ? vendors[c->vendor] : "other",
                c->family, c->model_lo, c->model_hi);
        pm_json_put_str(f, c->cpu_name);
        fputc('}', f);
    }
    fputc(']', f);
}

int main(int argc, char **argv)
{
    static const char *const group_ids[PM_NGROUPS] = {"topdown", "ipc", "branch", "cache",
                                                      "mem"};
    FILE *f = argc == 2 ? fopen(argv[1], "w") : NULL;

    if (!f) {
        fprintf(stderr, "usage: pm_models_json OUT.json\n");
        return 2;
    }
    fputs("{\n  \"groups\": [", f);
    for (int id = 0; id < PM_NGROUPS; id++)
        fprintf(f, "%s\"%s\"", id ? ", " : "", group_ids[id]);
    fputs("],\n  \"models\": [\n", f);
    for (const struct pm_cpu_model *m = pm_cpu_models; m->name; m++) {
        fputs("    {\"name\": ", f);
        pm_json_put_str(f, m->name);
        fputs(", \"pfm_pmu\": ", f);
        pm_json_put_str(f, m->pfm_pmu);
        fputs(", \"description\": ", f);
        pm_json_put_str(f, m->description);
        fprintf(f, ",\n     \"td_method\": \"%s\", \"td_levels\": %d, \"hybrid\": %s, "
                   "\"td_slots_per_cycle\": %d, \"td_fe_mispred_cycles\": %d,\n     \"note\": ",
                pm_method_name(m->td_method), m->td_levels, m->hybrid ? "true" : "false",
                m->td_slots_per_cycle, m->td_fe_mispred_cycles);
        pm_json_put_str(f, m->note);
        fputs(",\n     \"cpus\": ", f);
        pm_json_cpus(f, m);
        /* by group id, null where the model has none (e.g. no TopDown) */
        fputs(",\n     \"groups\": {", f);
        for (int id = 0; id < PM_NGROUPS; id++) {
            const struct pm_model_group *g = pm_cpu_model_group(m, (enum pm_model_group_id)id);

            fprintf(f, "%s\n      \"%s\": ", id ? "," : "", group_ids[id]);
            if (g)
                pm_json_group(f, m, g);
            else
                fputs("null", f);
        }
        fprintf(f, "}}%s\n", m[1].name ? "," : "");
    }
    fputs("  ]\n}\n", f);
    return fclose(f) == 0 ? 0 : 1;
}
