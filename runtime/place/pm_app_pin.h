/* pm_app_pin — for perfmark's own shims: the application pins the calling
 * thread itself (LIKWID's likwid_pinThread, likwid_pinProcess). The binding
 * goes through perfmark's hwloc topology (pm_pin_self_to) and is recorded:
 * the thread's /threads binding becomes the new one, and the file's
 * `pinning` sentence counts the application's bindings.
 *
 * Exported from libperfmark.so but no part of the public API (perfmark.h):
 * a shim declares it weak, so that an older libperfmark.so only means the
 * shim binds by itself, never a failed symbol lookup. Works whether or not
 * the process is measured: the application's pinning must happen anyway. */
#ifndef PM_APP_PIN_H
#define PM_APP_PIN_H

/* 0, or -1 with errno. */
int pm_app_pin_self(int cpu);

#endif
