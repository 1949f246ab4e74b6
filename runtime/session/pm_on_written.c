/* Callbacks run once after this process's file is written (pm_on_written.h). */
#include "pm_on_written.h"

#include <pthread.h>

#define PM_PUBLIC __attribute__((visibility("default")))
#define PM_ON_WRITTEN_MAX 8

static pthread_mutex_t pm_on_written_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    pm_written_fn fn;
    void *arg;
} pm_on_written[PM_ON_WRITTEN_MAX];
static int pm_n_on_written;
static int pm_on_written_open;  /* under the lock: the session measures */

void pm_on_written_accept(int yes)
{
    pthread_mutex_lock(&pm_on_written_lock);
    pm_on_written_open = yes;
    pthread_mutex_unlock(&pm_on_written_lock);
}

PM_PUBLIC int pm_on_file_written(pm_written_fn fn, void *arg)
{
    int rc = -1;
    pthread_mutex_lock(&pm_on_written_lock);
    if (fn && pm_on_written_open && pm_n_on_written < PM_ON_WRITTEN_MAX) {
        pm_on_written[pm_n_on_written].fn = fn;
        pm_on_written[pm_n_on_written].arg = arg;
        pm_n_on_written++;
        rc = 0;
    }
    pthread_mutex_unlock(&pm_on_written_lock);
    return rc;
}

void pm_on_written_run(const char *file, int rank)
{
    pthread_mutex_lock(&pm_on_written_lock);
    int n = pm_n_on_written;
    pm_n_on_written = 0;  /* once */
    pthread_mutex_unlock(&pm_on_written_lock);
    for (int i = 0; i < n; i++)
        pm_on_written[i].fn(file, rank, pm_on_written[i].arg);
}
