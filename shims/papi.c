/* PAPI high-level API → perfmark regions (libperfmark-papi.so).
 *
 * A code using PAPI_hl_region_begin/end (papi.h, PAPI 6 and 7) links this
 * library instead of -lpapi. Signatures and return codes are PAPI's; the
 * constants are restated here (PAPI_OK 0, PAPI_EINVAL -1, as in papi.h) so
 * that this library builds without papi.h; the tests compile their programs
 * against the real papi.h.
 *
 * Mapping and differences, by design:
 * - PAPI_hl_region_begin/end(name) are perfmark_region_begin/end(name);
 *   regions nest by call path, as in PAPI.
 * - PAPI_hl_read(name) is accepted and does nothing: perfmark has no
 *   intermediate reads; the region's totals are written at exit.
 * - PAPI_hl_stop() is accepted and does nothing: perfmark measures until the
 *   process ends (under `perfmark run`) and writes one file then; events are
 *   chosen with `perfmark run -e`, not PAPI_EVENTS.
 * - Return values: PAPI_OK for any non-NULL name, PAPI_EINVAL for NULL, even
 *   when perfmark is not measuring or the call is unbalanced (perfmark reports
 *   that in its messages and flags), so that a program that aborts on a
 *   non-PAPI_OK result keeps running. */
#include "perfmark.h"

#include <stddef.h>

#define PM_PUBLIC __attribute__((visibility("default")))
#define PM_PAPI_OK 0
#define PM_PAPI_EINVAL (-1)

/* Where PAPI's own header is installed, compile against it: the compiler
 * then checks the definitions below against PAPI's declarations, and the
 * restated constants against PAPI's. */
#if defined(__has_include)
#if __has_include(<papi.h>)
#include <papi.h>
_Static_assert(PM_PAPI_OK == PAPI_OK && PM_PAPI_EINVAL == PAPI_EINVAL, "PAPI return codes");
#endif
#endif

PM_PUBLIC int PAPI_hl_region_begin(const char *region)
{
    if (!region)
        return PM_PAPI_EINVAL;
    perfmark_region_begin(region);
    return PM_PAPI_OK;
}

PM_PUBLIC int PAPI_hl_region_end(const char *region)
{
    if (!region)
        return PM_PAPI_EINVAL;
    perfmark_region_end(region);
    return PM_PAPI_OK;
}

PM_PUBLIC int PAPI_hl_read(const char *region)
{
    return region ? PM_PAPI_OK : PM_PAPI_EINVAL;
}

PM_PUBLIC int PAPI_hl_stop(void)
{
    return PM_PAPI_OK;
}
