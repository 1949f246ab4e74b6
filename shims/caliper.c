/* Caliper C annotations → perfmark regions (libperfmark-caliper.so).
 *
 * A code annotated with CALI_MARK_BEGIN/END (or the functions behind them:
 * cali_begin_region, cali_end_region) links this library instead of
 * -lcaliper. Caliper's phases and communication regions
 * (CALI_MARK_PHASE_*, CALI_MARK_COMM_REGION_*) become ordinary perfmark
 * regions too: perfmark has one kind of user region. The functions return
 * void in Caliper, so problems (an end that does not match) show only in
 * perfmark's messages and flags. Debian has no Caliper package; the header
 * this is compiled against, shims/include/caliper/cali.h, declares just this
 * subset with Caliper's signatures. Loops are in caliper_loop.c, the
 * ConfigManager in caliper_manager.c and its runtime-report in
 * caliper_report.c. */
#include "caliper/cali.h"
#include "perfmark.h"

#define PM_PUBLIC __attribute__((visibility("default")))

PM_PUBLIC void cali_begin_region(const char *name)
{
    if (name)
        perfmark_region_begin(name);
}

PM_PUBLIC void cali_end_region(const char *name)
{
    if (name)
        perfmark_region_end(name);
}

PM_PUBLIC void cali_begin_phase(const char *name) { cali_begin_region(name); }
PM_PUBLIC void cali_end_phase(const char *name) { cali_end_region(name); }
PM_PUBLIC void cali_begin_comm_region(const char *name) { cali_begin_region(name); }
PM_PUBLIC void cali_end_comm_region(const char *name) { cali_end_region(name); }

/* Caliper initialises lazily; perfmark starts with the process. */
PM_PUBLIC void cali_init(void) {}
PM_PUBLIC int cali_is_initialized(void) { return 1; }

/* Run metadata: perfmark's file has no place for it (docs/guide.md). */
PM_PUBLIC void cali_set_global_double_byname(const char *attr_name, double val)
{
    (void)attr_name, (void)val;
}
PM_PUBLIC void cali_set_global_int_byname(const char *attr_name, int val)
{
    (void)attr_name, (void)val;
}
PM_PUBLIC void cali_set_global_string_byname(const char *attr_name, const char *val)
{
    (void)attr_name, (void)val;
}
PM_PUBLIC void cali_set_global_uint_byname(const char *attr_name, uint64_t val)
{
    (void)attr_name, (void)val;
}
