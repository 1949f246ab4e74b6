/*
 * run.h — `perfmark run`, and what the small `perfmark` program (front.c)
 * shares with the commands in libperfmark_cli.so (perfmark.c).
 */
#ifndef PM_CLI_RUN_H
#define PM_CLI_RUN_H

#include <stddef.h>

/* The command's help text (perfmark run --help). */
extern const char pm_usage_run[];

/* Does argv ask for help (--help or -h before any "--")? */
int pm_cli_wants_help(int argc, char **argv);

/* Run the command; argv[0] is "run". Returns only on failure (exec'd
 * otherwise): 2 on a usage or output-directory error, 126/127 when the
 * program cannot be run. */
int pm_cmd_run(int argc, char **argv);

#endif /* PM_CLI_RUN_H */
