/* pm_app_pin.c — the application's own pinning, bound and recorded
 * (pm_app_pin.h). */
#define _GNU_SOURCE
#include "pm_app_pin.h"
#include "pm_pin.h"
#include "pm_session.h"

#include <errno.h>

#define PM_PUBLIC __attribute__((visibility("default")))

PM_PUBLIC int pm_app_pin_self(int cpu)
{
    if (pm_pin_self_to(cpu) != 0)
        return -1;
    /* A thread already seen: its row says where it is bound now. One not
     * seen yet reads its binding when it is (after this). */
    struct pm_thread *t = pm_self;
    if (t && __atomic_load_n(&pm_state, __ATOMIC_RELAXED) == PM_ON) {
        int saved = errno;
        pm_pin_affinity(0, t->binding, sizeof t->binding);
        errno = saved;
    }
    return 0;
}
