/* The public marker API (include/perfmark.h): thin entry points onto the
 * calling thread's state. A marker never changes errno: the hot path makes
 * no call that can set it (raw syscall for reads), and every slow path that
 * can (allocation, interning, reopening, messages) saves and restores it. */
#include "perfmark.h"
#include "pm_names.h"
#include "pm_session.h"

#include <errno.h>

#define PM_PUBLIC __attribute__((visibility("default")))

PM_PUBLIC int perfmark_region_begin(const char *name)
{
    struct pm_thread *t = pm_session_thread();
    return t && name ? pm_thread_begin_name(t, name) : -1;
}

PM_PUBLIC int perfmark_region_end(const char *name)
{
    struct pm_thread *t = pm_session_thread();
    return t && name ? pm_thread_end_name(t, name) : -1;
}

PM_PUBLIC perfmark_region_t perfmark_region(const char *name)
{
    if (!name || !pm_session_thread())
        return -1;
    int saved = errno;
    int32_t id = pm_name_intern(name, NULL);
    errno = saved;
    return id;
}

PM_PUBLIC int perfmark_region_enter(perfmark_region_t region)
{
    struct pm_thread *t = pm_session_thread();
    if (!t || region < 0 || region >= pm_name_count())
        return -1;
    return pm_thread_enter(t, region) < 0 ? -1 : 0;
}

PM_PUBLIC int perfmark_region_exit(perfmark_region_t region)
{
    struct pm_thread *t = pm_session_thread();
    return t && region >= 0 && region < pm_name_count() ? pm_thread_exit(t, region) : -1;
}

PM_PUBLIC int perfmark_active(void) { return pm_session_thread() != NULL; }
