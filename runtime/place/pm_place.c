#define _GNU_SOURCE
#include "pm_place.h"

#include "pm_cpu_id.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern char **environ;

/* The object kinds hwloc's Linux backend builds from sysfs (caches and I/O
 * are filtered out of perfmark's topology, so they are not read). */
enum pm_kind { PM_CORE, PM_CLUSTER, PM_DIE, PM_PACKAGE, PM_NODE, PM_GROUP };
/* Groups of NUMA nodes by distance, one kind per level of grouping. */
#define PM_GROUP_LEVELS 4
#define PM_KINDS (PM_GROUP + PM_GROUP_LEVELS)

struct pm_obj {
    uint64_t *bits;   /* its CPUs, among the present ones */
    int first, weight;
    int id;           /* package: physical_package_id; node: its number */
};

struct pm_loader {
    const char *root;
    int nbits, nwords;
    uint64_t *present;          /* online CPUs with a topology directory */
    struct pm_obj *objs;
    int nobjs, cap;
    int *of[PM_KINDS];          /* per CPU: index in objs, or -1 */
    char *buf;                  /* one sysfs file */
    size_t buflen;
    int old_names;              /* thread_siblings/core_siblings (before Linux 5.x) */
};

struct pm_place_map {
    int nbits;
    struct pm_place *cpu;
};

static int pm_bit(const uint64_t *w, int i) { return (int)(w[i / 64] >> (i % 64)) & 1; }
static void pm_set(uint64_t *w, int i) { w[i / 64] |= (uint64_t)1 << (i % 64); }

static int pm_first(const uint64_t *w, int nwords)
{
    for (int k = 0; k < nwords; k++)
        if (w[k])
            return k * 64 + __builtin_ctzll(w[k]);
    return -1;
}

static int pm_weight(const uint64_t *w, int nwords)
{
    int n = 0;
    for (int k = 0; k < nwords; k++)
        n += __builtin_popcountll(w[k]);
    return n;
}

static int pm_subset(const uint64_t *a, const uint64_t *b, int nwords)
{
    for (int k = 0; k < nwords; k++)
        if (a[k] & ~b[k])
            return 0;
    return 1;
}

