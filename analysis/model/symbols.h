/*
 * symbols.h — names for sampled instructions, found offline: the function
 * (the innermost inlined one where the instruction is inlined code, and the
 * function it is inlined in), the source file and line, from the object the
 * sample fell in.
 *
 * The object is the file at the recorded path if its GNU build-id is the
 * recorded one, else a file of that build-id under PERFMARK_SYMBOL_PATH
 * (directories: NAME by the object's base name, or .build-id/xx/rest[.debug])
 * or /usr/lib/debug/.build-id. Debug information comes from the object or
 * its separate debug file (elfutils' standard search). An object that
 * cannot be found, or whose build-id differs (rebuilt since the run), is
 * never used: its instructions keep "object+0xOFFSET", and the reason is
 * said once (pm_symbols_notes). Why elfutils: libdwfl reads .symtab (static
 * functions of binaries without -g), DWARF lines and inline scopes, and
 * finds separate debug files by build-id, which libbacktrace cannot do for
 * a file other than the running program.
 */
#ifndef PM_SYMBOLS_H
#define PM_SYMBOLS_H

#include "h5read.h"

#include <stddef.h>
#include <stdint.h>

struct pm_symbol {
    const char *function;   /* innermost source function, or NULL (no symbol) */
    const char *inlined_in; /* the function it is inlined in, or NULL */
    const char *file;       /* source file, or NULL */
    int line;               /* 0 when unknown */
    const char *object;     /* the object's base name; "[kernel]", "[unknown]" */
};

struct pm_symbols;

/* The file's objects, opened lazily as their instructions are asked for. */
struct pm_symbols *pm_symbols_new(const struct pm_file_module *modules, size_t n);
void pm_symbols_free(struct pm_symbols *s);

/* The names at (module, offset) of a /samples/hits row (module -1: an
 * address in no object). Never NULL; the struct is valid until the next
 * call, its strings as long as s. */
const struct pm_symbol *pm_symbolize(struct pm_symbols *s, int32_t module, uint64_t offset);

/* "object+0x1a2b": where a symbol has no function name. */
void pm_symbol_place(const struct pm_symbol *sym, uint64_t offset, char *buf, size_t len);

/* A frame's name as the profile shows it: the function, "[kernel]" (or
 * the object) for an address in no object, else "object+0xOFFSET". */
void pm_symbol_label(const struct pm_symbol *sym, int32_t module, uint64_t offset, char *buf,
                     size_t len);

/* Sentences about objects that could not be used (missing, other build-id,
 * no symbols), one per object, in the order met; n of them. */
const char *const *pm_symbols_notes(const struct pm_symbols *s, size_t *n);

/* 1 if this build can read objects at all (elfutils was found). */
int pm_symbols_available(void);

#endif
