/* pm_config — the PERFMARK_* environment, read once into one struct.
 * Bad values never stop the run: each gets one message and the default. */
#ifndef PM_CONFIG_H
#define PM_CONFIG_H

#define PM_PATH_MAX 4096

struct pm_config {
    int enable;               /* PERFMARK_ENABLE: measure at all ... */
    int enable_set;           /* ... if set; else: is libperfmark in LD_PRELOAD? */
    long launch_pid;          /* PERFMARK_PID: the process `perfmark run` exec'd, 0 if unset */
    char events[1024];        /* PERFMARK_EVENTS, "default" if unset */
    char output[PM_PATH_MAX]; /* PERFMARK_OUTPUT, "" for the default name */
    int bind_cpu;             /* PERFMARK_BIND_CPU (testing aid), -1 if unset */
    int pinned;               /* PERFMARK_PINNED: pin per-thread groups */
    int quiet;                /* PERFMARK_QUIET: no stderr messages */
    int max_regions;          /* PERFMARK_MAX_REGIONS: names per process, paths per thread */
    int pin;                  /* PERFMARK_PIN: enum pm_pin_mode, keep if unset */
    int topdown_rdpmc;        /* PERFMARK_TOPDOWN_READ: 1 auto (rdpmc where granted), 0 read */
};

void pm_config_read(struct pm_config *cfg);
/* A boolean environment value: 1/yes/true/on → 1, 0/no/false/off/"" → 0,
 * anything else → `fallback` (and *bad set to 1). */
int pm_parse_bool(const char *text, int fallback, int *bad);

#endif
