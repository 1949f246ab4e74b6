/* pm_mpi — what the generated MPI wrappers (gen_mpi_wrappers.py) share:
 * bracketing one call as a region, finding the real Fortran entry points,
 * reading Fortran arguments, and the byte rules of mpi_functions.def.
 * Everything in this folder but pm_mpi_dispatch.c is compiled once per MPI
 * ABI, against that MPI's mpi.h, into libperfmark_mpi_<abi>.so.
 *
 * A wrapper brackets the real call like this (errno is the application's
 * before and after, and an MPI call made while another one is in progress
 * on the same thread, e.g. by the MPI library itself, is passed through
 * unmeasured, so a region is always one application call):
 *
 *     struct pm_mpi_call call;
 *     pm_mpi_begin(&call, &region_slot, "MPI_Send", 0);   // 1: a `poll` row
 *     rc = PMPI_Send(...);
 *     pm_mpi_returned(&call);
 *     pm_mpi_end(&call, call.on ? pm_bytes_p2p(rc, ...) : 0);
 */
#ifndef PM_MPI_H
#define PM_MPI_H

#include "pm_auto.h"
#include "job/pm_comm.h"

#include <errno.h>
#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#define PM_EXPORT __attribute__((visibility("default")))

/* What libperfmark.so lent at attach (pm_mpi_abi.h). */
extern const struct pm_mpi_host *pm_mpi_host;

/* The C lifecycle wrappers (mpi_lifecycle.c), in the generated table. */
int pm_w_MPI_Init(int *argc, char ***argv);
int pm_w_MPI_Init_thread(int *argc, char ***argv, int required, int *provided);
int pm_w_MPI_Finalize(void);
int pm_w_MPI_Abort(MPI_Comm comm, int errorcode);

/* ---- one call ------------------------------------------------------------- */

struct pm_mpi_call {
    int32_t region;
    int on;      /* the region was entered: exit it */
    int outer;   /* not nested in another MPI call on this thread */
    int err;     /* the application's errno */
};

static inline __attribute__((always_inline)) void pm_mpi_begin(struct pm_mpi_call *c, int32_t *slot, const char *name,
                                int poll)
{
    c->on = 0;
    c->outer = pm_mpi_depth++ == 0;
    if (!c->outer)
        return;
    int32_t r = __atomic_load_n(slot, __ATOMIC_RELAXED);
    c->region = r;
    /* A poll after its warm-up is only counted, inline, with nothing to
     * exit; that path never touches errno, the others save it. */
    if (poll && pm_auto_poll_counted(r))
        return;
    c->err = errno;
    if (r < 0) {
        r = poll ? pm_auto_poll_region(name, PM_KIND_MPI) : pm_auto_region(name, PM_KIND_MPI);
        __atomic_store_n(slot, r, __ATOMIC_RELAXED);
        c->region = r;
    }
    c->on = pm_auto_enter(r) == 0;
    errno = c->err;
}

/* Right after the real call: keep the errno it left (only needed when the
 * region must be exited: nothing else here touches errno). */
static inline __attribute__((always_inline)) void pm_mpi_returned(struct pm_mpi_call *c)
{
    if (c->on)
        c->err = errno;
}

static inline __attribute__((always_inline)) void pm_mpi_end(struct pm_mpi_call *c, int64_t bytes)
{
    if (c->on) {
        pm_auto_exit(c->region, bytes);
        errno = c->err;
    }
    pm_mpi_depth--;
}

/* The Fortran lifecycle wrappers (the C ones are in mpi_lifecycle.c).
 * MPI is initialised: report rank and size. */
void pm_mpi_initialized(void);
/* MPI_Finalize is about to run: the runtime writes the job's data now. */
void pm_mpi_finalizing(void);
/* MPI_Abort is about to run: the runtime saves this rank's data. */
void pm_mpi_aborting(void);

/* The job's ranks for the runtime's job writer (pm_comm.h), on a private
 * duplicate of MPI_COMM_WORLD that its open makes in *storage
 * (pm_mpi_comm.c). */
void pm_mpi_comm_init(struct pm_comm *c, MPI_Comm *storage);

/* Which MPI ABI this copy of the wrappers was compiled for (CMake defines
 * it per wrapper library: "openmpi", "mpich"). */
#ifndef PM_MPI_ABI
#error "PM_MPI_ABI must name the MPI ABI this wrapper library is built for"
#endif

