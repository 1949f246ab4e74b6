/* pm_place — the core, package and NUMA node of a CPU, for /threads
 * placement, read from sysfs and numbered as hwloc numbers them.
 *
 * hwloc would give the same answer, but loading its topology costs every
 * measured process ~3.7 ms when the file is written, 2.5 ms of it hwloc
 * dlopening its plugins (libxml2 and ICU, X11, OpenCL, libpciaccess) for
 * objects perfmark never asks about. This reads the few sysfs files hwloc's
 * Linux backend reads for cores, clusters, dies, packages and NUMA nodes,
 * keeps the CPUs and nodes hwloc keeps (online, with topology, allowed by
 * the cgroup cpuset), and orders the cores as hwloc's tree does: siblings
 * by first CPU, depth first, with hwloc's groups of NUMA nodes by
 * distance. Where that tree could hold something this does not model
 * (CPU-less NUMA nodes, HMAT initiators across nodes, sets that do not
 * nest, cgroup names hwloc would cut, s390 books, AMD compute units, any
 * HWLOC_* variable), loading says so by returning NULL, and the caller
 * asks hwloc. unit_place compares every CPU with hwloc itself, on
 * this machine and on synthetic sysfs trees (HWLOC_FSROOT). */
#ifndef PM_PLACE_H
#define PM_PLACE_H

#include <stdint.h>

/* Placement of an OS CPU number: hwloc's logical index of its core, OS
 * indices of its package and of its NUMA node; -1 where unknown. */
struct pm_place {
    int32_t core, package, numa;
};

struct pm_place_map;

/* Read the machine under `root` ("" for this one). NULL when it cannot
 * answer as hwloc would (see above) or sysfs is not there. */
struct pm_place_map *pm_place_map_load(const char *root);
/* Placement of `cpu`; all -1 for a CPU the map does not hold (offline,
 * outside the cgroup cpuset, out of range). */
void pm_place_map_get(const struct pm_place_map *map, int cpu, struct pm_place *out);
void pm_place_map_free(struct pm_place_map *map);

#endif
