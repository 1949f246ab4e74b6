/* pm_place against hwloc itself: for every CPU, the core (hwloc's logical
 * index), package and NUMA node that placement from sysfs gives must be
 * hwloc's, on this machine and on synthetic sysfs trees that hwloc reads
 * through HWLOC_FSROOT: packages numbered alternately, dies and clusters
 * that interleave, offline CPUs and a cgroup cpuset, NUMA nodes inside a
 * package, NUMA nodes that hwloc groups by distance, the old file names
 * without a node directory. Trees this does not model (a CPU-less node,
 * HMAT initiators, a cgroup name hwloc cuts, an empty core holding a node,
 * s390 books, AMD compute units) must be declined, so that hwloc answers. */
#define _GNU_SOURCE
#include "check.h"
#include "pm_place.h"

#include <errno.h>
#include <hwloc.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A synthetic CPU: its keys per level (-1: no such file), online or not. */
struct cpu {
    int package, die, cluster, core, node, online;
};

struct machine {
    const char *name;
    int ncpus, nnodes;
    struct cpu cpu[32];
    int distance[4][4];      /* zero: no distance files */
    int old_names;           /* thread_siblings/core_siblings only */
    int no_node_dir;
    const char *cgroup_cpus; /* cgroup v2 cpuset.cpus.effective, NULL: none */
    const char *cgroup_mems;
    const char *cgroup_name; /* NULL: "/job" */
    int initiators;          /* every node an HMAT initiator of every node */
    int books;               /* s390 book_siblings */
    int amd_compute_units;   /* /proc/cpuinfo of an AMD family 0x15 */
    int declined;            /* pm_place must say hwloc answers */
    int expect_core[32];     /* hwloc's logical core index, -2: not checked */
};

static void put(const char *root, const char *path, const char *fmt, ...)
{
    char full[1024];
    snprintf(full, sizeof full, "%s%s", root, path);
    for (char *s = strchr(full + 1, '/'); s; s = strchr(s + 1, '/')) {
        *s = '\0';
        mkdir(full, 0755);
        *s = '/';
    }
    FILE *f = fopen(full, "w");
    if (!f) {
        fprintf(stderr, "cannot write %s: %s\n", full, strerror(errno));
        exit(2);
    }
    va_list ap;
    va_start(ap, fmt);
    vfprintf(f, fmt, ap);
    va_end(ap);
    fclose(f);
}

/* The kernel's mask of the online CPUs whose `level` key equals cpu c's. */
static void mask(const struct machine *m, int c, int level, char *out)
{
    unsigned v = 0;
    for (int d = 0; d < m->ncpus; d++) {
        const int *kc = &m->cpu[c].package, *kd = &m->cpu[d].package;
        if (m->cpu[d].online && kd[level] == kc[level])
            v |= 1u << d;
    }
    sprintf(out, "%08x\n", v);
}

