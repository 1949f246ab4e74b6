/* pm_rank — who is this process in the job?
 *
 * Before MPI_Init the only witnesses are the variables launchers set
 * (OMPI_COMM_WORLD_RANK, PMI_RANK, SLURM_PROCID, ...) and the process tree.
 * Launcher variables are inherited by everything a rank starts, so a
 * process counts as a rank only if its parent (seen through transparent
 * wrappers such as timeout or taskset) is a launcher. Launchers, wrappers
 * and shells are never measured, even when LD_PRELOAD reaches them. */
#ifndef PM_RANK_H
#define PM_RANK_H

#include <sys/types.h>

enum pm_proc_role {
    PM_ROLE_OTHER = 0,   /* may be measured if it calls a marker */
    PM_ROLE_RANK,        /* an MPI rank started by a launcher: measured from the start */
    PM_ROLE_TOOL,        /* launcher, wrapper or shell: never measured */
};

struct pm_rank_info {
    int rank, size;             /* -1 when unknown */
    int local_rank, local_size;
    char source[48];            /* the variable the rank came from */
    char job[64];               /* job id for file names, "" if none */
};

/* Rank variables from the environment; 1 if any launcher set them. */
int pm_rank_from_env(struct pm_rank_info *info);
/* What this process is (see above). */
enum pm_proc_role pm_proc_role(const struct pm_rank_info *info);
/* 1 if the executable of `pid` (0: self) is a launcher, wrapper or shell. */
int pm_exe_is_tool(pid_t pid);

#endif
