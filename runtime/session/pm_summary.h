/* pm_summary — the last resort when no place can take the file: a compact
 * text summary on stderr (and in no file), so that a run whose output could
 * not be stored still says what it measured. Per region path, merged over
 * the process's threads, the longest first: visits, wall time and the first
 * events' raw counts. */
#ifndef PM_SUMMARY_H
#define PM_SUMMARY_H

#include "pm_output.h"

#include <stdio.h>

/* At most this many regions are printed (the rest are counted). */
#define PM_SUMMARY_REGIONS 30

void pm_summary_print(const struct pm_output *o, FILE *out);

#endif
