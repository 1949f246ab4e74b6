/* pm_srcline — the function, source file and line of a code address, from
 * the symbol table and DWARF line tables of the object holding it (elfutils
 * libdwfl), for naming automatic regions "function at file.c:LINE".
 *
 * libdw is opened with dlopen on the first call, never at load time: the
 * preloaded library stays as light as before for programs that never need
 * a name, and a machine without libdw (or a binary without -g) simply gets
 * no line. Not for hot paths: the first lookup in an object reads its line
 * table (milliseconds). Callers serialise (not thread-safe). */
#ifndef PM_SRCLINE_H
#define PM_SRCLINE_H

#include <stddef.h>

/* 0 with the name of the function holding `addr` (from .symtab where the
 * object has one, else its dynamic symbols) and addr's offset into it; -1
 * when no function symbol covers it (a stripped object). */
int pm_srcsym(const void *addr, char *name, size_t len, size_t *offset);

/* 0 with the file's base name and the line of `addr`, -1 when unknown. */
int pm_srcline(const void *addr, char *file, size_t len, int *line);

#endif
