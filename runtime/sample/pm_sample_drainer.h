/* pm_sample_drainer — one thread per sampling process that empties the
 * rings of threads that stay long inside one region (their markers drain
 * them otherwise): it sleeps in poll() until a ring is half full (the
 * kernel's wake-up mark) or for at most PM_DRAINER_PERIOD_MS, then drains
 * every ring that holds records and is not being drained by its owner.
 * docs/design.md, "Sampling". */
#ifndef PM_SAMPLE_DRAINER_H
#define PM_SAMPLE_DRAINER_H

#include "pm_sampler.h"

#define PM_DRAINER_PERIOD_MS 100
/* With DWARF call paths the owners' markers move copied stacks aside
 * without waking anyone: the drainer then comes every 10 ms to unwind them
 * (at 1 kHz, ~10 stacks a thread), well before a thread's stash fills. */
#define PM_DRAINER_PERIOD_UNWIND_MS 10

/* Start the thread (once). 0, or -1 with errno: then rings fill up inside
 * long regions and the kernel counts what it could not store as lost. */
int pm_sample_drainer_start(int period_ms);
/* Rings the drainer looks after: added by their owner once open, removed
 * before they close. */
void pm_sample_drainer_add(struct pm_sampler *s);
void pm_sample_drainer_remove(struct pm_sampler *s);
/* Stop and join the thread (finalize, before the last drains). */
void pm_sample_drainer_stop(void);
/* Stop without waiting (the emergency dump: the thread may hold a ring). */
void pm_sample_drainer_stop_async(void);
/* In a fork child: no drainer thread exists; forget its list and lock. */
void pm_sample_drainer_after_fork(void);

#endif
