#define _GNU_SOURCE
#include "pm_modules.h"

#include <elf.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct pm_modules_walk {
    struct pm_modules *out;
    int cap, failed;
};

/* The GNU build-id in a PT_NOTE segment's notes, as hex; "" if none. */
static void pm_note_build_id(const ElfW(Nhdr) *note, size_t len, char *hex)
{
    const unsigned char *p = (const unsigned char *)note, *end = p + len;
    while (p + sizeof(ElfW(Nhdr)) <= end) {
        const ElfW(Nhdr) *n = (const ElfW(Nhdr) *)p;
        size_t name = (n->n_namesz + 3) & ~(size_t)3, desc = (n->n_descsz + 3) & ~(size_t)3;
        const unsigned char *d = p + sizeof *n + name;
        if (d + n->n_descsz > end)
            return;
        if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 &&
            memcmp(p + sizeof *n, "GNU", 4) == 0 && n->n_descsz <= 20) {
            for (size_t i = 0; i < n->n_descsz; i++)
                snprintf(hex + 2 * i, 3, "%02x", d[i]);
            return;
        }
        p += sizeof *n + name + desc;
    }
}

static int pm_module_add(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct pm_modules_walk *w = arg;
    uint64_t lo = UINT64_MAX, hi = 0;
    char hex[PM_BUILD_ID_HEX] = "";
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uint64_t at = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD) {
            if (at < lo)
                lo = at;
            if (at + ph->p_memsz > hi)
                hi = at + ph->p_memsz;
        } else if (ph->p_type == PT_NOTE && !hex[0]) {
            pm_note_build_id((const ElfW(Nhdr) *)(uintptr_t)at, ph->p_memsz, hex);
        }
    }
    if (lo >= hi)
        return 0;
    if (w->out->n == w->cap) {
        int cap = w->cap ? 2 * w->cap : 32;
        struct pm_module *grown = realloc(w->out->m, (size_t)cap * sizeof *grown);
        if (!grown) {
            w->failed = 1;
            return 1;
        }
        w->out->m = grown;
        w->cap = cap;
    }
    struct pm_module *m = &w->out->m[w->out->n++];
    memset(m, 0, sizeof *m);
    m->start = lo;
    m->end = hi;
    m->base = info->dlpi_addr;
    memcpy(m->build_id, hex, sizeof hex);
    const char *name = info->dlpi_name;
    if (!name || !*name) {
        /* the executable (listed first, with an empty name) */
        ssize_t n = readlink("/proc/self/exe", m->path, sizeof m->path - 1);
        m->path[n > 0 ? n : 0] = '\0';
    } else if (strncmp(name, "linux-vdso", 10) == 0 || strncmp(name, "linux-gate", 10) == 0) {
        snprintf(m->path, sizeof m->path, "[vdso]");
    } else {
        char real[PM_MODULE_PATH];
        snprintf(m->path, sizeof m->path, "%s", realpath(name, real) ? real : name);
    }
    return 0;
}

static int pm_module_cmp(const void *a, const void *b)
{
    const struct pm_module *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

int pm_modules_snapshot(struct pm_modules *out)
{
    out->n = 0;
    out->m = NULL;
    struct pm_modules_walk w = {.out = out};
    dl_iterate_phdr(pm_module_add, &w);
    if (w.failed) {
        pm_modules_free(out);
        return -1;
    }
    if (out->n)
        qsort(out->m, (size_t)out->n, sizeof *out->m, pm_module_cmp);
    return 0;
}

void pm_modules_free(struct pm_modules *mods)
{
    free(mods->m);
    mods->m = NULL;
    mods->n = 0;
}
