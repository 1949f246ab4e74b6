/* Which CPU this is: CPUID on x86, the MIDR on Arm, or PERFMARK_TEST_CPU. */
#include "pm_cpu_id.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

static struct pm_cpu_id pm_id;
static char pm_override_error[256];
static pthread_once_t pm_id_once = PTHREAD_ONCE_INIT;

void pm_cpu_id_from_signature(uint32_t eax, struct pm_cpu_id *out)
{
    unsigned base_family = (eax >> 8) & 0xf, base_model = (eax >> 4) & 0xf;
    out->stepping = eax & 0xf;
    out->family = base_family == 0xf ? base_family + ((eax >> 20) & 0xff) : base_family;
    out->model = base_family == 0x6 || base_family == 0xf
                     ? base_model | ((eax >> 16) & 0xf) << 4
                     : base_model;
}

void pm_cpu_id_from_midr(uint64_t midr, struct pm_cpu_id *out)
{
    out->vendor = PM_CPU_ARM;
    out->family = (unsigned)(midr >> 24) & 0xff; /* implementer */
    out->model = (unsigned)(midr >> 4) & 0xfff;  /* part number */
    out->stepping = 0;
}

void pm_cpu_id_describe(struct pm_cpu_id *id)
{
    static const char *const vendor[] = {"unknown CPU", "Intel", "AMD", "Arm"};
    if (id->vendor == PM_CPU_ARM)
        snprintf(id->text, sizeof id->text, "Arm implementer 0x%02x part 0x%03x", id->family,
                 id->model);
    else if (id->vendor == PM_CPU_OTHER)
        snprintf(id->text, sizeof id->text, "unknown CPU");
    else
        snprintf(id->text, sizeof id->text, "%s family 0x%x model 0x%02x stepping %u",
                 vendor[id->vendor], id->family, id->model, id->stepping);
}

static int pm_parse_number(const char *s, unsigned long max, unsigned long *out)
{
    if (!s || !*s)
        return -1;
    char *end = NULL;
    errno = 0;
    unsigned long v = strtoul(s, &end, 0);
    if (errno || *end || v > max || *s == '-')
        return -1;
    *out = v;
    return 0;
}

int pm_cpu_id_parse(const char *spec, struct pm_cpu_id *out, char *err, size_t errlen)
{
    char buf[128];
    memset(out, 0, sizeof *out);
    if (snprintf(buf, sizeof buf, "%s", spec) >= (int)sizeof buf) {
        snprintf(err, errlen, "PERFMARK_TEST_CPU is too long");
        return -1;
    }
    char *field[5] = {NULL};
    int n = 0;
    char *save = NULL;
    for (char *tok = strtok_r(buf, ":", &save); tok && n < 5; tok = strtok_r(NULL, ":", &save))
        field[n++] = tok;
    unsigned long v[3] = {0, 0, 0};
    int ok = 0;
    if (n >= 1 && strcmp(field[0], "arm") == 0) {
        if (n == 2 && pm_parse_number(field[1], 0xffffffffUL, &v[0]) == 0) {
            pm_cpu_id_from_midr(v[0], out);
            ok = 1;
        } else if (n == 3 && pm_parse_number(field[1], 0xff, &v[0]) == 0 &&
                   pm_parse_number(field[2], 0xfff, &v[1]) == 0) {
            out->vendor = PM_CPU_ARM;
            out->family = (unsigned)v[0];
            out->model = (unsigned)v[1];
            ok = 1;
        }
    } else if (n >= 3 && n <= 4 && (strcmp(field[0], "intel") == 0 || strcmp(field[0], "amd") == 0)) {
        ok = pm_parse_number(field[1], 0x1ff, &v[0]) == 0 &&
             pm_parse_number(field[2], 0xff, &v[1]) == 0 &&
             (n == 3 || pm_parse_number(field[3], 0xf, &v[2]) == 0);
        out->vendor = field[0][0] == 'i' ? PM_CPU_INTEL : PM_CPU_AMD;
        out->family = (unsigned)v[0];
        out->model = (unsigned)v[1];
        out->stepping = (unsigned)v[2];
    }
    if (!ok) {
        snprintf(err, errlen,
                 "PERFMARK_TEST_CPU='%.60s' is not intel:FAMILY:MODEL[:STEPPING], "
                 "amd:FAMILY:MODEL, arm:MIDR or arm:IMPLEMENTER:PART",
                 spec);
        memset(out, 0, sizeof *out);
        return -1;
    }
    pm_cpu_id_describe(out);
    return 0;
}

