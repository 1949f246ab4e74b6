#define _GNU_SOURCE
#include "model/symbols.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef PM_HAVE_LIBDW
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>
#endif

#define PM_SYM_NOTES_MAX 64

/* One object of the file. */
struct pm_object {
    const char *path, *build_id, *base;
    int tried;          /* opened (or found missing) already */
#ifdef PM_HAVE_LIBDW
    Dwfl *dwfl;
    Dwfl_Module *mod;
#endif
};

struct pm_sym_slot {
    int32_t module;
    uint64_t offset;
    struct pm_symbol sym;
    int used;
};

struct pm_symbols {
    struct pm_object *obj;
    size_t n;
    struct pm_sym_slot *slot;  /* cache: open addressing on (module, offset) */
    size_t mask, used;
    char **strings;            /* every string handed out, owned here */
    size_t nstrings, capstrings;
    char *notes[PM_SYM_NOTES_MAX];
    size_t nnotes;
};

static void pm_note(struct pm_symbols *s, const char *fmt, const char *a, const char *b)
{
    if (s->nnotes == PM_SYM_NOTES_MAX)
        return;
    char *text = NULL;
    if (asprintf(&text, fmt, a, b) >= 0)
        s->notes[s->nnotes++] = text;
}

static const char *pm_basename(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash && slash[1] ? slash + 1 : path;
}

struct pm_symbols *pm_symbols_new(const struct pm_file_module *modules, size_t n)
{
    struct pm_symbols *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->obj = calloc(n + 1, sizeof *s->obj);
    s->mask = 1023;
    s->slot = calloc(s->mask + 1, sizeof *s->slot);
    if (!s->obj || !s->slot) {
        pm_symbols_free(s);
        return NULL;
    }
    s->n = n;
    for (size_t i = 0; i < n; i++) {
        s->obj[i].path = modules[i].path ? modules[i].path : "";
        s->obj[i].build_id = modules[i].build_id ? modules[i].build_id : "";
        s->obj[i].base = pm_basename(s->obj[i].path);
    }
    return s;
}

void pm_symbols_free(struct pm_symbols *s)
{
    if (!s)
        return;
#ifdef PM_HAVE_LIBDW
    for (size_t i = 0; s->obj && i < s->n; i++)
        if (s->obj[i].dwfl)
            dwfl_end(s->obj[i].dwfl);
#endif
    for (size_t i = 0; i < s->nstrings; i++)
        free(s->strings[i]);
    for (size_t i = 0; i < s->nnotes; i++)
        free(s->notes[i]);
    free(s->strings), free(s->obj), free(s->slot), free(s);
}

const char *const *pm_symbols_notes(const struct pm_symbols *s, size_t *n)
{
    *n = s->nnotes;
    return (const char *const *)s->notes;
}

void pm_symbol_place(const struct pm_symbol *sym, uint64_t offset, char *buf, size_t len)
{
    snprintf(buf, len, "%s+0x%llx", sym->object, (unsigned long long)offset);
}

void pm_symbol_label(const struct pm_symbol *sym, int32_t module, uint64_t offset, char *buf,
                     size_t len)
{
    if (sym->function)
        snprintf(buf, len, "%s", sym->function);
    else if (module < 0)
        snprintf(buf, len, "%s", sym->object); /* the kernel: no names here */
    else
        pm_symbol_place(sym, offset, buf, len);
}

#ifdef PM_HAVE_LIBDW

int pm_symbols_available(void) { return 1; }

/* A copy of a name libdw gave, owned by s. */
static const char *pm_keep(struct pm_symbols *s, const char *text)
{
    if (!text)
        return NULL;
    if (s->nstrings == s->capstrings) {
        size_t cap = s->capstrings ? 2 * s->capstrings : 256;
        char **grown = realloc(s->strings, cap * sizeof *grown);
        if (!grown)
            return NULL;
        s->strings = grown;
        s->capstrings = cap;
    }
    char *copy = strdup(text);
    if (copy)
        s->strings[s->nstrings++] = copy;
    return copy;
}


