/* The kernel's software events by the names people type, encoded without
 * libpfm4. Loading and initialising libpfm4 costs ~3 ms in every measured
 * process (dlopen, then pfm_initialize probing every PMU table), at the
 * start of each rank, before MPI_Init: `-e sw`, and `default` where no PMU
 * exists, need nothing but these. Each row must give exactly what libpfm4
 * gives for the same name (attr and fully qualified name): unit_encoding
 * compares every row, in both privilege modes, with libpfm4 itself. A name
 * with a modifier, another spelling or another case goes to libpfm4. */
#include "pm_events.h"

#include <stdio.h>
#include <string.h>

static const struct {
    const char *name;
    unsigned long long config;
    const char *pfm;  /* libpfm4's event in its `perf` PMU */
} pm_sw_events[] = {
    {"cpu-clock", PERF_COUNT_SW_CPU_CLOCK, "PERF_COUNT_SW_CPU_CLOCK"},
    {"task-clock", PERF_COUNT_SW_TASK_CLOCK, "PERF_COUNT_SW_TASK_CLOCK"},
    {"page-faults", PERF_COUNT_SW_PAGE_FAULTS, "PERF_COUNT_SW_PAGE_FAULTS"},
    {"context-switches", PERF_COUNT_SW_CONTEXT_SWITCHES, "PERF_COUNT_SW_CONTEXT_SWITCHES"},
    {"cpu-migrations", PERF_COUNT_SW_CPU_MIGRATIONS, "PERF_COUNT_SW_CPU_MIGRATIONS"},
    {"minor-faults", PERF_COUNT_SW_PAGE_FAULTS_MIN, "PERF_COUNT_SW_PAGE_FAULTS_MIN"},
    {"major-faults", PERF_COUNT_SW_PAGE_FAULTS_MAJ, "PERF_COUNT_SW_PAGE_FAULTS_MAJ"},
};

int pm_sw_event_encode(const char *name, int user_only, struct pm_event *ev)
{
    for (size_t i = 0; i < sizeof pm_sw_events / sizeof *pm_sw_events; i++) {
        if (strcmp(name, pm_sw_events[i].name) != 0)
            continue;
        ev->attr.type = PERF_TYPE_SOFTWARE;
        ev->attr.config = pm_sw_events[i].config;
        /* libpfm4's defaults for its perf PMU: no hypervisor, no guest
         * (mh=1, mg=0); user only where the kernel allows no more. */
        ev->attr.exclude_hv = 1;
        ev->attr.exclude_guest = 1;
        ev->attr.exclude_kernel = user_only ? 1 : 0;
        snprintf(ev->pfm_name, sizeof ev->pfm_name, "perf::%s:u=1:k=%d:excl=0:mg=0:mh=1",
                 pm_sw_events[i].pfm, user_only ? 0 : 1);
        return 0;
    }
    return -1;
}