#if defined(__aarch64__)
static int pm_read_midr(uint64_t *midr)
{
    FILE *f = fopen("/sys/devices/system/cpu/cpu0/regs/identification/midr_el1", "r");
    if (f) {
        unsigned long long v = 0;
        int ok = fscanf(f, "%llx", &v) == 1;
        fclose(f);
        if (ok) {
            *midr = v;
            return 0;
        }
    }
    /* /proc/cpuinfo gives the fields one per line */
    f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return -1;
    char line[256];
    unsigned impl = 0, part = 0;
    int have = 0;
    while (have != 3 && fgets(line, sizeof line, f)) {
        if (sscanf(line, "CPU implementer : %x", &impl) == 1)
            have |= 1;
        else if (sscanf(line, "CPU part : %x", &part) == 1)
            have |= 2;
    }
    fclose(f);
    if (have != 3)
        return -1;
    *midr = (uint64_t)impl << 24 | (uint64_t)part << 4;
    return 0;
}
#endif

static void pm_detect(struct pm_cpu_id *id)
{
    memset(id, 0, sizeof *id);
#if defined(__x86_64__) || defined(__i386__)
    unsigned a, b, c, d;
    if (__get_cpuid(0, &a, &b, &c, &d)) {
        char vendor[13];
        memcpy(vendor, &b, 4);
        memcpy(vendor + 4, &d, 4);
        memcpy(vendor + 8, &c, 4);
        vendor[12] = '\0';
        id->vendor = strcmp(vendor, "GenuineIntel") == 0   ? PM_CPU_INTEL
                     : strcmp(vendor, "AuthenticAMD") == 0 ? PM_CPU_AMD
                                                           : PM_CPU_OTHER;
        if (__get_cpuid(1, &a, &b, &c, &d))
            pm_cpu_id_from_signature(a, id);
    }
#elif defined(__aarch64__)
    uint64_t midr;
    if (pm_read_midr(&midr) == 0)
        pm_cpu_id_from_midr(midr, id);
#endif
    pm_cpu_id_describe(id);
}

static void pm_id_init(void)
{
    const char *spec = getenv("PERFMARK_TEST_CPU");
    if (spec && *spec) {
        if (pm_cpu_id_parse(spec, &pm_id, pm_override_error, sizeof pm_override_error) == 0) {
            pm_id.from_override = 1;
            return;
        }
        size_t len = strlen(pm_override_error);
        snprintf(pm_override_error + len, sizeof pm_override_error - len,
                 "; perfmark uses this machine's CPU");
    }
    pm_detect(&pm_id);
}

const struct pm_cpu_id *pm_cpu_id(void)
{
    pthread_once(&pm_id_once, pm_id_init);
    return &pm_id;
}

const char *pm_cpu_id_override_error(void)
{
    pthread_once(&pm_id_once, pm_id_init);
    return pm_override_error;
}

const struct pm_cpu_match *pm_cpu_match_find(const struct pm_cpu_id *id)
{
    for (const struct pm_cpu_match *m = pm_cpu_matches; m->cpu_name; m++)
        if (m->vendor == id->vendor && m->family == id->family && id->model >= m->model_lo &&
            id->model <= m->model_hi && id->stepping >= m->stepping_lo &&
            id->stepping <= m->stepping_hi)
            return m;
    return NULL;
}