/* The build-id of the ELF file at path as hex, "" if it has none; -1 when it
 * cannot be read as ELF. */
static int pm_file_build_id(const char *path, char *hex, size_t len)
{
    hex[0] = '\0';
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    elf_version(EV_CURRENT);
    Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
    int rc = -1;
    if (elf && elf_kind(elf) == ELF_K_ELF) {
        const void *id = NULL;
        ssize_t n = dwelf_elf_gnu_build_id(elf, &id);
        for (ssize_t i = 0; i < n && (size_t)(2 * i + 2) < len; i++)
            snprintf(hex + 2 * i, 3, "%02x", ((const unsigned char *)id)[i]);
        rc = 0;
    }
    if (elf)
        elf_end(elf);
    close(fd);
    return rc;
}

/* A file for the object: the recorded path if its build-id matches, else by
 * build-id or base name under PERFMARK_SYMBOL_PATH and the system's debug
 * directory. *differs is set when the recorded path holds another build. */
static int pm_find_object(const struct pm_object *o, char *out, size_t len, int *differs)
{
    char hex[128];
    *differs = 0;
    if (pm_file_build_id(o->path, hex, sizeof hex) == 0) {
        if (!o->build_id[0] || strcmp(hex, o->build_id) == 0) {
            snprintf(out, len, "%s", o->path);
            return 0;
        }
        *differs = 1;
    }
    if (!o->build_id[0] || strlen(o->build_id) < 3)
        return -1;
    const char *env = getenv("PERFMARK_SYMBOL_PATH");
    char dirs[4096];
    snprintf(dirs, sizeof dirs, "%s%s/usr/lib/debug", env ? env : "", env && *env ? ":" : "");
    char *save = NULL;
    for (char *dir = strtok_r(dirs, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
        const char *forms[] = {"%s/.build-id/%.2s/%s.debug", "%s/.build-id/%.2s/%s", "%s/%s%s"};
        for (size_t k = 0; k < sizeof forms / sizeof *forms; k++) {
            if (k == 2)
                snprintf(out, len, "%s/%s", dir, o->base);
            else
                snprintf(out, len, forms[k], dir, o->build_id, o->build_id + 2);
            if (pm_file_build_id(out, hex, sizeof hex) == 0 && strcmp(hex, o->build_id) == 0)
                return 0;
        }
    }
    return -1;
}

/* Where separate debug files are looked for: beside the object and in its
 * .debug/ (by .gnu_debuglink), then by build-id (DIR/.build-id/xx/rest.debug)
 * under each PERFMARK_SYMBOL_PATH directory and /usr/lib/debug. */
static char *pm_debuginfo_path;
static char pm_debuginfo_buf[4096];

static void pm_debuginfo_setup(void)
{
    const char *env = getenv("PERFMARK_SYMBOL_PATH");
    snprintf(pm_debuginfo_buf, sizeof pm_debuginfo_buf, ":.debug:%s%s/usr/lib/debug",
             env ? env : "", env && *env ? ":" : "");
    pm_debuginfo_path = pm_debuginfo_buf;
}

static const Dwfl_Callbacks pm_dwfl_callbacks = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .debuginfo_path = &pm_debuginfo_path,
};

