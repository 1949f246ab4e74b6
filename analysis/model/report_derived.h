/*
 * report_derived.h — the derived metrics of runtime/count/pm_cpu_models.c's tables
 * (branch, cache, mem groups) per region (report_derived.c).
 */
#ifndef PM_REPORT_DERIVED_H
#define PM_REPORT_DERIVED_H

#include "h5read.h"
#include "pm_cpu_models.h"

#include <stddef.h>

struct pm_evstat;

/* A derived metric of one region (report_derived.c). */
struct pm_dval {
    int has;
    double value;
    int estimate, untrusted;
};

/* A CPU-model group (branch, cache, mem) whose events the file holds. */
struct pm_dgroup {
    const struct pm_cpu_model *model;
    const struct pm_model_group *group;
    size_t rows[PM_MODEL_MAX_EVENTS]; /* /events row of each group event */
    int nmetrics;
    struct pm_dval *val;              /* [R][nmetrics] by row */
};

/* The branch/cache/mem metrics of runtime/count/pm_cpu_models.c per region of
 * file `d`, from its regions' event statistics (`regev`, [R*E] by row), for
 * every group whose events the file holds: groups[0 .. *ngroups), at most
 * PM_NGROUPS. 0, or -1 when out of memory (then free them). */
int pm_report_derived_metrics(struct pm_dgroup *groups, size_t *ngroups, const struct pm_file *d,
                              const struct pm_evstat *regev);
void pm_report_derived_free(struct pm_dgroup *groups, size_t *ngroups);
/* Does /events row `ev` count the table event whose qualified name is `q`
 * (pm_cpu_model_event_name), under any spelling with neutral modifiers? */
int pm_event_matches(const char *q, const struct pm_file_event *ev);

#endif /* PM_REPORT_DERIVED_H */
