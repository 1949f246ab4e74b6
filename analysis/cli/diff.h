/*
 * diff.h — `perfmark diff A.h5 B.h5`: the change from run A to run B per
 * region and metric, and a regression check for CI pipelines.
 */
#ifndef PM_DIFF_H
#define PM_DIFF_H

/* The command's help text (perfmark diff --help). */
extern const char pm_diff_usage[];

/* Run the command; argv[0] is "diff". Returns the exit status: 0 = no
 * regression beyond the threshold (or none asked for), 1 = a regression,
 * 2 = usage or file error (one message on stderr). */
int pm_diff_main(int argc, char **argv);

#endif /* PM_DIFF_H */