/* `path` under the root into l->buf; its length, or -1. */
static int pm_read(struct pm_loader *l, const char *path)
{
    char full[PATH_MAX];
    if (snprintf(full, sizeof full, "%s%s", l->root, path) >= (int)sizeof full)
        return -1;
    int fd = open(full, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    size_t used = 0;
    for (;;) {  /* procfs may return less than asked before the end */
        ssize_t n = read(fd, l->buf + used, l->buflen - 1 - used);
        if (n < 0) {
            close(fd);
            return -1;
        }
        used += (size_t)n;
        if (n == 0)
            break;
        if (used == l->buflen - 1) {  /* longer than any file read here should be */
            close(fd);
            return -1;
        }
    }
    close(fd);
    l->buf[used] = '\0';
    return (int)used;
}

static int pm_exists(const struct pm_loader *l, const char *path)
{
    char full[PATH_MAX];
    return snprintf(full, sizeof full, "%s%s", l->root, path) < (int)sizeof full &&
           access(full, F_OK) == 0;
}

/* A kernel cpumask: 32-bit hex words, most significant first, commas
 * between. Bits past nbits are dropped. */
static void pm_parse_mask(const char *s, uint64_t *w, int nbits)
{
    int words = 1;
    for (const char *p = s; *p && *p != '\n'; p++)
        words += *p == ',';
    for (int k = words - 1; k >= 0 && s; k--) {
        unsigned long v = strtoul(s, NULL, 16);
        for (int b = 0; b < 32; b++)
            if ((v >> b & 1) && k * 32 + b < nbits)
                pm_set(w, k * 32 + b);
        s = strchr(s, ',');
        if (s)
            s++;
    }
}

/* A kernel cpulist ("0-3,8"); 0, or -1 if it is not one. */
static int pm_parse_list(const char *s, uint64_t *w, int nbits)
{
    while (*s && *s != '\n') {
        char *end;
        long a = strtol(s, &end, 10), b = a;
        if (end == s || a < 0)
            return -1;
        s = end;
        if (*s == '-') {
            b = strtol(s + 1, &end, 10);
            if (end == s + 1 || b < a)
                return -1;
            s = end;
        }
        for (long c = a; c <= b && c < nbits; c++)
            pm_set(w, (int)c);
        if (*s == ',')
            s++;
        else if (*s && *s != '\n')
            return -1;
    }
    return 0;
}

/* A set read from `path`: a mask, restricted to the present CPUs, or a
 * list (`list`) as it stands. Freshly allocated, NULL if unreadable. */
static uint64_t *pm_read_set(struct pm_loader *l, const char *path, int list)
{
    if (pm_read(l, path) < 0)
        return NULL;
    uint64_t *w = calloc((size_t)l->nwords, sizeof *w);
    if (!w)
        return NULL;
    if (list) {
        if (pm_parse_list(l->buf, w, l->nbits) != 0) {
            free(w);
            return NULL;
        }
        return w;
    }
    pm_parse_mask(l->buf, w, l->nbits);
    for (int k = 0; k < l->nwords; k++)
        w[k] &= l->present[k];
    return w;
}

/* Keep `bits` as an object of `kind`; -1 if a CPU of it already has one
 * (sets of one kind that overlap: hwloc would not nest them either). */
static int pm_add(struct pm_loader *l, enum pm_kind kind, uint64_t *bits, int id)
{
    if (l->nobjs == l->cap) {
        int cap = l->cap ? 2 * l->cap : 64;
        struct pm_obj *more = realloc(l->objs, (size_t)cap * sizeof *more);
        if (!more) {
            free(bits);
            return -1;
        }
        l->objs = more;
        l->cap = cap;
    }
    int index = l->nobjs++;
    l->objs[index] = (struct pm_obj){bits, pm_first(bits, l->nwords), pm_weight(bits, l->nwords), id};
    for (int c = 0; c < l->nbits; c++)
        if (pm_bit(bits, c)) {
            if (l->of[kind][c] >= 0)
                return -1;
            l->of[kind][c] = index;
        }
    return 0;
}

static int pm_read_int(struct pm_loader *l, const char *path)
{
    return pm_read(l, path) > 0 ? atoi(l->buf) : -1;
}

/* The cluster or die set of CPU `i` (`name`), kept as hwloc keeps it: not
 * a single CPU, and `i` its first CPU (else *notfirst, and NULL). */
static uint64_t *pm_read_level(struct pm_loader *l, int i, const char *name, int *notfirst)
{
    char path[128];
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/topology/%s", i, name);
    uint64_t *set = pm_read_set(l, path, 0);
    if (set && pm_weight(set, l->nwords) > 1 && pm_first(set, l->nwords) == i)
        return set;
    if (set && pm_weight(set, l->nwords) != 1)
        *notfirst = 1;
    free(set);
    return NULL;
}

/* The topology files of CPU `i`, read as hwloc reads them: the core for
 * every CPU, the cluster, die and package only from the first CPU of the
 * level below; single-CPU clusters and dies are no level. */
static int pm_read_cpu(struct pm_loader *l, int i)
{
    char path[128];
    const char *dir = "/sys/devices/system/cpu/cpu";
    int notfirst_core = 0, notfirst_cluster = 0, notfirst_die = 0;
    uint64_t *cluster = NULL, *die = NULL;

    snprintf(path, sizeof path, "%s%d/topology/%s", dir, i, l->old_names ? "thread_siblings" : "core_cpus");
    uint64_t *core = pm_read_set(l, path, 0);
    if (core) {
        if (pm_first(core, l->nwords) != i) {
            notfirst_core = notfirst_cluster = notfirst_die = 1;
            free(core);
        } else if (pm_add(l, PM_CORE, core, -1) != 0) {
            return -1;
        }
    }
    if (!notfirst_core) {
        cluster = pm_read_level(l, i, "cluster_cpus", &notfirst_cluster);
        notfirst_die |= notfirst_cluster;
    }
    if (!notfirst_cluster)
        die = pm_read_level(l, i, "die_cpus", &notfirst_die);
    if (!notfirst_die) {
        snprintf(path, sizeof path, "%s%d/topology/%s", dir, i, l->old_names ? "core_siblings" : "package_cpus");
        uint64_t *package = pm_read_set(l, path, 0);
        if (package && pm_first(package, l->nwords) == i) {
            snprintf(path, sizeof path, "%s%d/topology/physical_package_id", dir, i);
            if (pm_add(l, PM_PACKAGE, package, pm_read_int(l, path)) != 0)
                goto fail;
        } else {
            free(package);
        }
    }
    /* A cluster or die equal to another level changes no order: kept. */
    if (cluster && pm_add(l, PM_CLUSTER, cluster, -1) != 0) {
        cluster = NULL;
        goto fail;
    }
    cluster = NULL;
    if (die && pm_add(l, PM_DIE, die, -1) != 0)
        return -1;
    return 0;
fail:
    free(cluster);
    free(die);
    return -1;
}

enum pm_cgroup { PM_CG_NONE = -1, PM_CG_V2, PM_CG_V1, PM_CG_CPUSET };

/* The cgroup holding cpusets, as hwloc 2.9 finds it: the first line of
 * /proc/mounts that is cgroup2 with the cpuset controller, a cpuset
 * filesystem, or cgroup v1 with the cpuset option. Later hwloc tries the
 * standard places first: where they would give another answer, -1. */
static int pm_find_cgroup(struct pm_loader *l, char *mount, size_t len, enum pm_cgroup *kind)
{
    *kind = PM_CG_NONE;
    char full[PATH_MAX];
    snprintf(full, sizeof full, "%s/proc/mounts", l->root);
    FILE *mounts = fopen(full, "re");  /* by line: a host's list can be long */
    if (!mounts)
        return 0;
    char *line = NULL;
    size_t cap = 0;
    while (*kind == PM_CG_NONE && getline(&line, &cap, mounts) > 0) {
        char dir[256], type[64], opts[512];
        if (sscanf(line, "%*s %255s %63s %511s", dir, type, opts) != 3)
            continue;
        char opt_list[514];
        snprintf(opt_list, sizeof opt_list, ",%s,", opts);
        if (strcmp(type, "cgroup2") == 0) {
            char path[300];
            snprintf(path, sizeof path, "%s/cgroup.controllers", dir);
            if (pm_read(l, path) > 0) {
                char words[1100];
                snprintf(words, sizeof words, " %.*s ", (int)strcspn(l->buf, "\n"), l->buf);
                if (strstr(words, " cpuset "))
                    *kind = PM_CG_V2;
            }
        } else if (strcmp(type, "cpuset") == 0) {
            *kind = PM_CG_CPUSET;
        } else if (strcmp(type, "cgroup") == 0 && strstr(opt_list, ",cpuset,")) {
            *kind = strstr(opt_list, ",noprefix,") ? PM_CG_CPUSET : PM_CG_V1;
        }
        if (*kind != PM_CG_NONE)
            snprintf(mount, len, "%s", dir);
    }
    free(line);
    fclose(mounts);
    if (strchr(mount, '\\'))
        return -1;  /* an escaped character: not worth decoding */
    static const struct {
        const char *probe, *mount;
        enum pm_cgroup kind;
    } standard[] = {
        {"/sys/fs/cgroup/cpuset.cpus.effective", "/sys/fs/cgroup", PM_CG_V2},
        {"/sys/fs/cgroup/cpuset/cpuset.cpus", "/sys/fs/cgroup/cpuset", PM_CG_V1},
        {"/dev/cpuset/cpus", "/dev/cpuset", PM_CG_CPUSET},
    };
    for (int k = 0; k < 3; k++)
        if (pm_exists(l, standard[k].probe))
            return standard[k].kind == *kind && strcmp(standard[k].mount, mount) == 0 ? 0 : -1;
    return 0;
}

/* The CPUs and NUMA nodes the cgroup cpuset allows this process, as hwloc
 * reads them (everything when there is no cpuset); -1 where hwloc's
 * answer could differ. */
static int pm_read_allowed(struct pm_loader *l, uint64_t *cpus, uint64_t *mems, int nmem_bits)
{
    static const char *const files[3][2] = {
        {"cpuset.cpus.effective", "cpuset.mems.effective"}, {"cpuset.cpus", "cpuset.mems"},
        {"cpus", "mems"}};
    size_t mem_bytes = (size_t)((nmem_bits + 63) / 64) * sizeof *mems;
    memset(cpus, 0xff, (size_t)l->nwords * sizeof *cpus);
    memset(mems, 0xff, mem_bytes);
    char mount[256] = "", name[256] = "";
    enum pm_cgroup kind;
    if (pm_find_cgroup(l, mount, sizeof mount, &kind) != 0)
        return -1;
    if (kind == PM_CG_NONE)
        return 0;
    /* hwloc reads the name into 128 bytes, /proc/self/cgroup by lines of
     * 256 and the file's path into 256: it cuts longer ones, finds no file
     * and allows everything. Such names are left to hwloc. */
    if (pm_read(l, "/proc/self/cpuset") > 0) {
        size_t len = strcspn(l->buf, "\n");
        if (len >= 127)
            return -1;
        snprintf(name, sizeof name, "%.*s", (int)len, l->buf);
    } else if (pm_read(l, "/proc/self/cgroup") > 0) {
        for (char *line = l->buf; line && *line && !name[0]; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
            if (strcspn(line, "\n") >= 255)
                return -1;
            char *colon = strchr(line, ':');
            if (colon && strncmp(colon, ":cpuset:", 8) == 0)
                snprintf(name, sizeof name, "%.*s", (int)strcspn(colon + 8, "\n"), colon + 8);
            else if (colon && strncmp(colon, "::", 2) == 0)
                snprintf(name, sizeof name, "%.*s", (int)strcspn(colon + 2, "\n"), colon + 2);
        }
    }
    if (!name[0])
        return 0;
    if (strlen(mount) + strlen(name) + 1 + strlen(files[kind][0]) >= 256)
        return -1;
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s%s/%s", mount, name, files[kind][0]);
    uint64_t *set = pm_read_set(l, path, 1);
    if (set) {
        memcpy(cpus, set, (size_t)l->nwords * sizeof *cpus);
        free(set);
    }
    snprintf(path, sizeof path, "%s%s/%s", mount, name, files[kind][1]);
    if (pm_read(l, path) >= 0) {
        memset(mems, 0, mem_bytes);
        if (pm_parse_list(l->buf, mems, nmem_bits) != 0)
            memset(mems, 0xff, mem_bytes);
    }
    return 0;
}

/* hwloc's groups of NUMA nodes by distance (hwloc__groups_by_distances,
 * exact values): `n` objects (nodes, then groups) with the distance matrix
 * `v`; those joined through the smallest distance form a group, unless
 * one group would hold them all; then the same over the groups with mean
 * distances. 0, or -1 when there are more levels than modelled. */
static int pm_group_by_distance(struct pm_loader *l, int n, const int *obj, const uint64_t *v, int level)
{
    if (n <= 2)
        return 0;
    uint64_t least = UINT64_MAX;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            /* hwloc checks the matrix it read, not the means it derives */
            if (level == 0 && j > i &&
                (v[i * n + j] != v[j * n + i] || v[i * n + j] <= v[i * n + i]))
                return 0;  /* hwloc does not group from such a matrix */
            if (i != j && v[i * n + j] < least)
                least = v[i * n + j];
        }
    int *group = calloc((size_t)n, sizeof *group), groups = 0, skipped = 0, rc = 0;
    if (!group)
        return -1;
    for (int i = 0; i < n; i++) {
        if (group[i])
            continue;
        group[i] = groups + 1;
        int size = 1;
        /* Joined through `least` as hwloc's scan joins them: each pass
         * starts at the first object the previous pass added, so one
         * added below it is not scanned itself (not a full closure). */
        for (int from = i; from >= 0;) {
            int next = -1;
            for (int j = from; j < n; j++)
                for (int k = 0; group[j] == groups + 1 && k < n; k++)
                    if (!group[k] && v[j * n + k] == least) {
                        group[k] = groups + 1;
                        size++;
                        if (next < 0)
                            next = k;
                    }
            from = next;
        }
        if (size == 1) {
            group[i] = 0;
            skipped++;
        } else {
            groups++;
        }
    }
    if (groups == 0 || (groups == 1 && !skipped))
        goto out;
    if (level == PM_GROUP_LEVELS) {
        rc = -1;
        goto out;
    }
    int *objs = malloc((size_t)groups * sizeof *objs), *sizes = calloc((size_t)groups, sizeof *sizes);
    uint64_t *mean = calloc((size_t)groups * (size_t)groups, sizeof *mean);
    for (int g = 0; objs && sizes && mean && g < groups && rc == 0; g++) {
        uint64_t *bits = calloc((size_t)l->nwords, sizeof *bits);
        if (!bits) {
            rc = -1;
            break;
        }
        for (int i = 0; i < n; i++)
            if (group[i] == g + 1) {
                sizes[g]++;
                for (int k = 0; k < l->nwords; k++)
                    bits[k] |= l->objs[obj[i]].bits[k];
            }
        objs[g] = l->nobjs;
        rc = pm_add(l, PM_GROUP + level, bits, -1);
    }
    if (!objs || !sizes || !mean)
        rc = -1;
    if (rc == 0) {
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++)
                if (group[i] && group[j])
                    mean[(group[i] - 1) * groups + group[j] - 1] += v[i * n + j];
        for (int g = 0; g < groups; g++)
            for (int h = 0; h < groups; h++)
                mean[g * groups + h] /= (uint64_t)(sizes[g] * sizes[h]);
        rc = pm_group_by_distance(l, groups, objs, mean, level + 1);
    }
    free(objs);
    free(sizes);
    free(mean);