static void pm_object_open(struct pm_symbols *s, struct pm_object *o)
{
    o->tried = 1;
    if (o->path[0] == '[')
        return;  /* [vdso]: no file */
    char file[4096];
    int differs = 0;
    if (pm_find_object(o, file, sizeof file, &differs) != 0) {
        pm_note(s, differs ? "%s: the file there now has another build-id than the one that ran "
                             "(rebuilt since?), and no file with build-id %s was found: its "
                             "samples are shown as object+offset"
                           : "%s: not found (nor a file with its build-id %s): its samples are "
                             "shown as object+offset",
                o->path, o->build_id[0] ? o->build_id : "(none)");
        return;
    }
    if (!pm_debuginfo_path)
        pm_debuginfo_setup();
    o->dwfl = dwfl_begin(&pm_dwfl_callbacks);
    if (!o->dwfl)
        return;
    dwfl_report_begin(o->dwfl);
    /* Placed at 0: addresses are the file's own (the recorded offsets). */
    o->mod = dwfl_report_elf(o->dwfl, o->base, file, -1, 0, false);
    dwfl_report_end(o->dwfl, NULL, NULL);
    if (!o->mod) {
        pm_note(s, "%s: cannot be read as ELF (%s): its samples are shown as object+offset", file,
                dwfl_errmsg(-1));
        dwfl_end(o->dwfl);
        o->dwfl = NULL;
    }
}

/* The name of a DIE, through its abstract origin for an inlined instance. */
static const char *pm_die_name(Dwarf_Die *die)
{
    Dwarf_Attribute attr;
    Dwarf_Die origin;
    const char *name = dwarf_diename(die);
    if (name)
        return name;
    if (dwarf_attr_integrate(die, DW_AT_abstract_origin, &attr) &&
        dwarf_formref_die(&attr, &origin))
        return dwarf_diename(&origin);
    return NULL;
}

/* The C++ runtime's demangler, found once where a C++ program's library
 * is (libstdc++, or NULL: names stay mangled). perfmark is C and links no
 * C++ runtime; the symbol is part of the Itanium C++ ABI every one has. */
typedef char *(*pm_demangle_fn)(const char *, char *, size_t *, int *);
static pm_demangle_fn pm_demangler(void)
{
    static int tried;
    static pm_demangle_fn fn;
    if (!tried) {
        tried = 1;
        void *h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
        if (h)
            *(void **)&fn = dlsym(h, "__cxa_demangle");
    }
    return fn;
}

/* A symbol's name as people read it: C++ demangled (`_ZN2ns4leafIiEEvT_` is
 * `void ns::leaf<int>(int)`), without the symbol version of a shared
 * library's export (`clock_gettime@@GLIBC_2.17` is `clock_gettime`). */
static const char *pm_symbol_name(struct pm_symbols *s, const char *name)
{
    if (!name)
        return NULL;
    pm_demangle_fn demangle = name[0] == '_' && name[1] == 'Z' ? pm_demangler() : NULL;
    if (demangle) {
        int status = -1;
        char *plain = demangle(name, NULL, NULL, &status);
        const char *kept = status == 0 && plain ? pm_keep(s, plain) : NULL;
        free(plain);
        if (kept)
            return kept;
    }
    const char *at = strchr(name, '@');
    if (at && at != name) {
        char cut[512];
        snprintf(cut, sizeof cut, "%.*s", (int)(at - name), name);
        return pm_keep(s, cut);
    }
    return pm_keep(s, name);
}

/* The function holding an OpenMP construct whose body clang outlined
 * (.omp_outlined., .omp_outlined._debug__, .omp_outlined..1): the
 * subprogram of the same compile unit and source file declared last at or
 * before the outlined one's line (the construct is inside its holder's
 * body, and clang declares the body at the pragma). NULL without DWARF. */
struct pm_holder_search {
    const char *file;
    int line, best_line;
    const char *best;
};

static int pm_holder_visit(Dwarf_Die *fn, void *arg)
{
    struct pm_holder_search *h = arg;
    const char *name = dwarf_diename(fn), *file = dwarf_decl_file(fn);
    int line = 0;
    if (!name || strncmp(name, ".omp_", 5) == 0 || !file || strcmp(file, h->file) != 0 ||
        dwarf_decl_line(fn, &line) != 0 || line > h->line || line < h->best_line)
        return DWARF_CB_OK;
    h->best = name;
    h->best_line = line;
    return DWARF_CB_OK;
}

