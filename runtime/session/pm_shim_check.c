/* Whether a program's markers for another tool reach perfmark (docs/guide.md,
 * "Codes instrumented for LIKWID, PAPI or Caliper").
 *
 * A code instrumented for LIKWID links -lperfmark-likwid instead of -llikwid.
 * Linked with both, the first on the command line wins, and with the GNU
 * linker's default --as-needed the other is dropped altogether: the markers
 * then go to LIKWID, and perfmark used to record no region and say nothing.
 * At start, for each API a shim implements: if its marker entry point
 * resolves to a library that is not perfmark's shim, and some loaded object
 * really calls it (an undefined reference in its dynamic symbol table, read
 * from its file), say once which library won and what to change. */
#define _GNU_SOURCE
#include "pm_shim_check.h"
#include "pm_log.h"

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static const struct pm_tool_api {
    const char *api;     /* the tool, for the message */
    const char *symbol;  /* a marker entry point every instrumented code calls */
    const char *shim;    /* perfmark's library for it */
    const char *lib;     /* the tool's own library, as linked */
} pm_tool_apis[] = {
    {"LIKWID", "likwid_markerStartRegion", "libperfmark-likwid", "-llikwid"},
    {"PAPI high-level", "PAPI_hl_region_begin", "libperfmark-papi", "-lpapi"},
    {"Caliper", "cali_begin_region", "libperfmark-caliper", "-lcaliper"},
};

static const char *pm_base(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* 1 if the ELF file `path` has an undefined dynamic symbol `symbol`. */
static int pm_file_calls(const char *path, const char *symbol)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    struct stat st;
    void *map = fstat(fd, &st) == 0 && st.st_size > (off_t)sizeof(Elf64_Ehdr)
                    ? mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0)
                    : MAP_FAILED;
    close(fd);
    if (map == MAP_FAILED)
        return 0;
    const unsigned char *base = map;
    size_t size = (size_t)st.st_size;
    const Elf64_Ehdr *eh = map;
    int found = 0;
    if (memcmp(eh->e_ident, ELFMAG, SELFMAG) == 0 && eh->e_ident[EI_CLASS] == ELFCLASS64 &&
        eh->e_shoff && eh->e_shoff + (size_t)eh->e_shnum * sizeof(Elf64_Shdr) <= size) {
        const Elf64_Shdr *sh = (const Elf64_Shdr *)(base + eh->e_shoff);
        for (int i = 0; i < eh->e_shnum && !found; i++) {
            if (sh[i].sh_type != SHT_DYNSYM || sh[i].sh_link >= eh->e_shnum)
                continue;
            const Elf64_Shdr *str = &sh[sh[i].sh_link];
            if (sh[i].sh_offset + sh[i].sh_size > size || str->sh_offset + str->sh_size > size)
                continue;
            const Elf64_Sym *sym = (const Elf64_Sym *)(base + sh[i].sh_offset);
            size_t n = sh[i].sh_size / sizeof *sym;
            const char *names = (const char *)(base + str->sh_offset);
            for (size_t k = 0; k < n && !found; k++)
                found = sym[k].st_shndx == SHN_UNDEF && sym[k].st_name < str->sh_size &&
                        strncmp(names + sym[k].st_name, symbol, str->sh_size - sym[k].st_name) ==
                            0;
        }
    }
    munmap(map, size);
    return found;
}

struct pm_caller_search {
    const char *symbol;
    void *owner;  /* the library that defines it: not a caller */
    int found;
};

static int pm_find_caller(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct pm_caller_search *s = arg;
    const char *path = info->dlpi_name && *info->dlpi_name ? info->dlpi_name : "/proc/self/exe";
    if ((void *)info->dlpi_addr == s->owner || strstr(pm_base(path), "perfmark"))
        return 0;
    if (strncmp(pm_base(path), "linux-vdso", 10) == 0 || strncmp(pm_base(path), "ld-linux", 8) == 0)
        return 0;
    s->found = pm_file_calls(path, s->symbol);
    return s->found;
}

void pm_shim_check(int say_on_stderr)
{
    for (size_t i = 0; i < sizeof pm_tool_apis / sizeof *pm_tool_apis; i++) {
        const struct pm_tool_api *a = &pm_tool_apis[i];
        void *entry = dlsym(RTLD_DEFAULT, a->symbol);
        Dl_info where;
        if (!entry || !dladdr(entry, &where) || !where.dli_fname)
            continue;
        if (strncmp(pm_base(where.dli_fname), a->shim, strlen(a->shim)) == 0)
            continue;  /* perfmark's shim takes them */
        struct pm_caller_search s = {a->symbol, where.dli_fbase, 0};
        /* dlpi_addr is the load bias; for a shared library it equals its base */
        dl_iterate_phdr(pm_find_caller, &s);
        if (!s.found)
            continue;  /* the tool's library is here, but nobody calls its markers */
        pm_msg(say_on_stderr ? PM_MSG_ONCE : PM_MSG_FILE_ONLY,
               "this program's %s markers go to %s, not to perfmark: its %s regions are not "
               "measured. Link -l%s before %s (with the linker's default --as-needed, the "
               "one named second is dropped), or leave %s out", a->api, where.dli_fname,
               a->api, a->shim + 3 /* "libperfmark-x" -> "perfmark-x" */, a->lib, a->lib);
    }
}