static void build(const struct machine *m, const char *root)
{
    char online[128] = "", list[64], buf[32];
    size_t n = 0;
    for (int c = 0; c < m->ncpus; c++)
        if (m->cpu[c].online)
            n += (size_t)snprintf(online + n, sizeof online - n, "%s%d", n ? "," : "", c);
    put(root, "/sys/devices/system/cpu/online", "%s\n", online);
    put(root, "/sys/devices/system/cpu/possible", "0-%d\n", m->ncpus - 1);
    for (int c = 0; c < m->ncpus; c++) {
        char dir[128];
        const struct cpu *p = &m->cpu[c];
        if (!p->online) {
            snprintf(dir, sizeof dir, "/sys/devices/system/cpu/cpu%d/online", c);
            put(root, dir, "0\n");
            continue;
        }
        static const char *const names[2][4] = {
            {"package_cpus", "die_cpus", "cluster_cpus", "core_cpus"},
            {"core_siblings", NULL, NULL, "thread_siblings"}};
        static const char *const ids[4] = {"physical_package_id", "die_id", "cluster_id", "core_id"};
        const int *keys = &p->package;
        for (int level = 0; level < 4; level++) {
            const char *name = names[m->old_names][level];
            if (!name || keys[level] < 0)
                continue;
            mask(m, c, level, buf);
            snprintf(dir, sizeof dir, "/sys/devices/system/cpu/cpu%d/topology/%s", c, name);
            put(root, dir, "%s", buf);
            snprintf(dir, sizeof dir, "/sys/devices/system/cpu/cpu%d/topology/%s", c, ids[level]);
            put(root, dir, "%d\n", keys[level]);
        }
        if (m->books) {
            snprintf(dir, sizeof dir, "/sys/devices/system/cpu/cpu%d/topology/book_siblings", c);
            put(root, dir, "%08x\n", (1u << m->ncpus) - 1);
        }
    }
    if (!m->no_node_dir) {
        n = 0;
        for (int k = 0; k < m->nnodes; k++)
            n += (size_t)snprintf(list + n, sizeof list - n, "%s%d", k ? "," : "", k);
        put(root, "/sys/devices/system/node/online", "%s\n", list);
        for (int k = 0; k < m->nnodes; k++) {
            char dir[128], dist[64] = "";
            unsigned v = 0;
            for (int c = 0; c < m->ncpus; c++)
                if (m->cpu[c].online && m->cpu[c].node == k)
                    v |= 1u << c;
            snprintf(dir, sizeof dir, "/sys/devices/system/node/node%d/cpumap", k);
            put(root, dir, "%08x\n", v);
            snprintf(dir, sizeof dir, "/sys/devices/system/node/node%d/meminfo", k);
            put(root, dir, "Node %d MemTotal:       1048576 kB\n", k);
            for (int j = 0; m->initiators && j < m->nnodes; j++) {
                snprintf(dir, sizeof dir, "/sys/devices/system/node/node%d/access1/initiators/node%d", k, j);
                put(root, dir, "");
            }
            if (m->distance[0][0]) {
                n = 0;
                for (int j = 0; j < m->nnodes; j++)
                    n += (size_t)snprintf(dist + n, sizeof dist - n, "%s%d", j ? " " : "", m->distance[k][j]);
                snprintf(dir, sizeof dir, "/sys/devices/system/node/node%d/distance", k);
                put(root, dir, "%s\n", dist);
            }
        }
    }
    if (m->amd_compute_units)
        put(root, "/proc/cpuinfo", "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 21\n");
    if (m->cgroup_cpus) {
        put(root, "/proc/mounts", "sysfs /sys sysfs rw 0 0\ncgroup2 /sys/fs/cgroup cgroup2 rw 0 0\n");
        put(root, "/sys/fs/cgroup/cgroup.controllers", "cpu cpuset memory\n");
        put(root, "/sys/fs/cgroup/cpuset.cpus.effective", "0-%d\n", m->ncpus - 1);
        put(root, "/sys/fs/cgroup/cpuset.mems.effective", "0-%d\n", m->nnodes - 1);
        const char *name = m->cgroup_name ? m->cgroup_name : "/job";
        char path[512];
        put(root, "/proc/self/cgroup", "0::%s\n", name);
        snprintf(path, sizeof path, "/sys/fs/cgroup%s/cpuset.cpus.effective", name);
        put(root, path, "%s\n", m->cgroup_cpus);
        snprintf(path, sizeof path, "/sys/fs/cgroup%s/cpuset.mems.effective", name);
        put(root, path, "%s\n", m->cgroup_mems);
    }
}

/* hwloc's answer, as pm_pin.c asks it (same filters). */
static hwloc_topology_t hwloc_load(void)
{
    hwloc_topology_t topo;
    if (hwloc_topology_init(&topo) != 0)
        return NULL;
    hwloc_topology_set_io_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_NONE);
    hwloc_topology_set_cache_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_NONE);
    hwloc_topology_set_icache_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_NONE);
    if (hwloc_topology_load(topo) != 0) {
        hwloc_topology_destroy(topo);
        return NULL;
    }
    return topo;
}

static struct pm_place hwloc_place(hwloc_topology_t topo, int cpu)
{
    struct pm_place p = {-1, -1, -1};
    hwloc_obj_t pu = hwloc_get_pu_obj_by_os_index(topo, (unsigned)cpu);
    if (pu) {
        hwloc_obj_t core = hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_CORE, pu);
        hwloc_obj_t pkg = hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_PACKAGE, pu);
        p.core = core ? (int32_t)core->logical_index : -1;
        p.package = pkg ? (int32_t)pkg->os_index : -1;
        p.numa = pu->nodeset ? (int32_t)hwloc_bitmap_first(pu->nodeset) : -1;
    }
    return p;
}

/* Every CPU up to `ncpus` (and a few past it) the same both ways. */
static int compare(const char *name, const struct pm_place_map *map, hwloc_topology_t topo, int ncpus)
{
    int same = 0;
    for (int c = 0; c < ncpus + 4; c++) {
        struct pm_place ours, theirs = hwloc_place(topo, c);
        pm_place_map_get(map, c, &ours);
        CHECK(ours.core == theirs.core && ours.package == theirs.package && ours.numa == theirs.numa,
              "%s: CPU %d: sysfs core %d package %d numa %d, hwloc core %d package %d numa %d", name,
              c, ours.core, ours.package, ours.numa, theirs.core, theirs.package, theirs.numa);
        same += ours.core == theirs.core && ours.package == theirs.package && ours.numa == theirs.numa;
    }
    return same;
}