static const char *pm_clang_holder(Dwarf_Die *cu, Dwarf_Die *scopes, int n)
{
    /* the outermost function scope: the outlined body, or (clang at -O1)
     * its _debug__ twin inlined into it, declared at the pragma too */
    for (int i = n - 1; i >= 0; i--) {
        int tag = dwarf_tag(&scopes[i]);
        if (tag != DW_TAG_subprogram && tag != DW_TAG_inlined_subroutine)
            continue;
        struct pm_holder_search h = {dwarf_decl_file(&scopes[i]), 0, -1, NULL};
        if (!h.file || dwarf_decl_line(&scopes[i], &h.line) != 0)
            return NULL;
        dwarf_getfuncs(cu, pm_holder_visit, &h, 0);
        return h.best;
    }
    return NULL;
}

/* An OpenMP body as people read it, named by the function holding its
 * construct: gcc's `stencil_sweep._omp_fn.1` (or, demangled, `... [clone
 * ._omp_fn.1]`) is `stencil_sweep [OpenMP body 1]`; clang's
 * `.omp_outlined.` is `stencil_sweep [OpenMP body]` where DWARF tells the
 * holder. NULL: not a body, or its holder unknown (its symbol stays). */
static const char *pm_omp_body(struct pm_symbols *s, const char *name, Dwarf_Die *cu,
                               Dwarf_Die *scopes, int n)
{
    char label[600];
    const char *cut = strstr(name, " [clone ._omp_fn.");
    size_t skip = cut ? strlen(" [clone ._omp_fn.") : 0;
    if (!cut && (cut = strstr(name, "._omp_fn.")) != NULL)
        skip = strlen("._omp_fn.");
    if (cut && cut > name) {
        int k = atoi(cut + skip);
        snprintf(label, sizeof label, "%.*s [OpenMP body %d]", (int)(cut - name), name, k);
        return pm_keep(s, label);
    }
    if (strncmp(name, ".omp_outlined.", 14) != 0 || !cu)
        return NULL;
    const char *holder = pm_clang_holder(cu, scopes, n);
    if (!holder)
        return NULL;
    snprintf(label, sizeof label, "%s [OpenMP body]", holder);
    return pm_keep(s, label);
}

/* The compile unit holding an address: through .debug_aranges, else (clang
 * writes none unless asked: -gdwarf-aranges) the first unit whose ranges
 * hold it. */
static Dwarf_Die *pm_cu_of(Dwfl_Module *mod, uint64_t offset, Dwarf_Addr *bias, Dwarf_Die *buf)
{
    Dwarf_Die *cu = dwfl_module_addrdie(mod, offset, bias);
    Dwarf *dw = cu ? NULL : dwfl_module_getdwarf(mod, bias);
    Dwarf_Off off = 0, next;
    size_t hsize;
    while (dw && dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
        if (dwarf_offdie(dw, off + hsize, buf) && dwarf_haspc(buf, offset - *bias) > 0)
            return buf;
        off = next;
    }
    return cu;
}

