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
    char summary_output[PM_PATH_MAX]; /* PERFMARK_SUMMARY_OUTPUT: a summary beside the
                                         job's full file, "" for none */
    char fallback_dir[PM_PATH_MAX]; /* PERFMARK_FALLBACK_DIR: the first place to try when
                                       the output cannot be written, "" if unset */
    int bind_cpu;             /* PERFMARK_BIND_CPU (testing aid), -1 if unset */
    int pinned;               /* PERFMARK_PINNED: pin per-thread groups */
    int quiet;                /* PERFMARK_QUIET: no stderr messages */
    int max_regions;          /* PERFMARK_MAX_REGIONS: names per process, paths per thread */
    int pin;                  /* PERFMARK_PIN: enum pm_pin_mode, keep if unset */
    char pin_cpus[512];       /* PERFMARK_PIN_CPUS: "LIST" or "HOST:LIST", "" if unset */
    int topdown_rdpmc;        /* PERFMARK_TOPDOWN_READ: 1 auto (rdpmc where granted), 0 read */
    long long job_gather_max; /* PERFMARK_JOB_GATHER_MAX: larger job files are written
                                 collectively (pm_writer.h), -1 if unset */
    int detail;               /* PERFMARK_DETAIL: enum pm_detail (pm_output.h) */
    long long summary_above;  /* PERFMARK_SUMMARY_ABOVE (bytes), -1 if unset */
    long long summary_keep;   /* PERFMARK_SUMMARY_KEEP (bytes), -1 if unset */
    char sample[1024];        /* PERFMARK_SAMPLE: "EVENT@PERIOD,...", "" for none */
    int count_sampled;        /* PERFMARK_COUNT=sampled: the events are sampled, not read */
    unsigned long long interval_ns; /* PERFMARK_INTERVAL: counts over time, 0 = off */
    long series_memory_mb;    /* PERFMARK_SERIES_MEMORY (MiB), -1 = default */
    int node;                 /* PERFMARK_NODE: watch every CPU of the job's cpuset */
    unsigned sample_pages;    /* PERFMARK_SAMPLE_PAGES: ring data pages per thread, 0 default */
    int sample_callchain;     /* PERFMARK_SAMPLE_CALLCHAIN: PM_CHAIN_* */
    unsigned sample_stack;    /* PERFMARK_SAMPLE_STACK: bytes of stack per sample, 0 default */
    long sample_max_sites;    /* PERFMARK_SAMPLE_MAX_SITES: (region, IP) pairs per thread, -1 default */
    int threads_at_birth;     /* PERFMARK_THREADS=all (default): every thread counted from
                                 its start; markers: from its first marker or construct */
    int threads_own;          /* PERFMARK_THREADS=own: as all, each thread by counters of
                                 its own from its start (not the kernel's record at its exit) */
    char threads_exclude[512]; /* PERFMARK_THREADS_EXCLUDE: comma list of name patterns */
    long thread_ring_kb;      /* PERFMARK_THREAD_RING_KB: the ring of thread exit records */
    struct pm_throttle {      /* PERFMARK_THROTTLE (docs/guide.md, "Overhead") */
        int on;               /* 0: every visit of every region reads counters */
        long warmup;          /* visits before a region is judged */
        long k;               /* throttled below K counter-read costs per visit */
    } throttle;
};

/* 100, not 1000: the warm-up's own readings were most of what -e sw cost
 * hpcc (seven MPI regions x 1000 visits x 2 readings x 2 ranks, 28 ms of a
 * 0.65 s run); a mean over 100 visits judges a region as well. */
#define PM_THROTTLE_WARMUP 100
#define PM_THROTTLE_K 40

void pm_config_read(struct pm_config *cfg);
/* A boolean environment value: 1/yes/true/on → 1, 0/no/false/off/"" → 0,
 * anything else → `fallback` (and *bad set to 1). */
int pm_parse_bool(const char *text, int fallback, int *bad);
/* PERFMARK_THROTTLE: "on" (the defaults), "off", or "warmup=N,k=K" with
 * either key. 0, or -1 (and *out set to the defaults) if the text is
 * anything else. */
int pm_parse_throttle(const char *text, struct pm_throttle *out);

#endif
