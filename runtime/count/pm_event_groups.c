/* Named event groups: data, not code. `default` is resolved at run time to
 * `ipc` plus the basic software events where a PMU exists, to `sw` otherwise;
 * groups marked per_model take their events from the CPU-model tables
 * (pm_cpu_models.c), since the events differ by model. Add a group by adding
 * a row. */
#include "pm_events.h"

#include <string.h>

const struct pm_event_group_def pm_event_groups[] = {
    {"default", "ipc + task-clock + page-faults where a PMU exists, sw otherwise", 0, 0,
     {NULL}},
    {"sw", "software events the kernel counts everywhere", 0, 0,
     {"task-clock", "page-faults", "context-switches", "cpu-migrations", NULL}},
    {"ipc", "cycles and instructions (instructions per cycle)", 1, 0,
     {"cycles", "instructions", NULL}},
    {"topdown", "TopDown level 1 (and 2 where the CPU has it): pipeline slots by cause", 1, 1,
     {NULL}},
    {"branch", "branches and mispredicts", 1, 1, {NULL}},
    {"cache", "L1D, L2 and last-level cache misses", 1, 1, {NULL}},
    {"mem", "last-level misses and a memory bandwidth estimate", 1, 1, {NULL}},
    {"none", "no counters: region visits and wall time only", 0, 0, {NULL}},
    {NULL, NULL, 0, 0, {NULL}},
};

/* What `default` becomes where a PMU exists. */
const char *const pm_default_with_pmu[] = {"cycles", "instructions", "task-clock",
                                           "page-faults", NULL};

const struct pm_event_group_def *pm_event_group_find(const char *name)
{
    for (const struct pm_event_group_def *g = pm_event_groups; g->name; g++)
        if (strcmp(g->name, name) == 0)
            return g;
    return NULL;
}