#define ALL(...) {__VA_ARGS__}

static void fill(struct machine *m, int ncpus, struct cpu (*shape)(int c))
{
    m->ncpus = ncpus;
    for (int c = 0; c < ncpus; c++)
        m->cpu[c] = shape(c);
}

/* 16 CPUs, 2 packages numbered alternately, SMT siblings 8 apart. */
static struct cpu alternate(int c) { return (struct cpu){c % 2, -1, -1, c % 8, c % 2, 1}; }
/* 16 CPUs, 1 package, dies 0-3,8-11 and 4-7,12-15, clusters of 2. */
static struct cpu dies(int c) { return (struct cpu){0, (c / 4) % 2, c / 2, c, 0, 1}; }
/* 12 CPUs, cores of 2 siblings, CPU 3 offline, 2 nodes of 6. */
static struct cpu offline(int c) { return (struct cpu){0, -1, -1, c / 2, c / 6, c != 3}; }
/* 8 cores, 1 package, NUMA nodes of the even and of the odd cores. */
static struct cpu snc(int c) { return (struct cpu){0, -1, -1, c, c % 2, 1}; }
/* 8 CPUs, 2 packages of 2 cores of 2 siblings, old names. */
static struct cpu old(int c) { return (struct cpu){c / 4, -1, -1, c / 2, 0, 1}; }
/* 8 cores, 4 packages of 2, a node per package. */
static struct cpu pairs(int c) { return (struct cpu){c / 2, -1, -1, c, c / 2, 1}; }
/* 8 cores, 1 package, 2 nodes of 4. */
static struct cpu halves(int c) { return (struct cpu){0, -1, -1, c, c / 4, 1}; }
/* 2 cores, 1 package, a node per core. */
static struct cpu snc_core(int c) { return (struct cpu){0, -1, -1, c, c, 1}; }
/* 8 cores, 1 package, 4 nodes: node k holds CPUs k and k + 4. */
static struct cpu grouped(int c) { return (struct cpu){0, -1, -1, c, c % 4, 1}; }

