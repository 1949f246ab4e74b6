#define _GNU_SOURCE
#include "pm_srcline.h"

#include <dlfcn.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* The libdwfl entry points we use, resolved from libdw.so.1 at run time. */
static struct {
    int tried, ok;
    __typeof__(dwfl_begin) *begin;
    __typeof__(dwfl_linux_proc_report) *proc_report;
    __typeof__(dwfl_report_begin) *report_begin;
    __typeof__(dwfl_report_end) *report_end;
    __typeof__(dwfl_addrmodule) *addrmodule;
    __typeof__(dwfl_module_getsrc) *getsrc;
    __typeof__(dwfl_lineinfo) *lineinfo;
    __typeof__(dwfl_module_nextcu) *nextcu;
    __typeof__(dwarf_haspc) *haspc;
    __typeof__(dwarf_getsrc_die) *getsrc_die;
    __typeof__(dwarf_linesrc) *linesrc;
    __typeof__(dwarf_lineno) *lineno;
    __typeof__(dwfl_module_addrinfo) *addrinfo;
    Dwfl_Callbacks callbacks;
    char *debuginfo_path;
    Dwfl *dwfl;
} pm_dw;

static int pm_dw_load(void)
{
    if (pm_dw.tried)
        return pm_dw.ok;
    pm_dw.tried = 1;
    void *lib = dlopen("libdw.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib)
        return 0;
    pm_dw.begin = (__typeof__(pm_dw.begin))dlsym(lib, "dwfl_begin");
    pm_dw.proc_report = (__typeof__(pm_dw.proc_report))dlsym(lib, "dwfl_linux_proc_report");
    pm_dw.report_begin = (__typeof__(pm_dw.report_begin))dlsym(lib, "dwfl_report_begin");
    pm_dw.report_end = (__typeof__(pm_dw.report_end))dlsym(lib, "dwfl_report_end");
    pm_dw.addrmodule = (__typeof__(pm_dw.addrmodule))dlsym(lib, "dwfl_addrmodule");
    pm_dw.getsrc = (__typeof__(pm_dw.getsrc))dlsym(lib, "dwfl_module_getsrc");
    pm_dw.lineinfo = (__typeof__(pm_dw.lineinfo))dlsym(lib, "dwfl_lineinfo");
    pm_dw.nextcu = (__typeof__(pm_dw.nextcu))dlsym(lib, "dwfl_module_nextcu");
    pm_dw.haspc = (__typeof__(pm_dw.haspc))dlsym(lib, "dwarf_haspc");
    pm_dw.getsrc_die = (__typeof__(pm_dw.getsrc_die))dlsym(lib, "dwarf_getsrc_die");
    pm_dw.linesrc = (__typeof__(pm_dw.linesrc))dlsym(lib, "dwarf_linesrc");
    pm_dw.lineno = (__typeof__(pm_dw.lineno))dlsym(lib, "dwarf_lineno");
    pm_dw.addrinfo = (__typeof__(pm_dw.addrinfo))dlsym(lib, "dwfl_module_addrinfo");
    pm_dw.callbacks.find_elf =
        (__typeof__(pm_dw.callbacks.find_elf))dlsym(lib, "dwfl_linux_proc_find_elf");
    pm_dw.callbacks.find_debuginfo = (__typeof__(pm_dw.callbacks.find_debuginfo))dlsym(
        lib, "dwfl_standard_find_debuginfo");
    pm_dw.callbacks.debuginfo_path = &pm_dw.debuginfo_path;
    pm_dw.ok = pm_dw.begin && pm_dw.proc_report && pm_dw.report_begin && pm_dw.report_end &&
               pm_dw.addrmodule && pm_dw.getsrc && pm_dw.lineinfo && pm_dw.nextcu &&
               pm_dw.haspc && pm_dw.getsrc_die && pm_dw.linesrc && pm_dw.lineno && pm_dw.addrinfo &&
               pm_dw.callbacks.find_elf && pm_dw.callbacks.find_debuginfo;
    return pm_dw.ok;
}

/* (Re)read this process's mappings: objects dlopen'ed since are found too. */
static int pm_dw_report(void)
{
    if (!pm_dw.dwfl && !(pm_dw.dwfl = pm_dw.begin(&pm_dw.callbacks)))
        return -1;
    pm_dw.report_begin(pm_dw.dwfl);
    int rc = pm_dw.proc_report(pm_dw.dwfl, getpid());
    pm_dw.report_end(pm_dw.dwfl, NULL, NULL);
    return rc == 0 ? 0 : -1;
}

/* dwfl_module_getsrc finds the compile unit through .debug_aranges, which
 * clang does not emit unless asked (-gdwarf-aranges): walk the units. */
static const char *pm_srcline_by_cu(Dwfl_Module *mod, Dwarf_Addr a, int *lineno)
{
    Dwarf_Addr bias;
    for (Dwarf_Die *cu = pm_dw.nextcu(mod, NULL, &bias); cu;
         cu = pm_dw.nextcu(mod, cu, &bias)) {
        if (pm_dw.haspc(cu, a - bias) <= 0)
            continue;
        Dwarf_Line *line = pm_dw.getsrc_die(cu, a - bias);
        if (!line || pm_dw.lineno(line, lineno) != 0)
            return NULL;
        return pm_dw.linesrc(line, NULL, NULL);
    }
    return NULL;
}

/* The module (object) holding `a`, re-reading the mappings once if none
 * does (an object dlopen'ed since the last look). */
static Dwfl_Module *pm_dw_module(Dwarf_Addr a)
{
    if (!pm_dw_load())
        return NULL;
    Dwfl_Module *mod = pm_dw.dwfl ? pm_dw.addrmodule(pm_dw.dwfl, a) : NULL;
    if (!mod && (pm_dw_report() != 0 || !(mod = pm_dw.addrmodule(pm_dw.dwfl, a))))
        return NULL;
    return mod;
}

int pm_srcsym(const void *addr, char *name, size_t len, size_t *offset)
{
    if (!addr)
        return -1;
    Dwarf_Addr a = (Dwarf_Addr)(uintptr_t)addr;
    Dwfl_Module *mod = pm_dw_module(a);
    GElf_Off off = 0;
    GElf_Sym sym;
    /* libdwfl reads .symtab (or a separate debug file's) before .dynsym:
     * functions of an executable built without -rdynamic have names too */
    const char *s = mod ? pm_dw.addrinfo(mod, a, &off, &sym, NULL, NULL, NULL) : NULL;
    if (!s || !*s || GELF_ST_TYPE(sym.st_info) != STT_FUNC)
        return -1;
    snprintf(name, len, "%s", s);
    *offset = (size_t)off;
    return 0;
}

int pm_srcline(const void *addr, char *file, size_t len, int *line)
{
    if (!addr)
        return -1;
    Dwarf_Addr a = (Dwarf_Addr)(uintptr_t)addr;
    Dwfl_Module *mod = pm_dw_module(a);
    if (!mod)
        return -1;
    Dwfl_Line *l = pm_dw.getsrc(mod, a);
    int lineno = 0;
    const char *src = l ? pm_dw.lineinfo(l, NULL, &lineno, NULL, NULL, NULL) : NULL;
    if (!src)
        src = pm_srcline_by_cu(mod, a, &lineno);
    if (!src || lineno <= 0)
        return -1;
    const char *base = strrchr(src, '/');
    snprintf(file, len, "%s", base ? base + 1 : src);
    *line = lineno;
    return 0;
}
