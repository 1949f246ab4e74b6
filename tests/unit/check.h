/* Minimal assertion helpers for the C unit tests: report file:line and
 * keep going, exit status says whether anything failed. */
#ifndef PM_TEST_CHECK_H
#define PM_TEST_CHECK_H

#include <stdio.h>

static int pm_test_failures;

#define CHECK(cond, ...)                                                      \
    do {                                                                      \
        if (!(cond)) {                                                        \
            pm_test_failures++;                                               \
            fprintf(stderr, "%s:%d: FAILED: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                     \
            fputc('\n', stderr);                                              \
        }                                                                     \
    } while (0)

#define TEST_DONE(name)                                                        \
    (printf("%s: %s\n", name, pm_test_failures ? "FAILED" : "ok"),             \
     pm_test_failures ? 1 : 0)

#endif
