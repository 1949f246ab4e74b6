/*
 * json_ranks.h — the report's JSON keys across ranks (json_ranks.c).
 */
#ifndef PM_JSON_RANKS_H
#define PM_JSON_RANKS_H

#include "model/report_model.h"

#include <stdio.h>

/* ",\n  \"ranks\":..., regions_by_rank, mpi_functions, mpi_share" for a
 * file of several ranks; nothing otherwise (single-rank output keeps its
 * exact layout). */
void pm_json_ranks(FILE *out, const struct pm_report *rep);

#endif /* PM_JSON_RANKS_H */