out:
    free(group);
    return rc;
}

/* Each node's row of the distance matrix into v; -1 if one is missing or
 * short (hwloc then has no distances and makes no groups). */
static int pm_read_distances(struct pm_loader *l, const int *nodes, int n, uint64_t *v)
{
    for (int i = 0; i < n; i++) {
        char path[128];
        snprintf(path, sizeof path, "/sys/devices/system/node/node%d/distance", nodes[i]);
        if (pm_read(l, path) <= 0)
            return -1;
        char *s = l->buf, *end;
        for (int j = 0; j < n; j++, s = end) {
            v[i * n + j] = strtoul(s, &end, 0);
            if (end == s)
                return -1;
        }
    }
    return 0;
}

/* 1 if node `id` has an HMAT initiator other than itself (access1, else
 * access0, as hwloc reads them): hwloc adds that node's CPUs to its set. */
static int pm_other_initiator(const struct pm_loader *l, int id)
{
    static const char *const access[] = {"access1", "access0"};
    for (int a = 0; a < 2; a++) {
        char full[PATH_MAX];
        snprintf(full, sizeof full, "%s/sys/devices/system/node/node%d/%s/initiators", l->root,
                 id, access[a]);
        DIR *d = opendir(full);
        if (!d)
            continue;
        int other = 0;
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            unsigned m;
            if (sscanf(e->d_name, "node%u", &m) == 1 && (int)m != id)
                other = 1;
        }
        closedir(d);
        return other;
    }
    return 0;
}

