/*
 * report_omp.c — which regions are OpenMP waits, and which regions each
 * wait counts towards (the OpenMP wait share): used by the model, the pass
 * over the cells and the statistics across ranks; calls nothing of them.
 */
#include "model/report_omp.h"

#include <stdint.h>
#include <string.h>

int pm_is_omp_wait(const struct pm_file_region *g)
{
    return strcmp(g->kind, "omp") == 0 &&
           (strcmp(g->name, "omp barrier") == 0 || strcmp(g->name, "omp taskwait") == 0 ||
            strcmp(g->name, "omp taskgroup") == 0 || strcmp(g->name, "omp critical") == 0);
}

size_t pm_omp_wait_pairs(const struct pm_file *d, size_t *above, size_t *wait)
{
    size_t n = 0;

    for (size_t w = 0; w < d->R; w++) {
        if (!pm_is_omp_wait(&d->regions[w]))
            continue;
        /* up to and including the nearest wait above: that one's time
         * already holds this one's (a task run inside a barrier may wait) */
        for (int32_t a = d->regions[w].parent; a >= 0; a = d->regions[a].parent) {
            if (above) {
                above[n] = (size_t)a;
                wait[n] = w;
            }
            n++;
            if (pm_is_omp_wait(&d->regions[a]))
                break;
        }
    }
    return n;
}
