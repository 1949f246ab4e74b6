/* pm_shim_check — at start, whether the markers a program calls for another
 * tool (LIKWID, PAPI's high-level API, Caliper) reach perfmark's shim or the
 * tool's own library; one message per tool when they do not
 * (pm_shim_check.c). `say_on_stderr`: 0 keeps it in the file only (ranks
 * other than 0 say it there). */
#ifndef PM_SHIM_CHECK_H
#define PM_SHIM_CHECK_H

void pm_shim_check(int say_on_stderr);

#endif