/* The NUMA nodes and hwloc's groups of them, as objects. 0; 1 when there
 * is no node directory (hwloc then makes one node 0); -1 where hwloc's
 * tree could differ: a node without CPUs (hwloc places it by its
 * initiators or distances), with an HMAT initiator other than itself, with
 * CPUs that are not online, unreadable or overlapping another (hwloc
 * skips it), numbered past Linux's limit. */
static int pm_read_nodes(struct pm_loader *l, int *max_node)
{
    char path[128];
    enum { PM_MAX_NODES = 1024 };  /* Linux's MAX_NUMNODES on x86 */
    int nodes[PM_MAX_NODES], n = 0;
    uint64_t set[PM_MAX_NODES / 64] = {0};
    *max_node = -1;
    if (pm_read(l, "/sys/devices/system/node/online") > 0) {
        for (const char *s = l->buf; *s; s++)  /* a list's numbers, checked in range */
            if (*s >= '0' && *s <= '9' && (s == l->buf || s[-1] < '0' || s[-1] > '9') &&
                strtol(s, NULL, 10) >= PM_MAX_NODES)
                return -1;
        if (pm_parse_list(l->buf, set, PM_MAX_NODES) != 0)
            return -1;
    } else {
        char full[PATH_MAX];
        snprintf(full, sizeof full, "%s/sys/devices/system/node", l->root);
        DIR *d = opendir(full);
        if (!d)
            return 1;
        struct dirent *e;
        int far = 0;
        while ((e = readdir(d)) != NULL) {
            char *end;
            long k = strncmp(e->d_name, "node", 4) == 0 ? strtol(e->d_name + 4, &end, 10) : -1;
            if (k >= 0 && end != e->d_name + 4 && !*end) {
                if (k < PM_MAX_NODES)
                    pm_set(set, (int)k);
                else
                    far = 1;
            }
        }
        closedir(d);
        if (far)
            return -1;
    }
    for (int k = 0; k < PM_MAX_NODES; k++)
        if (pm_bit(set, k))
            nodes[n++] = k;
    if (n == 0)
        return 1;
    int *obj = malloc((size_t)n * sizeof *obj);
    uint64_t *seen = calloc((size_t)l->nwords, sizeof *seen);
    int rc = obj && seen ? 0 : -1;
    for (int i = 0; i < n && rc == 0; i++) {
        snprintf(path, sizeof path, "/sys/devices/system/node/node%d/cpumap", nodes[i]);
        uint64_t *cpus = pm_read(l, path) > 0 ? calloc((size_t)l->nwords, sizeof *cpus) : NULL;
        if (!cpus) {
            rc = -1;
            break;
        }
        pm_parse_mask(l->buf, cpus, l->nbits);
        int outside = 0, overlap = 0;
        for (int k = 0; k < l->nwords; k++) {
            outside |= (cpus[k] & ~l->present[k]) != 0;
            overlap |= (cpus[k] & seen[k]) != 0;
            seen[k] |= cpus[k];
        }
        if (outside || overlap || pm_first(cpus, l->nwords) < 0 ||
            pm_other_initiator(l, nodes[i])) {
            free(cpus);
            rc = -1;
            break;
        }
        obj[i] = l->nobjs;
        if (pm_add(l, PM_NODE, cpus, nodes[i]) != 0)
            rc = -1;
        if (nodes[i] > *max_node)
            *max_node = nodes[i];
    }
    free(seen);
    if (rc == 0 && n > 2) {
        uint64_t *v = malloc((size_t)n * (size_t)n * sizeof *v);
        if (!v)
            rc = -1;
        else if (pm_read_distances(l, nodes, n, v) == 0)
            rc = pm_group_by_distance(l, n, obj, v, 0);
        free(v);
    }
    free(obj);
    return rc;
}

