/*
 * report_derived.c — the derived metrics of the CPU-model tables
 * (runtime/count/pm_cpu_models.c: branch, cache and mem groups, each metric a
 * ratio of summed events) per region, for every model group whose events
 * the file holds. IPC has its own column (report_model.c) because it also
 * comes from the generic cycles/instructions events.
 *
 * A metric is scale × Σnum / Σden of the region's event totals (estimates
 * where counts were multiplexed): a ratio of sums over threads and ranks,
 * never a mean of per-thread ratios.
 */
#include "model/report_derived.h"

#include "model/report_count.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define PM_NONE SIZE_MAX

/* The /events row counting table event `pfm` of model m, or PM_NONE. */
static size_t pm_derived_event_row(const struct pm_file *d, const struct pm_cpu_model *m,
                                   const char *pfm)
{
    char q[256];

    if (pm_cpu_model_event_name(m, pfm, q, sizeof q) != 0)
        return PM_NONE;
    for (size_t e = 0; e < d->E; e++)
        if (pm_event_matches(q, &d->events[e]))
            return e;
    return PM_NONE;
}

/* Does the file hold every event of group g (of model m)? Fills rows. */
static int pm_derived_group_rows(const struct pm_file *d, const struct pm_cpu_model *m,
                                 const struct pm_model_group *g, size_t *rows)
{
    int n = pm_model_group_nevents(g);

    for (int k = 0; k < n; k++)
        if ((rows[k] = pm_derived_event_row(d, m, g->events[k].pfm)) == PM_NONE)
            return 0;
    return n > 0;
}

/* The file's model (cpu_model attribute) first, then every table row: a file
 * written before the attribute covered every model group still matches. */
static void pm_derived_find(struct pm_dgroup *groups, size_t *ngroups, const struct pm_file *d)
{    const struct pm_cpu_model *own = pm_cpu_model_find(d->cpu_model);

    for (int id = PM_GROUP_BRANCH; id < PM_NGROUPS; id++) {
        const struct pm_cpu_model *m = own;
        const struct pm_model_group *g = own ? pm_cpu_model_group(own, id) : NULL;
        struct pm_dgroup *dg = &groups[*ngroups];

        if (!g || !pm_derived_group_rows(d, own, g, dg->rows))
            for (m = pm_cpu_models, g = NULL; m->name; m++)
                if ((g = pm_cpu_model_group(m, id)) && pm_derived_group_rows(d, m, g, dg->rows))
                    break;
        if (!m || !m->name || !g)
            continue;
        dg->model = m;
        dg->group = g;
        while (dg->nmetrics < PM_MODEL_MAX_DERIVED && g->derived[dg->nmetrics].name)
            dg->nmetrics++;
        (*ngroups)++;
    }
}

int pm_report_derived_metrics(struct pm_dgroup *groups, size_t *ngroups, const struct pm_file *d,
                              const struct pm_evstat *regev)
{
    pm_derived_find(groups, ngroups, d);
    for (size_t i = 0; i < *ngroups; i++) {
        struct pm_dgroup *dg = &groups[i];

        dg->val = calloc((d->R ? d->R : 1) * (size_t)dg->nmetrics, sizeof *dg->val);
        if (!dg->val)
            return -1;
        for (size_t r = 0; r < d->R; r++)
            for (int k = 0; k < dg->nmetrics; k++) {
                const struct pm_derived_def *def = &dg->group->derived[k];
                const struct pm_evstat *ev = regev + r * d->E;
                const struct pm_evstat *num = &ev[dg->rows[def->num]];
                const struct pm_evstat *den = def->den >= 0 ? &ev[dg->rows[def->den]] : NULL;
                struct pm_dval *v = &dg->val[r * (size_t)dg->nmetrics + (size_t)k];

                if (!num->has_total || (den && (!den->has_total || den->total <= 0)))
                    continue;
                v->has = 1;
                v->value = def->scale * num->total / (den ? den->total : 1.0);
                v->estimate = num->estimate || (den && den->estimate);
                v->untrusted = num->untrusted || (den && den->untrusted);
            }
    }
    return 0;
}

void pm_report_derived_free(struct pm_dgroup *groups, size_t *ngroups)
{
    for (size_t i = 0; i < *ngroups; i++)
        free(groups[i].val);
    *ngroups = 0;
}
