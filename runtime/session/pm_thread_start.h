/* pm_thread_start — where a thread started, for people: its start
 * routine as "function (object)", or "object+0xOFF" for a function without
 * an exported name (dladdr); "" when unknown (the main thread, threads
 * running before perfmark started). For the /threads rows and
 * PERFMARK_THREADS_EXCLUDE. */
#ifndef PM_THREAD_START_H
#define PM_THREAD_START_H

#include <stddef.h>

void pm_thread_start_name(const void *start_fn, char *out, size_t len);

#endif
