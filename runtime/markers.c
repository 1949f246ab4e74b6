/* The public marker API (include/perfmark.h): thin entry points onto the
 * calling thread's state. errno is preserved: a marker must never change
 * what the application sees. */
#include "perfmark.h"
#include "pm_names.h"
#include "pm_session.h"

#include <errno.h>

#define PM_PUBLIC __attribute__((visibility("default")))

PM_PUBLIC int perfmark_region_begin(const char *name)
{
    struct pm_thread *t = pm_session_thread();
    if (!t || !name)
        return -1;
    int saved = errno;
    int32_t id = pm_thread_name_id(t, name);
    int rc = id < 0 ? -1 : pm_thread_enter(t, id);
    errno = saved;
    return rc;
}

PM_PUBLIC int perfmark_region_end(const char *name)
{
    struct pm_thread *t = pm_session_thread();
    if (!t || !name)
        return -1;
    int saved = errno;
    int32_t id = pm_thread_name_id(t, name);
    int rc = id < 0 ? -1 : pm_thread_exit(t, id);
    errno = saved;
    return rc;
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
    int saved = errno;
    int rc = pm_thread_enter(t, region);
    errno = saved;
    return rc;
}

PM_PUBLIC int perfmark_region_exit(perfmark_region_t region)
{
    struct pm_thread *t = pm_session_thread();
    if (!t || region < 0 || region >= pm_name_count())
        return -1;
    int saved = errno;
    int rc = pm_thread_exit(t, region);
    errno = saved;
    return rc;
}

PM_PUBLIC int perfmark_active(void) { return pm_session_thread() != NULL; }
