/* pm_exec — exec() replaces the program image and with it everything
 * measured and not yet written: no destructor runs. The exec family is
 * interposed so that a measured process writes its file first (regions open
 * at the exec are closed there, UNBALANCED); the new image is a new program
 * and is measured, if at all, as its own run.
 *
 * Never break the exec: arguments, environment, errno and the return value
 * are the real call's. Writing stops the measurement, so the file is written
 * only when the exec can be expected to succeed (the file exists, is
 * executable; for the PATH-searching forms, some PATH entry is); an exec
 * that fails anyway (bad format, E2BIG, ...) leaves the rest of the process
 * unmeasured, with a message, but loses nothing already collected.
 *
 * Everything here is async-signal-safe up to the write (exec is allowed in
 * a signal handler and in a vfork child): no malloc; the real functions are
 * looked up once at load. */
#define _GNU_SOURCE
#include "pm_log.h"
#include "pm_session.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PM_PUBLIC __attribute__((visibility("default")))

typedef int (*pm_execve_fn)(const char *, char *const[], char *const[]);
typedef int (*pm_execvp_fn)(const char *, char *const[]);
typedef int (*pm_fexecve_fn)(int, char *const[], char *const[]);

static pm_execve_fn pm_real_execve, pm_real_execvpe;
static pm_execvp_fn pm_real_execvp;
static pm_fexecve_fn pm_real_fexecve;

__attribute__((constructor)) static void pm_exec_resolve(void)
{
    pm_real_execve = (pm_execve_fn)dlsym(RTLD_NEXT, "execve");
    pm_real_execvpe = (pm_execve_fn)dlsym(RTLD_NEXT, "execvpe");
    pm_real_execvp = (pm_execvp_fn)dlsym(RTLD_NEXT, "execvp");
    pm_real_fexecve = (pm_fexecve_fn)dlsym(RTLD_NEXT, "fexecve");
}

/* An exec from another library's constructor can come before ours ran. */
static void pm_exec_ready(void)
{
    if (!pm_real_execve || !pm_real_execvp || !pm_real_execvpe || !pm_real_fexecve)
        pm_exec_resolve();
}

static int pm_runnable(const char *path)
{
    struct stat st;
    return access(path, X_OK) == 0 && stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* As execvp searches: a name with '/' is a path, else each PATH entry. */
static int pm_runnable_search(const char *file)
{
    if (!*file)
        return 0;
    if (strchr(file, '/'))
        return pm_runnable(file);
    const char *path = getenv("PATH");
    if (!path)
        path = "/bin:/usr/bin";
    size_t flen = strlen(file);
    while (1) {
        const char *end = strchr(path, ':');
        size_t dlen = end ? (size_t)(end - path) : strlen(path);
        char full[4096];
        if (dlen + flen + 2 <= sizeof full) {
            if (dlen == 0) {  /* an empty entry is the current directory */
                memcpy(full, file, flen + 1);
            } else {
                memcpy(full, path, dlen);
                full[dlen] = '/';
                memcpy(full + dlen + 1, file, flen + 1);
            }
            if (pm_runnable(full))
                return 1;
        }
        if (!end)
            return 0;
        path = end + 1;
    }
}

/* 1 if the file was written (the measurement has stopped). */
static int pm_exec_prepare(const char *what)
{
    int saved = errno;
    int wrote = pm_session_before_exec(what);
    errno = saved;
    return wrote;
}

static int pm_exec_failed(int rc, int wrote, const char *what)
{
    if (wrote) {
        int saved = errno;
        pm_msg(PM_MSG_ONCE, "exec of %.200s failed (%s) after perfmark had written this "
               "process's file: the rest of the process is not measured", what, strerror(saved));
        errno = saved;
    }
    return rc;
}

PM_PUBLIC int execve(const char *path, char *const argv[], char *const envp[])
{
    pm_exec_ready();
    int wrote = pm_state == PM_ON && pm_runnable(path) ? pm_exec_prepare(path) : 0;
    return pm_exec_failed(pm_real_execve(path, argv, envp), wrote, path);
}

PM_PUBLIC int execv(const char *path, char *const argv[])
{
    return execve(path, argv, environ);
}

PM_PUBLIC int execvpe(const char *file, char *const argv[], char *const envp[])
{
    pm_exec_ready();
    int wrote = pm_state == PM_ON && pm_runnable_search(file) ? pm_exec_prepare(file) : 0;
    return pm_exec_failed(pm_real_execvpe(file, argv, envp), wrote, file);
}

PM_PUBLIC int execvp(const char *file, char *const argv[])
{
    pm_exec_ready();
    int wrote = pm_state == PM_ON && pm_runnable_search(file) ? pm_exec_prepare(file) : 0;
    return pm_exec_failed(pm_real_execvp(file, argv), wrote, file);
}

PM_PUBLIC int fexecve(int fd, char *const argv[], char *const envp[])
{
    pm_exec_ready();
    struct stat st;
    int wrote = pm_state == PM_ON && fstat(fd, &st) == 0 && S_ISREG(st.st_mode)
                    ? pm_exec_prepare("(a file descriptor)") : 0;
    return pm_exec_failed(pm_real_fexecve(fd, argv, envp), wrote, "(a file descriptor)");
}

/* The list forms: the arguments into an array on the stack (no malloc),
 * then the vector form above. arg0 is not NULL, as glibc also assumes. */
static size_t pm_count_args(const char *arg0, va_list ap)
{
    size_t n = 1;
    va_list copy;
    va_copy(copy, ap);
    while (va_arg(copy, const char *))
        n++;
    va_end(copy);
    return n;
}

#define PM_COLLECT(argv, arg0, ap, n)                \
    do {                                             \
        argv[0] = (char *)(arg0);                    \
        for (size_t k = 1; k < (n); k++)             \
            argv[k] = va_arg(ap, char *);            \
        argv[n] = NULL;                              \
        (void)va_arg(ap, char *); /* the NULL */     \
    } while (0)

PM_PUBLIC int execl(const char *path, const char *arg0, ...)
{
    va_list ap;
    va_start(ap, arg0);
    size_t n = pm_count_args(arg0, ap);
    char *argv[n + 1];
    PM_COLLECT(argv, arg0, ap, n);
    va_end(ap);
    return execve(path, argv, environ);
}

PM_PUBLIC int execlp(const char *file, const char *arg0, ...)
{
    va_list ap;
    va_start(ap, arg0);
    size_t n = pm_count_args(arg0, ap);
    char *argv[n + 1];
    PM_COLLECT(argv, arg0, ap, n);
    va_end(ap);
    return execvp(file, argv);
}

PM_PUBLIC int execle(const char *path, const char *arg0, ...)
{
    va_list ap;
    va_start(ap, arg0);
    size_t n = pm_count_args(arg0, ap);
    char *argv[n + 1];
    PM_COLLECT(argv, arg0, ap, n);
    char *const *envp = va_arg(ap, char *const *);
    va_end(ap);
    return execve(path, argv, envp);
}
