/* Which MPI libraries are loaded, and their ABIs (pm_mpi_which.h). */
#define _GNU_SOURCE
#include "pm_mpi_which.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What each ABI is known by: a symbol only its libraries define, or the
 * start of their file names (the soname and what follows it). */
static const struct pm_mpi_family {
    enum pm_mpi_abi abi;
    const char *name, *label;
    const char *marker;        /* defined by the library itself, or NULL */
    const char *files[6];      /* file name prefixes, NULL-terminated */
} pm_mpi_families[] = {
    {PM_MPI_OPENMPI, "openmpi", "Open MPI", "ompi_mpi_comm_world", {"libmpi.so.40.", NULL}},
    /* The MPICH ABI compatibility initiative fixed soname major 12. */
    {PM_MPI_MPICH, "mpich", "an MPI of the MPICH ABI", NULL,
     {"libmpich.so.12", "libmpi.so.12", "libmpi_cray.so.12", "libmpi_intel.so.12",
      "libmpi_dbg.so.12", NULL}},
    {PM_MPI_STANDARD, "mpi-abi", "an MPI of the MPI-5.0 standard ABI", NULL,
     {"libmpi_abi.so", NULL}},
};
#define PM_MPI_FAMILIES (sizeof pm_mpi_families / sizeof pm_mpi_families[0])

const char *pm_mpi_abi_name(enum pm_mpi_abi abi)
{
    for (size_t i = 0; i < PM_MPI_FAMILIES; i++)
        if (pm_mpi_families[i].abi == abi)
            return pm_mpi_families[i].name;
    return NULL;
}

int pm_mpi_abi_from_name(const char *name)
{
    for (size_t i = 0; name && i < PM_MPI_FAMILIES; i++)
        if (strcmp(pm_mpi_families[i].name, name) == 0)
            return (int)pm_mpi_families[i].abi;
    return -1;
}

const char *pm_mpi_abi_label(enum pm_mpi_abi abi)
{
    for (size_t i = 0; i < PM_MPI_FAMILIES; i++)
        if (pm_mpi_families[i].abi == abi)
            return pm_mpi_families[i].label;
    return "an MPI of unknown ABI";
}

/* Does the object at `path` itself define `sym` (not one of its
 * dependencies, which dlsym on its handle searches too)? */
static int pm_defines(void *h, const char *sym, const char *path)
{
    void *p = dlsym(h, sym);
    Dl_info di;
    return p && dladdr(p, &di) && di.dli_fname && strcmp(di.dli_fname, path) == 0;
}

static enum pm_mpi_abi pm_abi_of(void *h, const char *path, const char *file)
{
    for (size_t i = 0; i < PM_MPI_FAMILIES; i++)
        if (pm_mpi_families[i].marker && pm_defines(h, pm_mpi_families[i].marker, path))
            return pm_mpi_families[i].abi;
    for (size_t i = 0; i < PM_MPI_FAMILIES; i++)
        for (const char *const *f = pm_mpi_families[i].files; *f; f++)
            if (strncmp(file, *f, strlen(*f)) == 0)
                return pm_mpi_families[i].abi;
    return PM_MPI_UNKNOWN;
}

struct pm_paths {
    int n, cap;
    char **path;
};

static int pm_collect(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct pm_paths *p = arg;
    /* The program itself ("") is never interposed by a preloaded library:
     * an MPI linked into it is out of reach anyway. */
    if (!info->dlpi_name || !info->dlpi_name[0])
        return 0;
    if (p->n == p->cap) {
        int cap = p->cap ? 2 * p->cap : 64;
        char **grown = realloc(p->path, (size_t)cap * sizeof *grown);
        if (!grown)
            return 1;
        p->path = grown, p->cap = cap;
    }
    if ((p->path[p->n] = strdup(info->dlpi_name)))
        p->n++;
    return 0;
}

void pm_mpi_which(struct pm_mpi_libs *out)
{
    int err = errno;
    memset(out, 0, sizeof *out);
    /* Names first: no dlopen inside dl_iterate_phdr's callback. */
    struct pm_paths paths = {0};
    dl_iterate_phdr(pm_collect, &paths);
    for (int i = 0; i < paths.n; i++) {
        void *h = dlopen(paths.path[i], RTLD_LAZY | RTLD_NOLOAD);
        if (!h)
            continue;
        if (pm_defines(h, "PMPI_Init", paths.path[i])) {
            if (out->n < PM_MPI_LIBS_MAX) {
                struct pm_mpi_lib *l = &out->lib[out->n];
                char real[PATH_MAX];
                const char *whole = realpath(paths.path[i], real) ? real : paths.path[i];
                const char *slash = strrchr(whole, '/');
                snprintf(l->path, sizeof l->path, "%s", paths.path[i]);
                snprintf(l->file, sizeof l->file, "%s", slash ? slash + 1 : whole);
                l->abi = pm_abi_of(h, paths.path[i], l->file);
            }
            out->n++;
        }
        dlclose(h);
    }
    for (int i = 0; i < paths.n; i++)
        free(paths.path[i]);
    free(paths.path);
    errno = err;
}
