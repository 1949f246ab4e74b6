/* CPU identity: CPUID signatures and MIDRs decoded as the vendors document
 * them, PERFMARK_TEST_CPU parsed, and every known CPU mapped to the model
 * row that measures it. Signatures are real parts' CPUID leaf 1 EAX values
 * (Intel SDM vol. 2A, CPUID; AMD's PPRs: family = base + extended when the
 * base is 0xf, model = extended << 4 | base for families 6 and 0xf); MIDRs
 * are the parts' MIDR_EL1 (Arm TRMs: implementer [31:24], part [15:4]). */
#include "check.h"
#include "pm_cpu_id.h"
#include "pm_cpu_models.h"

#include <string.h>

struct signature {
    uint32_t eax;
    unsigned family, model, stepping;
    enum pm_cpu_vendor vendor;
    const char *row; /* NULL: no row measures it */
};

static const struct signature signatures[] = {
    {0x000806F8, 0x6, 0x8f, 8, PM_CPU_INTEL, "spr"},                /* Sapphire Rapids */
    {0x000606A6, 0x6, 0x6a, 6, PM_CPU_INTEL, "icx"},                /* Ice Lake-SP */
    {0x000A0671, 0x6, 0xa7, 1, PM_CPU_INTEL, "icl"},                /* Rocket Lake */
    {0x000806C1, 0x6, 0x8c, 1, PM_CPU_INTEL, "tgl"},                /* Tiger Lake */
    {0x00050654, 0x6, 0x55, 4, PM_CPU_INTEL, "skx"},                /* Skylake-SP */
    {0x00050657, 0x6, 0x55, 7, PM_CPU_INTEL, "clx"},                /* Cascade Lake */
    {0x000906EA, 0x6, 0x9e, 10, PM_CPU_INTEL, "skl"},               /* Coffee Lake */
    {0x000C06F2, 0x6, 0xcf, 2, PM_CPU_INTEL, "emr"},                /* Emerald Rapids */
    {0x000A06F3, 0x6, 0xaf, 3, PM_CPU_INTEL, "srf"},                /* Sierra Forest */
    {0x00830F10, 0x17, 0x31, 0, PM_CPU_AMD, "amd64_fam17h_zen2"},   /* EPYC Rome */
    {0x00A00F11, 0x19, 0x01, 1, PM_CPU_AMD, "amd64_fam19h_zen3"},   /* EPYC Milan */
    {0x00A20F10, 0x19, 0x21, 0, PM_CPU_AMD, "amd64_fam19h_zen3"},   /* Ryzen 5000 */
    {0x00A10F11, 0x19, 0x11, 1, PM_CPU_AMD, "amd64_fam19h_zen4"},   /* EPYC Genoa */
    {0x00A60F12, 0x19, 0x61, 2, PM_CPU_AMD, "amd64_fam19h_zen4"},   /* Ryzen 7000 */
    {0x00B00F21, 0x1a, 0x02, 1, PM_CPU_AMD, "amd64_fam1ah_zen5"},   /* EPYC Turin */
    {0x00800F12, 0x17, 0x01, 2, PM_CPU_AMD, NULL},                  /* EPYC Naples (Zen 1) */
    {0x00000F29, 0xf, 0x02, 9, PM_CPU_INTEL, NULL},                 /* Pentium 4 */
    {0x00010543, 0x5, 0x04, 3, PM_CPU_INTEL, NULL},                 /* family 5: no extended model */
};

struct midr {
    uint64_t midr;
    unsigned implementer, part;
    const char *row;
};

static const struct midr midrs[] = {
    {0x413FD0C1, 0x41, 0xd0c, "arm_n1"},   /* Neoverse N1 r3p1 (Graviton 2) */
    {0x411FD401, 0x41, 0xd40, "arm_v1"},   /* Neoverse V1 r1p1 (Graviton 3) */
    {0x410FD4F0, 0x41, 0xd4f, "arm_v2"},   /* Neoverse V2 r0p0 (Grace, Graviton 4) */
    {0x461F0010, 0x46, 0x001, "arm_a64fx"},/* A64FX */
    {0x410FD034, 0x41, 0xd03, NULL},       /* Cortex-A53 */
};

static const char *row_of(const struct pm_cpu_id *id)
{
    const struct pm_cpu_match *m = pm_cpu_match_find(id);
    return m ? m->row : NULL;
}

static int same(const char *a, const char *b) { return a == b || (a && b && !strcmp(a, b)); }

