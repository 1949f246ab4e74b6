/* Which MPI libraries are loaded, and their ABIs (pm_mpi_which.h). */
#define _GNU_SOURCE
#include "pm_mpi_which.h"

#include <errno.h>
#include <limits.h>
#include <elf.h>
#include <link.h>
#include <stdint.h>
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

/* Does the loaded object itself define `sym`? Read from its own dynamic
 * symbol table through its hash table, never with dlopen/dlsym: a dlopen of
 * an object whose destructors are running (perfmark writes its file from
 * one) runs its constructors again, glibc having cleared its "initialised"
 * mark. The loader has relocated the dynamic section's addresses. */
struct pm_dyn {
    const ElfW(Sym) *symtab;
    const char *strtab;
    const uint32_t *gnu_hash, *sysv_hash;
};

static uint32_t pm_gnu_hash(const char *s)
{
    uint32_t h = 5381;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        h = h * 33 + *p;
    return h;
}

static uint32_t pm_sysv_hash(const char *s)
{
    uint32_t h = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        h = (h << 4) + *p;
        uint32_t g = h & 0xf0000000u;
        h ^= g >> 24;
        h &= ~g;
    }
    return h;
}

static int pm_matches(const struct pm_dyn *d, const ElfW(Sym) *sym, const char *name)
{
    return sym->st_shndx != SHN_UNDEF && sym->st_value != 0 &&
           strcmp(d->strtab + sym->st_name, name) == 0;
}

static int pm_defines(const struct pm_dyn *d, const char *name)
{
    if (!d->symtab || !d->strtab)
        return 0;
    if (d->gnu_hash) {
        const uint32_t *h = d->gnu_hash;
        uint32_t nbuckets = h[0], symoffset = h[1], bloom_size = h[2];
        const ElfW(Addr) *bloom = (const ElfW(Addr) *)(h + 4);
        const uint32_t *buckets = (const uint32_t *)(bloom + bloom_size);
        const uint32_t *chain = buckets + nbuckets;
        uint32_t hash = pm_gnu_hash(name);
        if (nbuckets == 0)
            return 0;
        for (uint32_t i = buckets[hash % nbuckets]; i >= symoffset && i != 0; i++) {
            uint32_t c = chain[i - symoffset];
            if ((c | 1) == (hash | 1) && pm_matches(d, &d->symtab[i], name))
                return 1;
            if (c & 1)
                break;
        }
        return 0;
    }
    if (d->sysv_hash) {
        uint32_t nbuckets = d->sysv_hash[0];
        const uint32_t *buckets = d->sysv_hash + 2, *chain = buckets + nbuckets;
        if (nbuckets == 0)
            return 0;
        for (uint32_t i = buckets[pm_sysv_hash(name) % nbuckets]; i != STN_UNDEF; i = chain[i])
            if (pm_matches(d, &d->symtab[i], name))
                return 1;
    }
    return 0;
}

/* glibc relocates a loaded object's dynamic addresses in place, but not
 * those of a read-only dynamic section (the vDSO's): an address below the
 * load base is still an offset. */
static const void *pm_dyn_ptr(const struct dl_phdr_info *info, ElfW(Addr) p)
{
    return (const void *)(p < info->dlpi_addr ? p + info->dlpi_addr : p);
}

static struct pm_dyn pm_dyn_of(const struct dl_phdr_info *info)
{
    struct pm_dyn d = {0};
    for (int i = 0; i < info->dlpi_phnum; i++) {
        if (info->dlpi_phdr[i].p_type != PT_DYNAMIC)
            continue;
        for (const ElfW(Dyn) *e = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
             e->d_tag != DT_NULL; e++) {
            if (e->d_tag == DT_SYMTAB)
                d.symtab = pm_dyn_ptr(info, e->d_un.d_ptr);
            else if (e->d_tag == DT_STRTAB)
                d.strtab = pm_dyn_ptr(info, e->d_un.d_ptr);
            else if (e->d_tag == DT_GNU_HASH)
                d.gnu_hash = pm_dyn_ptr(info, e->d_un.d_ptr);
            else if (e->d_tag == DT_HASH)
                d.sysv_hash = pm_dyn_ptr(info, e->d_un.d_ptr);
        }
    }
    return d;
}

static enum pm_mpi_abi pm_abi_by_file(const char *file)
{
    for (size_t i = 0; i < PM_MPI_FAMILIES; i++)
        for (const char *const *f = pm_mpi_families[i].files; *f; f++)
            if (strncmp(file, *f, strlen(*f)) == 0)
                return pm_mpi_families[i].abi;
    return PM_MPI_UNKNOWN;
}

/* An MPI library: an object that itself defines PMPI_Init. */
static int pm_collect(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct pm_mpi_libs *out = arg;
    /* The program itself ("") is never interposed by a preloaded library:
     * an MPI linked into it is out of reach anyway. */
    if (!info->dlpi_name || !info->dlpi_name[0])
        return 0;
    struct pm_dyn d = pm_dyn_of(info);
    if (!pm_defines(&d, "PMPI_Init"))
        return 0;
    if (out->n < PM_MPI_LIBS_MAX) {
        struct pm_mpi_lib *l = &out->lib[out->n];
        snprintf(l->path, sizeof l->path, "%s", info->dlpi_name);
        l->abi = PM_MPI_UNKNOWN;
        for (size_t i = 0; i < PM_MPI_FAMILIES; i++)
            if (pm_mpi_families[i].marker && pm_defines(&d, pm_mpi_families[i].marker))
                l->abi = pm_mpi_families[i].abi;
    }
    out->n++;
    return 0;
}

void pm_mpi_which(struct pm_mpi_libs *out)
{
    int err = errno;
    memset(out, 0, sizeof *out);
    dl_iterate_phdr(pm_collect, out);
    /* File names after the walk: realpath does I/O, and the loader's lock
     * is held during it. */
    for (int i = 0; i < out->n && i < PM_MPI_LIBS_MAX; i++) {
        struct pm_mpi_lib *l = &out->lib[i];
        char real[PATH_MAX];
        const char *whole = realpath(l->path, real) ? real : l->path;
        const char *slash = strrchr(whole, '/');
        snprintf(l->file, sizeof l->file, "%s", slash ? slash + 1 : whole);
        if (l->abi == PM_MPI_UNKNOWN)
            l->abi = pm_abi_by_file(l->file);
    }
    errno = err;
}
