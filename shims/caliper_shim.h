/* Inside libperfmark-caliper.so: what the ConfigManager (caliper_manager.c)
 * asks of the report at exit (caliper_report.c). */
#ifndef PM_CALIPER_SHIM_H
#define PM_CALIPER_SHIM_H

/* A runtime-report config was flushed: print perfmark's text report of this
 * run to `output` ("stderr", "stdout" or a file name, relative to the
 * working directory now) once the file is written at exit. Once per
 * distinct output, however often it is asked. */
void pm_cali_report_at_exit(const char *output);

#endif