/* Every CPU's sets must nest (each inside the next larger): then they are
 * one tree, as hwloc's. */
static int pm_nested(const struct pm_loader *l)
{
    for (int c = 0; c < l->nbits; c++) {
        if (!pm_bit(l->present, c))
            continue;
        for (int a = 0; a < PM_KINDS; a++)
            for (int b = 0; b < PM_KINDS; b++) {
                int x = l->of[a][c], y = l->of[b][c];
                if (x < 0 || y < 0 || l->objs[x].weight > l->objs[y].weight)
                    continue;
                if (!pm_subset(l->objs[x].bits, l->objs[y].bits, l->nwords))
                    return 0;
            }
    }
    return 1;
}

/* hwloc's order of two cores: depth first, siblings by first CPU. Below
 * their lowest common ancestor each has a largest set that does not hold
 * the other's first CPU; those two are siblings. */
static int pm_core_order(const void *pa, const void *pb, void *loader)
{
    const struct pm_loader *l = loader;
    const struct pm_obj *a = &l->objs[*(const int *)pa], *b = &l->objs[*(const int *)pb];
    int first[2];
    const struct pm_obj *side[2] = {a, b};
    for (int s = 0; s < 2; s++) {
        const struct pm_obj *self = side[s], *other = side[1 - s];
        const struct pm_obj *top = self;
        for (int k = 0; k < PM_KINDS; k++) {
            int o = l->of[k][self->first];
            if (o < 0)
                continue;
            const struct pm_obj *up = &l->objs[o];
            if (up->weight > top->weight && !pm_bit(up->bits, other->first))
                top = up;
        }
        first[s] = top->first;
    }
    return first[0] < first[1] ? -1 : first[0] > first[1] ? 1 : a->first - b->first;
}

