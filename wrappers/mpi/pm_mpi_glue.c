/* What the generated MPI wrappers share beyond the hot path: the runtime
 * calls of the Fortran lifecycle wrappers (MPI_Init, MPI_Finalize,
 * MPI_Abort), the real Fortran entry points and the Fortran sentinels
 * (MPI_IN_PLACE, MPI_STATUS_IGNORE). */
#define _GNU_SOURCE
#include "pm_mpi.h"
#include "pm_mpi_abi.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

void pm_mpi_initialized(void)
{
    int err = errno, init = 0, fin = 1, rank, size;
    if (PMPI_Initialized(&init) == MPI_SUCCESS && init &&
        PMPI_Finalized(&fin) == MPI_SUCCESS && !fin &&
        PMPI_Comm_rank(MPI_COMM_WORLD, &rank) == MPI_SUCCESS &&
        PMPI_Comm_size(MPI_COMM_WORLD, &size) == MPI_SUCCESS)
        pm_auto_mpi_init(rank, size);
    MPI_Comm node;
    int local, nlocal, want_local = pm_auto_wants_local_rank(), want_node = pm_auto_wants_node();
    /* Collective: every rank of the job decides the same (the same
     * environment), or none splits. */
    if (init && !fin && (want_local || want_node) &&
        PMPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) ==
            MPI_SUCCESS) {
        if (PMPI_Comm_rank(node, &local) == MPI_SUCCESS &&
            PMPI_Comm_size(node, &nlocal) == MPI_SUCCESS) {
            if (want_local)
                pm_auto_mpi_local(local, nlocal);
            int me = (int)getpid(), *pids = want_node ? calloc((size_t)nlocal, sizeof *pids) : NULL;
            if (want_node && pids &&
                PMPI_Allgather(&me, 1, MPI_INT, pids, 1, MPI_INT, node) == MPI_SUCCESS)
                pm_auto_mpi_node(local, pids, nlocal);
            free(pids);
        }
        PMPI_Comm_free(&node);
    }
    errno = err;
}

void pm_mpi_finalizing(void)
{
    int err = errno;
    MPI_Comm storage;
    struct pm_comm job;
    pm_mpi_comm_init(&job, &storage);
    pm_auto_mpi_finalize(&job);
    errno = err;
}

void pm_mpi_aborting(void)
{
    int err = errno;
    pm_auto_mpi_abort();
    errno = err;
}

/* A Fortran wrapper is only reached from code that links the MPI Fortran
 * library, so the real entry point exists; should it not, there is nothing
 * to call and nothing sensible to return. */
void *pm_f_lookup(void **slot, const char *pname, const char *name)
{
    int err = errno;
    /* libperfmark.so defines no pmpi_ name: the MPI's own is the only one. */
    void *p = dlsym(RTLD_DEFAULT, pname);
    if (!p && pm_mpi_host)
        p = pm_mpi_host->next(name);
    if (!p) {
        fprintf(stderr, "perfmark: %s was called but neither %s nor another %s can be "
                "found in this process: nothing to call, aborting\n", name, pname, name);
        abort();
    }
    __atomic_store_n(slot, p, __ATOMIC_RELEASE);
    errno = err;
    return p;
}

/* Fortran MPI_IN_PLACE and MPI_STATUS_IGNORE are the addresses of variables
 * the MPI library exports; Open MPI names them like this, in the four
 * spellings Fortran compilers produce. The process sees one copy of each
 * (the dynamic linker binds every reference to the first definition), the
 * one dlsym(RTLD_DEFAULT) returns. */
enum { PM_F_IN_PLACE, PM_F_STATUS_IGNORE, PM_F_SENTINELS };
static const char *const pm_f_names[PM_F_SENTINELS][4] = {
    {"mpi_fortran_in_place_", "mpi_fortran_in_place", "mpi_fortran_in_place__",
     "MPI_FORTRAN_IN_PLACE"},
    {"mpi_fortran_status_ignore_", "mpi_fortran_status_ignore", "mpi_fortran_status_ignore__",
     "MPI_FORTRAN_STATUS_IGNORE"},
};
static const void *pm_f_addr[PM_F_SENTINELS][4];
static int pm_f_found[PM_F_SENTINELS];
static pthread_once_t pm_f_once = PTHREAD_ONCE_INIT;

static void pm_f_find_sentinels(void)
{
    int err = errno;
    for (int s = 0; s < PM_F_SENTINELS; s++)
        for (int i = 0; i < 4; i++)
            if ((pm_f_addr[s][i] = dlsym(RTLD_DEFAULT, pm_f_names[s][i])))
                pm_f_found[s] = 1;
    errno = err;
}

/* 1: p is the sentinel, 0: it is not, -1: this MPI has no such symbol. */
static int pm_f_is(int s, const void *p)
{
    pthread_once(&pm_f_once, pm_f_find_sentinels);
    for (int i = 0; i < 4; i++)
        if (pm_f_addr[s][i] && p == pm_f_addr[s][i])
            return 1;
    return pm_f_found[s] ? 0 : -1;
}

int pm_f_in_place(const void *buf) { return pm_f_is(PM_F_IN_PLACE, buf); }

/* An f08 TYPE(MPI_Status) has the layout of the mpif.h status array in
 * Open MPI (its f08 bindings hand it to the mpif.h ones as such). */
const MPI_Status *pm_f_status(const MPI_Fint *f, MPI_Status *c)
{
    if (!f || f == MPI_F_STATUS_IGNORE || pm_f_is(PM_F_STATUS_IGNORE, f) == 1)
        return MPI_STATUS_IGNORE;
    return PMPI_Status_f2c(f, c) == MPI_SUCCESS ? c : MPI_STATUS_IGNORE;
}
