/* Golden table: event names → perf_event_attr through libpfm4, for Intel
 * models this machine does not have (LIBPFM_ENCODE_INACTIVE=1), the
 * software events, and every class of bad input. Each row carries its line
 * so a failure points at the entry. Encodings: Intel SDM event select layout
 * (event | umask << 8 | edge << 18 | inv << 23 | cmask << 24). */
#include "check.h"
#include "pm_events.h"

#include <stdlib.h>
#include <string.h>

struct golden {
    int line;
    const char *name;
    int ok;                 /* 1: encodes, 0: must be refused */
    unsigned type;
    unsigned long long config;
    int exclude_user, exclude_kernel;
    const char *message;    /* for refusals: text the sentence must contain */
};

#define ROW(...) {__LINE__, __VA_ARGS__}
static const struct golden table[] = {
    ROW("spr::INST_RETIRED:ANY_P", 1, PERF_TYPE_RAW, 0xc0, 0, 0, NULL),
    ROW("spr::TOPDOWN:SLOTS", 1, PERF_TYPE_RAW, 0x400, 0, 0, NULL),
    /* Not spr::TOPDOWN:BACKEND_BOUND_SLOTS: libpfm4 4.13 encodes it as 0x200,
     * Intel's list says event 0xA4 umask 0x02 (0x2a4); perfmark's TopDown
     * tables use the kernel's metric events instead (runtime/count/pm_cpu_models.c). */
    ROW("spr::MEM_LOAD_RETIRED:L3_MISS", 1, PERF_TYPE_RAW, 0x20d1, 0, 0, NULL),
    ROW("icx::BR_MISP_RETIRED:ALL_BRANCHES", 1, PERF_TYPE_RAW, 0xc5, 0, 0, NULL),
    ROW("icx::CPU_CLK_UNHALTED:THREAD_P", 1, PERF_TYPE_RAW, 0x3c, 0, 0, NULL),
    ROW("icx::TOPDOWN:SLOTS", 1, PERF_TYPE_RAW, 0x400, 0, 0, NULL),
    /* modifiers: user/kernel mode, edge, invert, counter mask */
    ROW("icx::INST_RETIRED:ANY_P:u", 1, PERF_TYPE_RAW, 0xc0, 0, 1, NULL),
    ROW("icx::INST_RETIRED:ANY_P:k", 1, PERF_TYPE_RAW, 0xc0, 1, 0, NULL),
    ROW("icx::INST_RETIRED:ANY_P:e:c=1", 1, PERF_TYPE_RAW, 0x10400c0, 0, 0, NULL),
    ROW("icx::INST_RETIRED:ANY_P:i:c=1", 1, PERF_TYPE_RAW, 0x18000c0, 0, 0, NULL),
    ROW("icx::INST_RETIRED:ANY_P:e:i:c=2", 1, PERF_TYPE_RAW, 0x28400c0, 0, 0, NULL),
    /* software events, by the names people type */
    ROW("task-clock", 1, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, 0, 0, NULL),
    ROW("page-faults", 1, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, 0, 0, NULL),
    ROW("page-faults:u", 1, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, 0, 1, NULL),
    ROW("context-switches", 1, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, 0, 0, NULL),
    ROW("cpu-migrations", 1, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS, 0, 0, NULL),
    ROW("cycles", 1, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, 0, 0, NULL),
    ROW("instructions", 1, PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, 0, 0, NULL),
    /* refusals */
    ROW("page-fault", 0, 0, 0, 0, 0, "did you mean page-faults"),
    ROW("task-clok", 0, 0, 0, 0, 0, "did you mean task-clock"),
    ROW("icx::NOPE", 0, 0, 0, 0, 0, "unknown event 'icx::NOPE'"),
    ROW("page-faults:x", 0, 0, 0, 0, 0, "bad modifier in 'page-faults:x'"),
    ROW("spr::INST_RETIRED:ANY_P:zz", 0, 0, 0, 0, 0, "bad modifier"),
    ROW("spr::INST_RETIRED:ANY_P:c=300", 0, 0, 0, 0, 0, "bad modifier value"),
    /* Intel: edge detect is meaningless without a counter mask */
    ROW("icx::INST_RETIRED:ANY_P:e", 0, 0, 0, 0, 0, "bad modifier"),
    ROW("", 0, 0, 0, 0, 0, "empty event name"),
};

/* perfmark's table of software events (runtime/count/pm_sw_events.c) must
 * encode every name exactly as libpfm4 does, attr and qualified name, in
 * both privilege modes; and names off the table (other case, modifiers,
 * unknown) must still reach libpfm4. */
