/* find.h — perfmark's own files (libraries, programs), found relative to
 * the running program. */
#ifndef PM_CLI_FIND_H
#define PM_CLI_FIND_H

#include <stddef.h>

/* NAME in the first of `dirs` (relative to this program's directory) where
 * access(mode) allows it: its real path in `out`, 0; -1 when in none. */
int pm_cli_find(const char *name, const char *const *dirs, size_t ndirs, int mode, char *out,
                size_t len);

/* NAME, one of perfmark's libraries, found relative to this program (the
 * build tree's lib/, or the install's libdir): its real path in `out`, 0;
 * -1 when not found. */
int pm_cli_find_library(const char *name, char *out, size_t len);

/* NAME, a program of perfmark's (perfmark-attach, perfmark-hooks): beside
 * this program, or in the install's libexecdir/perfmark; its real path in
 * `out`, 0; -1 when not found. */
int pm_cli_find_program(const char *name, char *out, size_t len);

#endif /* PM_CLI_FIND_H */
