#include "pm_auto.h"
#include "pm_session.h"

#include <errno.h>

__attribute__((visibility("default"))) __thread int pm_mpi_depth
    __attribute__((tls_model("initial-exec")));

int32_t pm_auto_region(const char *name, enum pm_kind kind)
{
    return pm_name_intern_kind(name, kind, NULL);
}

int32_t pm_auto_poll_region(const char *name, enum pm_kind kind)
{
    return pm_name_intern_poll(name, kind);
}

int pm_auto_enter(int32_t region)
{
    struct pm_thread *t = pm_session_thread();
    return t && region >= 0 ? pm_thread_enter(t, region) : -1;
}

int pm_auto_exit(int32_t region, int64_t bytes)
{
    struct pm_thread *t = pm_self;
    return t ? pm_thread_exit_bytes(t, region, bytes) : -1;
}

void *pm_auto_thread_prepare(const struct pm_thread_birth *birth)
{
    struct pm_thread *t = pm_session_thread_prepare();
    if (t)
        t->birth = *birth;
    return t;
}

void pm_auto_thread_born(void *prepared, struct pm_thread_birth *birth)
{
    struct pm_thread *t = prepared;
    *birth = t->birth;  /* before the session may free it */
    pm_session_thread_born(t);
}

void pm_auto_thread_unborn(void *prepared)
{
    int saved = errno;  /* the application's, whatever freeing does */
    pm_session_thread_unborn(prepared);
    errno = saved;
}

int pm_auto_place(int32_t region)
{
    struct pm_thread *t = pm_session_thread();
    return t && region >= 0 ? pm_thread_place(t, region) : -1;
}

int pm_auto_unplace(void)
{
    struct pm_thread *t = pm_self;
    return t ? pm_thread_unplace(t) : -1;
}

int32_t pm_auto_path(int32_t *regions, int32_t max)
{
    struct pm_thread *t = pm_session_thread();
    return t ? pm_thread_path(t, regions, max) : -1;
}

void pm_auto_mpi_init(int rank, int size) { pm_session_set_rank(rank, size); }

int pm_auto_wants_local_rank(void) { return pm_session_wants_local_rank(); }

void pm_auto_mpi_local(int local_rank, int local_size)
{
    pm_session_set_local(local_rank, local_size);
}

int pm_auto_wants_node(void) { return pm_session_wants_node(); }

void pm_auto_mpi_node(int local_rank, const int *pids, int n)
{
    pm_session_set_node(local_rank, pids, n);
}

void pm_auto_mpi_finalize(struct pm_comm *job) { pm_session_finalize(job); }

void pm_auto_mpi_abort(void) { pm_session_finalize_partial(); }

void pm_auto_mpi_library(const char *abi, const char *what, const char *problem)
{
    pm_session_set_mpi(abi, what, problem);
}

void pm_auto_mpi_note(const char *text) { pm_session_mpi_note(text); }

void pm_auto_gomp_active(void) { pm_session_set_openmp_gomp(); }

void pm_auto_ompt_active(const char *runtime_version) { pm_session_set_openmp(runtime_version); }

int pm_auto_may_measure(void) { return pm_session_may_measure(); }