static void sw_table_is_libpfm(void)
{
    static const char *const names[] = {"cpu-clock", "task-clock", "page-faults",
                                        "context-switches", "cpu-migrations",
                                        "minor-faults", "major-faults"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        for (int user_only = 0; user_only <= 1; user_only++) {
            struct pm_event table_ev, pfm_ev, probe;
            char err[PM_NOTE_LEN] = "";
            memset(&probe, 0, sizeof probe);
            CHECK(pm_sw_event_encode(names[i], user_only, &probe) == 0,
                  "'%s' is not in the software table", names[i]);
            CHECK(pm_event_encode(names[i], user_only, &table_ev, err, sizeof err) == 0,
                  "'%s': %s", names[i], err);
            CHECK(pm_event_encode_pfm(names[i], user_only, &pfm_ev, err, sizeof err) == 0,
                  "'%s' through libpfm4: %s", names[i], err);
            CHECK(memcmp(&table_ev.attr, &pfm_ev.attr, sizeof table_ev.attr) == 0,
                  "'%s' (user_only %d): the table's attr differs from libpfm4's "
                  "(type %u/%u config %llu/%llu exclude_kernel %d/%d exclude_hv %d/%d "
                  "exclude_guest %d/%d)", names[i], user_only, table_ev.attr.type,
                  pfm_ev.attr.type, (unsigned long long)table_ev.attr.config,
                  (unsigned long long)pfm_ev.attr.config, table_ev.attr.exclude_kernel,
                  pfm_ev.attr.exclude_kernel, table_ev.attr.exclude_hv, pfm_ev.attr.exclude_hv,
                  table_ev.attr.exclude_guest, pfm_ev.attr.exclude_guest);
            CHECK(strcmp(table_ev.pfm_name, pfm_ev.pfm_name) == 0,
                  "'%s' (user_only %d): table name '%s', libpfm4 '%s'", names[i], user_only,
                  table_ev.pfm_name, pfm_ev.pfm_name);
            CHECK(strcmp(table_ev.name, names[i]) == 0, "'%s': name '%s'", names[i],
                  table_ev.name);
        }
    }
    static const char *const off_table[] = {"TASK-CLOCK", "task-clock:u", "page-faults:k=1",
                                            "perf::PERF_COUNT_SW_TASK_CLOCK", "cycles"};
    for (size_t i = 0; i < sizeof off_table / sizeof *off_table; i++) {
        struct pm_event probe;
        memset(&probe, 0, sizeof probe);
        CHECK(pm_sw_event_encode(off_table[i], 0, &probe) != 0,
              "'%s' taken by the software table: libpfm4 must decide it", off_table[i]);
    }
}

int main(void)
{
    /* Must be set before libpfm4 initialises: encode PMUs not present. */
    setenv("LIBPFM_ENCODE_INACTIVE", "1", 1);
    CHECK(pm_events_init() == 0, "libpfm4 did not initialise");
    for (size_t i = 0; i < sizeof table / sizeof *table; i++) {
        const struct golden *g = &table[i];
        struct pm_event ev;
        char err[PM_NOTE_LEN] = "";
        int rc = pm_event_encode(g->name, 0, &ev, err, sizeof err);
        if (g->ok) {
            CHECK(rc == 0, "line %d '%s': refused: %s", g->line, g->name, err);
            if (rc)
                continue;
            CHECK(ev.attr.type == g->type, "line %d '%s': type %u, want %u", g->line,
                  g->name, ev.attr.type, g->type);
            CHECK(ev.attr.config == g->config, "line %d '%s': config %#llx, want %#llx",
                  g->line, g->name, (unsigned long long)ev.attr.config, g->config);
            CHECK(ev.attr.exclude_user == (unsigned)g->exclude_user &&
                      ev.attr.exclude_kernel == (unsigned)g->exclude_kernel,
                  "line %d '%s': exclude_user=%d exclude_kernel=%d", g->line, g->name,
                  ev.attr.exclude_user, ev.attr.exclude_kernel);
            CHECK(ev.attr.size == sizeof ev.attr, "line %d: attr.size not set", g->line);
        } else {
            CHECK(rc != 0, "line %d '%s': accepted, must be refused", g->line, g->name);
            CHECK(strstr(err, g->message) != NULL, "line %d '%s': message '%s' lacks '%s'",
                  g->line, g->name, err, g->message);
        }
    }
    /* Unprivileged at paranoid >= 2: perfmark asks for user space only. */
    struct pm_event ev;
    char err[PM_NOTE_LEN];
    CHECK(pm_event_encode("task-clock", 1, &ev, err, sizeof err) == 0 &&
              ev.attr.exclude_kernel == 1 && ev.attr.exclude_user == 0,
          "user_only did not give exclude_kernel");
    sw_table_is_libpfm();
    return TEST_DONE("test_encoding");
}