int main(void)
{
    for (size_t i = 0; i < sizeof signatures / sizeof *signatures; i++) {
        const struct signature *s = &signatures[i];
        struct pm_cpu_id id = {.vendor = s->vendor};
        pm_cpu_id_from_signature(s->eax, &id);
        CHECK(id.family == s->family && id.model == s->model && id.stepping == s->stepping,
              "0x%08x: family 0x%x model 0x%x stepping %u", s->eax, id.family, id.model,
              id.stepping);
        CHECK(same(row_of(&id), s->row), "0x%08x: row %s, want %s", s->eax,
              row_of(&id) ? row_of(&id) : "none", s->row ? s->row : "none");
    }
    for (size_t i = 0; i < sizeof midrs / sizeof *midrs; i++) {
        struct pm_cpu_id id;
        memset(&id, 0, sizeof id);
        pm_cpu_id_from_midr(midrs[i].midr, &id);
        CHECK(id.vendor == PM_CPU_ARM && id.family == midrs[i].implementer &&
                  id.model == midrs[i].part,
              "MIDR 0x%llx: implementer 0x%x part 0x%x", (unsigned long long)midrs[i].midr,
              id.family, id.model);
        CHECK(same(row_of(&id), midrs[i].row), "MIDR 0x%llx: row %s",
              (unsigned long long)midrs[i].midr, row_of(&id) ? row_of(&id) : "none");
    }

    /* PERFMARK_TEST_CPU: what parses, and the same identity as CPUID would give */
    static const struct {
        const char *spec;
        enum pm_cpu_vendor vendor;
        unsigned family, model, stepping;
        const char *text;
    } good[] = {
        {"intel:6:0x8f", PM_CPU_INTEL, 6, 0x8f, 0, "Intel family 0x6 model 0x8f stepping 0"},
        {"intel:6:85:7", PM_CPU_INTEL, 6, 0x55, 7, "Intel family 0x6 model 0x55 stepping 7"},
        {"amd:0x1a:0x02", PM_CPU_AMD, 0x1a, 2, 0, "AMD family 0x1a model 0x02 stepping 0"},
        {"arm:0x410fd4f0", PM_CPU_ARM, 0x41, 0xd4f, 0, "Arm implementer 0x41 part 0xd4f"},
        {"arm:0x46:0x001", PM_CPU_ARM, 0x46, 0x001, 0, "Arm implementer 0x46 part 0x001"},
    };
    for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
        struct pm_cpu_id id;
        char err[256] = "";
        CHECK(pm_cpu_id_parse(good[i].spec, &id, err, sizeof err) == 0, "%s: %s", good[i].spec,
              err);
        CHECK(id.vendor == good[i].vendor && id.family == good[i].family &&
                  id.model == good[i].model && id.stepping == good[i].stepping,
              "%s parsed as %d 0x%x 0x%x %u", good[i].spec, id.vendor, id.family, id.model,
              id.stepping);
        CHECK(strcmp(id.text, good[i].text) == 0, "%s: text %s", good[i].spec, id.text);
    }
    static const char *const bad[] = {"", "intel", "intel:6", "intel:6:0x8f:1:2", "amd:0x19:0x100",
                                      "intel:6:0x8f:16", "sparc:1:2", "arm:", "arm:0x41:0xd4f:1",
                                      "arm:0x41:0x1000", "intel:-1:2", "intel:x:1",
                                      "amd:0x19:0x11junk", "Intel:6:0x8f"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        struct pm_cpu_id id;
        char err[256] = "";
        int rc = pm_cpu_id_parse(bad[i], &id, err, sizeof err);
        CHECK(rc == -1 && strstr(err, "PERFMARK_TEST_CPU") && id.vendor == PM_CPU_OTHER,
              "'%s' accepted (rc %d, err '%s')", bad[i], rc, err);
    }

    /* The two tables agree: every row a match names exists, and every model
     * row is reached from some CPU identity. */
    for (const struct pm_cpu_match *m = pm_cpu_matches; m->cpu_name; m++)
        CHECK(!m->row || pm_cpu_model_find(m->row),
              "%s names row %s, which the model table does not have", m->cpu_name, m->row);
    for (const struct pm_cpu_model *r = pm_cpu_models; r->name; r++) {
        int reached = 0;
        for (const struct pm_cpu_match *m = pm_cpu_matches; m->cpu_name; m++)
            reached |= same(m->row, r->name);
        CHECK(reached, "model row %s is not reached from any CPU identity", r->name);
    }
    return TEST_DONE("cpu_id");
}