/* AMD compute units (Bulldozer, family 0x15/0x16): hwloc makes one core
 * per thread there. From CPUID on this machine (reading /proc/cpuinfo can
 * take milliseconds on a big node), from the tree's cpuinfo under a root. */
static int pm_amd_compute_units(struct pm_loader *l)
{
    if (!l->root[0]) {  /* under PERFMARK_TEST_CPU the real CPU is not known here */
        const struct pm_cpu_id *id = pm_cpu_id();
        return id->from_override ||
               (id->vendor == PM_CPU_AMD && (id->family == 0x15 || id->family == 0x16));
    }
    char full[PATH_MAX], line[256];
    snprintf(full, sizeof full, "%s/proc/cpuinfo", l->root);
    FILE *f = fopen(full, "re");
    int amd = 0, family = 0;
    while (f && !family && fgets(line, sizeof line, f)) {  /* the first CPU's lines */
        if (strncmp(line, "vendor_id", 9) == 0)
            amd = strstr(line, "AuthenticAMD") != NULL;
        else if (strncmp(line, "cpu family", 10) == 0 && strchr(line, ':'))
            family = atoi(strchr(line, ':') + 1);
    }
    if (f)
        fclose(f);
    return amd && (family == 21 || family == 22);
}

/* Any HWLOC_* variable may give hwloc another source, restriction or set
 * of components: then hwloc answers. */