/* ---- Fortran ---------------------------------------------------------------- */

/* The real Fortran entry point: `pname` (the profiling name, pmpi_xxx_),
 * else `name` as the program would find it without perfmark, resolved once
 * into *slot. Aborts with one message only if neither exists. */
void *pm_f_lookup(void **slot, const char *pname, const char *name);

static inline void *pm_f_real(void **slot, const char *pname, const char *name)
{
    void *p = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
    return p ? p : pm_f_lookup(slot, pname, name);
}

/* The return code a Fortran call left in ierr (absent optional f08 ierror:
 * success, since the wrapper cannot know better). */
static inline int pm_f_rc(const MPI_Fint *ierr) { return ierr ? (int)*ierr : MPI_SUCCESS; }

/* 1 if `buf` is Fortran MPI_IN_PLACE, 0 if not, -1 if this MPI's marker
 * symbol is unknown (byte rules that depend on it then say unknown). */
int pm_f_in_place(const void *buf);

/* A Fortran status (mpif.h array or f08 TYPE(MPI_Status)) as a C status in
 * *c; MPI_STATUS_IGNORE for Fortran MPI_STATUS_IGNORE. */
const MPI_Status *pm_f_status(const MPI_Fint *f, MPI_Status *c);

/* ---- argument views for the byte rules ----------------------------------------
 * Datatypes and count arrays stay unconverted until a rule needs them, so
 * that arguments the standard calls insignificant (root-only ones at a
 * non-root) are never converted or read. */

typedef struct { MPI_Datatype c; const MPI_Fint *f; } pm_dtype;
typedef struct { const int *c; const MPI_Fint *f; } pm_counts;

#define PM_DT_C(x) ((pm_dtype){(x), NULL})
#define PM_DT_F(x) ((pm_dtype){MPI_DATATYPE_NULL, (x)})
#define PM_COUNTS_C(x) ((pm_counts){(x), NULL})
#define PM_COUNTS_F(x) ((pm_counts){NULL, (x)})
#define PM_IN_PLACE_C(x) ((x) == MPI_IN_PLACE)

/* ---- byte rules (mpi_functions.def explains each) ------------------------------
 * Every rule returns -1 (unknown) when rc is not MPI_SUCCESS. */

int64_t pm_bytes_p2p(int rc, int peer, int count, pm_dtype t);
int64_t pm_bytes_received(int rc, const MPI_Status *status, pm_dtype t);
int64_t pm_bytes_count(int rc, int count, pm_dtype t);
int64_t pm_bytes_sendrecv(int rc, int dest, int sendcount, pm_dtype st,
                          const MPI_Status *status, pm_dtype rt);
int64_t pm_bytes_coll(int rc, MPI_Comm comm, int count, pm_dtype t);
int64_t pm_bytes_alltoall(int rc, MPI_Comm comm, int in_place, int sc, pm_dtype st, int rcount,
                          pm_dtype rt);
int64_t pm_bytes_alltoallv(int rc, MPI_Comm comm, int in_place, pm_counts scs, pm_dtype st,
                           pm_counts rcs, pm_dtype rt);
int64_t pm_bytes_allgather(int rc, MPI_Comm comm, int in_place, int sc, pm_dtype st, int rcount,
                           pm_dtype rt);
int64_t pm_bytes_allgatherv(int rc, MPI_Comm comm, int in_place, int sc, pm_dtype st,
                            pm_counts rcs, pm_dtype rt);
int64_t pm_bytes_gather(int rc, MPI_Comm comm, int root, int in_place, int sc, pm_dtype st,
                        int rcount, pm_dtype rt);
int64_t pm_bytes_gatherv(int rc, MPI_Comm comm, int root, int in_place, int sc, pm_dtype st,
                         pm_counts rcs, pm_dtype rt);
int64_t pm_bytes_scatter(int rc, MPI_Comm comm, int root, int sc, pm_dtype st, int rcount,
                         pm_dtype rt);
int64_t pm_bytes_scatterv(int rc, MPI_Comm comm, int root, pm_counts scs, pm_dtype st,
                          int rcount, pm_dtype rt);
int64_t pm_bytes_reduce_scatter(int rc, MPI_Comm comm, pm_counts rcs, pm_dtype t);
int64_t pm_bytes_reduce_scatter_block(int rc, MPI_Comm comm, int rcount, pm_dtype t);

#endif
