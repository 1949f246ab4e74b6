/*
 * text_ranks.h — processes and ranks in the terminal report (text_ranks.c).
 */
#ifndef PM_TEXT_RANKS_H
#define PM_TEXT_RANKS_H

#include "model/report_model.h"

#include <stdio.h>

/* Each process's totals (its inherited counter set) against the sum of its
 * threads' totals. */
void pm_text_process_totals(FILE *out, const struct pm_report *rep);
/* MPI functions, MPI time share and user regions across ranks: only for a
 * file of several ranks (a single-rank report is unchanged). */
void pm_text_across_ranks(FILE *out, const struct pm_report *rep);

#endif /* PM_TEXT_RANKS_H */