static int pm_hwloc_environment(void)
{
    for (char **e = environ; e && *e; e++)
        if (strncmp(*e, "HWLOC_", 6) == 0)
            return 1;
    return 0;
}

static struct pm_place_map *pm_build(struct pm_loader *l, const uint64_t *allowed,
                                     const uint64_t *mems, int no_nodes)
{
    struct pm_place_map *map = calloc(1, sizeof *map);
    int *cores = calloc((size_t)l->nobjs + 1, sizeof *cores), *index = NULL;
    if (!map || !cores)
        goto fail;
    map->nbits = l->nbits;
    map->cpu = malloc((size_t)l->nbits * sizeof *map->cpu);
    index = malloc(((size_t)l->nobjs + 1) * sizeof *index);
    if (!map->cpu || !index)
        goto fail;
    int ncores = 0;
    for (int o = 0; o < l->nobjs; o++) {
        index[o] = -1;
        const struct pm_obj *obj = &l->objs[o];
        int kept = 0;
        for (int k = 0; k < l->nwords; k++)
            kept |= (obj->bits[k] & allowed[k]) != 0;
        if (kept && l->of[PM_CORE][obj->first] == o)
            cores[ncores++] = o;
        /* A core outside the cpuset whose set is an allowed node's: hwloc
         * keeps it (it holds that node), and counts it. */
        int node = l->of[PM_NODE][obj->first];
        if (!kept && l->of[PM_CORE][obj->first] == o && node >= 0 &&
            l->objs[node].weight == obj->weight && pm_bit(mems, l->objs[node].id))
            goto fail;
    }
    qsort_r(cores, (size_t)ncores, sizeof *cores, pm_core_order, l);
    for (int i = 0; i < ncores; i++)
        index[cores[i]] = i;
    for (int c = 0; c < l->nbits; c++) {
        struct pm_place *p = &map->cpu[c];
        *p = (struct pm_place){-1, -1, -1};
        if (!pm_bit(l->present, c) || !pm_bit(allowed, c))
            continue;
        int core = l->of[PM_CORE][c], package = l->of[PM_PACKAGE][c], node = l->of[PM_NODE][c];
        p->core = core >= 0 ? index[core] : -1;
        p->package = package >= 0 ? l->objs[package].id : -1;
        if (no_nodes)
            p->numa = 0;
        else if (node >= 0 && pm_bit(mems, l->objs[node].id))
            p->numa = l->objs[node].id;
    }
    free(cores);
    free(index);
    return map;
fail:
    free(cores);
    free(index);
    pm_place_map_free(map);
    return NULL;
}

/* The CPUs hwloc takes: online, with a topology directory. Sizes the
 * loader by the highest CPU number; -1 if there is no sysfs. */