static void pm_lookup(struct pm_symbols *s, struct pm_object *o, uint64_t offset,
                      struct pm_symbol *sym)
{
    GElf_Off off;
    GElf_Sym esym;
    const char *name = dwfl_module_addrinfo(o->mod, offset, &off, &esym, NULL, NULL, NULL);
    sym->function = pm_symbol_name(s, name);
    Dwfl_Line *line = dwfl_module_getsrc(o->mod, offset);
    if (line) {
        int lineno = 0;
        const char *file = dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL);
        sym->file = pm_keep(s, file);
        sym->line = lineno;
    }
    /* Inline scopes: the innermost inlined function names the code. */
    Dwarf_Addr bias = 0;
    Dwarf_Die cubuf, *cu = pm_cu_of(o->mod, offset, &bias, &cubuf);
    Dwarf_Line *dl = !line && cu ? dwarf_getsrc_die(cu, offset - bias) : NULL;
    if (dl) { /* the unit found without .debug_aranges */
        int lineno = 0;
        sym->file = pm_keep(s, dwarf_linesrc(dl, NULL, NULL));
        dwarf_lineno(dl, &lineno);
        sym->line = lineno;
    }
    Dwarf_Die *scopes = NULL;
    int n = cu ? dwarf_getscopes(cu, offset - bias, &scopes) : 0;
    for (int i = 0; i < n; i++) {
        if (dwarf_tag(&scopes[i]) != DW_TAG_inlined_subroutine)
            continue;
        const char *inl = pm_die_name(&scopes[i]);
        if (inl && (!sym->function || strcmp(inl, sym->function) != 0)) {
            sym->inlined_in = sym->function;
            sym->function = pm_keep(s, inl);
        }
        break;
    }
    /* an OpenMP body (the function, or the one it is inlined in) by its holder */
    const char **outer = sym->inlined_in ? &sym->inlined_in : &sym->function;
    const char *body = *outer ? pm_omp_body(s, *outer, cu, scopes, n) : NULL;
    if (body)
        *outer = body;
    /* clang's _debug__ twin inlined into the body is the body */
    if (body && sym->inlined_in == body && strncmp(sym->function, ".omp_outlined.", 14) == 0) {
        sym->function = body;
        sym->inlined_in = NULL;
    }
    free(scopes);
}

#else /* no elfutils: every instruction is object+offset */

int pm_symbols_available(void) { return 0; }

static void pm_object_open(struct pm_symbols *s, struct pm_object *o)
{
    o->tried = 1;
    pm_note(s, "%s%s: this perfmark was built without elfutils (libdw-dev): samples are shown "
            "as object+offset", o->path, "");
}

#endif

static uint64_t pm_slot_hash(int32_t module, uint64_t offset)
{
    uint64_t x = offset * 0x9E3779B97F4A7C15ull ^ (uint64_t)(uint32_t)module << 40;
    return x ^ x >> 29;
}

static int pm_cache_grow(struct pm_symbols *s)
{
    size_t size = (s->mask + 1) * 2;
    struct pm_sym_slot *slot = calloc(size, sizeof *slot);
    if (!slot)
        return -1;
    for (size_t i = 0; i <= s->mask; i++) {
        if (!s->slot[i].used)
            continue;
        size_t h = pm_slot_hash(s->slot[i].module, s->slot[i].offset) & (size - 1);
        while (slot[h].used)
            h = (h + 1) & (size - 1);
        slot[h] = s->slot[i];
    }
    free(s->slot);
    s->slot = slot;
    s->mask = size - 1;
    return 0;
}

const struct pm_symbol *pm_symbolize(struct pm_symbols *s, int32_t module, uint64_t offset)
{
    static const struct pm_symbol none = {NULL, NULL, NULL, 0, "[unknown]"};
    if ((s->used + 1) * 2 > s->mask + 1 && pm_cache_grow(s) != 0)
        return &none;
    size_t h = pm_slot_hash(module, offset) & s->mask;
    for (; s->slot[h].used; h = (h + 1) & s->mask)
        if (s->slot[h].module == module && s->slot[h].offset == offset)
            return &s->slot[h].sym;
    struct pm_sym_slot *slot = &s->slot[h];
    *slot = (struct pm_sym_slot){.module = module, .offset = offset, .used = 1};
    s->used++;
    struct pm_symbol *sym = &slot->sym;
    if (module < 0 || (size_t)module >= s->n) {
        /* Upper half: the kernel (x86-64 and arm64 alike); all ones: the
         * sites a thread had beyond PERFMARK_SAMPLE_MAX_SITES. */
        sym->object = offset == UINT64_MAX      ? "[sites beyond the limit]"
                      : offset >= (1ull << 63) ? "[kernel]"
                                               : "[unknown]";
        return sym;
    }
    struct pm_object *o = &s->obj[module];
    sym->object = o->base;
    if (!o->tried)
        pm_object_open(s, o);
#ifdef PM_HAVE_LIBDW
    if (o->mod)
        pm_lookup(s, o, offset, sym);
#endif
    return sym;
}