int main(void)
{
    /* This machine first: where pm_place declines, hwloc answers. */
    struct pm_place_map *here = pm_place_map_load("");
    hwloc_topology_t topo = hwloc_load();
    CHECK(topo != NULL, "hwloc cannot load this machine's topology");
    if (here && topo) {
        int n = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
        hwloc_obj_t last = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PU, (unsigned)n - 1);
        int ncpus = last ? (int)last->os_index + 1 : 0;
        int same = compare("this machine", here, topo, ncpus);
        printf("this machine: %d CPUs, the same both ways for %d places\n", n, same);
    } else {
        printf("this machine: sysfs placement declines here (hwloc answers)\n");
    }
    pm_place_map_free(here);
    if (topo)
        hwloc_topology_destroy(topo);

    static struct machine m[16];
    int nm = 0;
    m[nm] = (struct machine){.name = "packages numbered alternately", .nnodes = 2,
                             .distance = ALL({10, 21}, {21, 10}),
                             .expect_core = ALL(0, 4, 1, 5, 2, 6, 3, 7, 0, 4, 1, 5, 2, 6, 3, 7)};
    fill(&m[nm++], 16, alternate);
    m[nm] = (struct machine){.name = "dies and clusters interleaved", .nnodes = 1,
                             .distance = ALL({10}),
                             .expect_core = ALL(0, 1, 2, 3, 8, 9, 10, 11, 4, 5, 6, 7, 12, 13, 14, 15)};
    fill(&m[nm++], 16, dies);
    m[nm] = (struct machine){.name = "offline CPU, cgroup cpuset", .nnodes = 2,
                             .distance = ALL({10, 21}, {21, 10}), .cgroup_cpus = "0-1,4-5,7-11",
                             .cgroup_mems = "1",
                             .expect_core = ALL(0, 0, -1, -1, 1, 1, -1, 2, 3, 3, 4, 4)};
    fill(&m[nm++], 12, offline);
    m[nm] = (struct machine){.name = "NUMA nodes of alternate cores", .nnodes = 2,
                             .distance = ALL({10, 11}, {11, 10}),
                             .expect_core = ALL(0, 4, 1, 5, 2, 6, 3, 7)};
    fill(&m[nm++], 8, snc);
    m[nm] = (struct machine){.name = "old names, no node directory", .old_names = 1,
                             .no_node_dir = 1, .expect_core = ALL(0, 0, 1, 1, 2, 2, 3, 3)};
    fill(&m[nm++], 8, old);
    m[nm] = (struct machine){.name = "NUMA nodes grouped by distance, alternately", .nnodes = 4,
                             .distance = ALL({10, 20, 12, 20}, {20, 10, 20, 12},
                                             {12, 20, 10, 20}, {20, 12, 20, 10}),
                             .expect_core = ALL(0, 4, 2, 6, 1, 5, 3, 7)};
    fill(&m[nm++], 8, grouped);
    /* hwloc joins nodes through the least distance with a scan that is not
     * a full closure: here it groups nodes 0, 1 and 3 (packages 0, 1, 3)
     * and leaves node 2 out; a closure would join all four, no group. */
    m[nm] = (struct machine){.name = "NUMA groups of hwloc's scan", .nnodes = 4,
                             .distance = ALL({10, 30, 30, 20}, {30, 10, 20, 20},
                                             {30, 20, 10, 30}, {20, 20, 30, 10}),
                             .expect_core = ALL(0, 1, 2, 3, 6, 7, 4, 5)};
    fill(&m[nm++], 8, pairs);
    m[nm] = (struct machine){.name = "HMAT initiators across nodes", .nnodes = 2, .initiators = 1,
                             .declined = 1, .distance = ALL({10, 12}, {12, 10})};
    fill(&m[nm++], 8, halves);
    m[nm] = (struct machine){.name = "a cgroup name longer than hwloc reads", .nnodes = 1,
                             .declined = 1, .distance = ALL({10}), .cgroup_cpus = "2-3",
                             .cgroup_mems = "0",
                             .cgroup_name = "/kubepods.slice/kubepods-burstable.slice/"
                                            "kubepods-burstable-pod0123456789abcdef0123456789abcdef.slice/"
                                            "cri-containerd-0123456789abcdef0123456789abcdef0123456789abcdef"
                                            "0123456789abcdef0123456789abcdef0123456789abcdef0123456789.scope"};
    fill(&m[nm++], 8, halves);
    m[nm] = (struct machine){.name = "a core outside the cpuset holding a node", .nnodes = 2,
                             .declined = 1, .distance = ALL({10, 21}, {21, 10}), .cgroup_cpus = "1",
                             .cgroup_mems = "0-1"};
    fill(&m[nm++], 2, snc_core);
    m[nm] = (struct machine){.name = "a CPU-less node", .nnodes = 3, .declined = 1,
                             .distance = ALL({10, 21, 21}, {21, 10, 21}, {21, 21, 10})};
    fill(&m[nm++], 16, alternate);
    m[nm] = (struct machine){.name = "s390 books", .nnodes = 1, .books = 1, .declined = 1,
                             .distance = ALL({10})};
    fill(&m[nm++], 8, old);
    m[nm] = (struct machine){.name = "AMD compute units", .nnodes = 1, .amd_compute_units = 1,
                             .declined = 1, .distance = ALL({10})};
    fill(&m[nm++], 8, old);

    char tmpl[] = "/tmp/pm_place_XXXXXX";
    char *base = mkdtemp(tmpl);
    if (!base) {
        perror("mkdtemp");
        return 2;
    }
    for (int i = 0; i < nm; i++) {
        char root[256];
        snprintf(root, sizeof root, "%s/%d", base, i);
        build(&m[i], root);
        struct pm_place_map *map = pm_place_map_load(root);
        if (m[i].declined) {
            CHECK(map == NULL, "%s: sysfs placement should leave this machine to hwloc", m[i].name);
            printf("%s: declined, hwloc answers\n", m[i].name);
            pm_place_map_free(map);
            continue;
        }
        CHECK(map != NULL, "%s: sysfs placement declined", m[i].name);
        setenv("HWLOC_FSROOT", root, 1);
        topo = hwloc_load();
        unsetenv("HWLOC_FSROOT");
        CHECK(topo != NULL, "%s: hwloc cannot load the tree", m[i].name);
        if (!map || !topo)
            continue;
        int online = 0;
        for (int c = 0; c < m[i].ncpus; c++)
            online += m[i].cpu[c].online;
        CHECK(hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU) >= online - 4,
              "%s: hwloc did not read the synthetic tree", m[i].name);
        int same = compare(m[i].name, map, topo, m[i].ncpus);
        for (int c = 0; c < m[i].ncpus; c++) {
            struct pm_place p;
            pm_place_map_get(map, c, &p);
            CHECK(p.core == m[i].expect_core[c], "%s: CPU %d: core %d, expected %d", m[i].name, c,
                  p.core, m[i].expect_core[c]);
        }
        printf("%s: %d CPUs, the same both ways for %d places\n", m[i].name, m[i].ncpus, same);
        hwloc_topology_destroy(topo);
        pm_place_map_free(map);
    }
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", base);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", base);
    return TEST_DONE("unit_place");
}