static int pm_read_present(struct pm_loader *l)
{
    char full[PATH_MAX];
    snprintf(full, sizeof full, "%s/sys/devices/system/cpu", l->root);
    DIR *d = opendir(full);
    if (!d)
        return -1;
    int max = -1;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        char *end;
        long k = strncmp(e->d_name, "cpu", 3) == 0 ? strtol(e->d_name + 3, &end, 10) : -1;
        if (k >= 0 && k < (1 << 20) && end != e->d_name + 3 && !*end && k > max)
            max = (int)k;
    }
    closedir(d);
    if (max < 0)
        return -1;
    l->nbits = max + 1;
    l->nwords = (l->nbits + 63) / 64;
    /* masks: 9 characters per 32 CPUs; distance rows: ~4 per node */
    l->buflen = (size_t)l->nwords * 18 + 65536;
    l->buf = malloc(l->buflen);
    l->present = calloc((size_t)l->nwords, sizeof *l->present);
    for (int k = 0; k < PM_KINDS; k++) {
        l->of[k] = malloc((size_t)l->nbits * sizeof *l->of[k]);
        if (l->of[k])
            for (int c = 0; c < l->nbits; c++)
                l->of[k][c] = -1;
    }
    for (int k = 0; k < PM_KINDS; k++)
        if (!l->of[k])
            return -1;
    if (!l->buf || !l->present)
        return -1;
    /* The list of online CPUs, else each CPU's own online file (older
     * kernels), as hwloc reads them. */
    int listed = pm_read(l, "/sys/devices/system/cpu/online") >= 0;
    if (listed && pm_parse_list(l->buf, l->present, l->nbits) != 0)
        return -1;
    for (int c = 0; c < l->nbits; c++) {
        char path[96];
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d", c);
        if (!listed && pm_exists(l, path)) {
            snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/online", c);
            if (pm_read(l, path) <= 0 || atoi(l->buf) != 0)
                pm_set(l->present, c);
        }
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/topology", c);
        if (pm_bit(l->present, c) && !pm_exists(l, path))
            l->present[c / 64] &= ~((uint64_t)1 << (c % 64));
    }
    return pm_first(l->present, l->nwords) < 0 ? -1 : 0;
}

/* Which names the kernel uses, from the first present CPU as hwloc does;
 * -1 without either (hwloc's x86 backend would then build the tree). */
static int pm_read_names(struct pm_loader *l)
{
    char path[128];
    int first = pm_first(l->present, l->nwords);
    static const char *const names[] = {"package_cpus", "core_cpus", "core_siblings", "thread_siblings"};
    for (int k = 0; k < 4; k++) {
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/topology/%s", first, names[k]);
        if (pm_exists(l, path)) {
            l->old_names = k >= 2;
            snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/topology/book_siblings", first);
            return pm_exists(l, path) ? -1 : 0;  /* s390 books and drawers: hwloc's */
        }
    }
    return -1;
}

struct pm_place_map *pm_place_map_load(const char *root)
{
    if (!root[0] && pm_hwloc_environment())
        return NULL;
    struct pm_loader l = {.root = root};
    struct pm_place_map *map = NULL;
    uint64_t *allowed = NULL, *mems = NULL;
    int max_node = -1, no_nodes = 0;
    if (pm_read_present(&l) != 0 || pm_read_names(&l) != 0 || pm_amd_compute_units(&l))
        goto out;
    for (int c = 0; c < l.nbits; c++)
        if (pm_bit(l.present, c) && pm_read_cpu(&l, c) != 0)
            goto out;
    no_nodes = pm_read_nodes(&l, &max_node);
    if (no_nodes < 0 || !pm_nested(&l))
        goto out;
    int mem_bits = max_node + 1 > 64 ? max_node + 1 : 64;
    allowed = calloc((size_t)l.nwords, sizeof *allowed);
    mems = calloc((size_t)(mem_bits + 63) / 64, sizeof *mems);
    if (!allowed || !mems || pm_read_allowed(&l, allowed, mems, mem_bits) != 0)
        goto out;
    map = pm_build(&l, allowed, mems, no_nodes);
out:
    free(allowed);
    free(mems);
    for (int o = 0; o < l.nobjs; o++)
        free(l.objs[o].bits);
    free(l.objs);
    for (int k = 0; k < PM_KINDS; k++)
        free(l.of[k]);
    free(l.present);
    free(l.buf);
    return map;
}

void pm_place_map_get(const struct pm_place_map *map, int cpu, struct pm_place *out)
{
    if (map && cpu >= 0 && cpu < map->nbits)
        *out = map->cpu[cpu];
    else
        *out = (struct pm_place){-1, -1, -1};
}

void pm_place_map_free(struct pm_place_map *map)
{
    if (map) {
        free(map->cpu);
        free(map);
    }
}
