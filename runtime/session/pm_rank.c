#include "pm_rank.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Launcher variables, most specific first. `needs`: only trust the row if
 * this variable exists too (SLURM_PROCID is also set in a batch script). */
static const struct pm_launcher_vars {
    const char *rank, *size, *local_rank, *local_size, *needs;
} pm_launcher_vars[] = {
    {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK",
     "OMPI_COMM_WORLD_LOCAL_SIZE", NULL},
    {"PMIX_RANK", NULL, NULL, NULL, NULL},
    {"PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", "MPI_LOCALNRANKS", NULL},
    {"MV2_COMM_WORLD_RANK", "MV2_COMM_WORLD_SIZE", "MV2_COMM_WORLD_LOCAL_RANK",
     "MV2_COMM_WORLD_LOCAL_SIZE", NULL},
    {"SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", NULL, "SLURM_STEP_ID"},
    {"PALS_RANKID", NULL, "PALS_LOCAL_RANKID", NULL, NULL},
};

/* Variables naming the job, for shared file names across ranks. */
static const char *const pm_job_vars[] = {
    "SLURM_JOB_ID", "PBS_JOBID", "LSB_JOBID", "PMIX_NAMESPACE", "OMPI_MCA_ess_base_jobid",
};

/* Programs that start ranks. */
static const char *const pm_launchers[] = {
    "orterun", "mpirun", "mpiexec", "orted", "prted", "prterun", "prte",
    "hydra_pmi_proxy", "mpiexec.hydra", "srun", "slurmstepd", "aprun", "jsrun",
    "flux-broker", NULL,
};

/* Programs that run one other program and are not the application. */
static const char *const pm_wrappers[] = {
    "timeout", "env", "nohup", "time", "taskset", "numactl", "stdbuf", "setsid",
    "chrt", "nice", "ionice", "perfmark", NULL,
};

/* Shells: they may run many commands; the one that is the rank is unknown. */
static const char *const pm_shells[] = {
    "bash", "sh", "dash", "zsh", "ksh", "mksh", "tcsh", "csh", "fish", "busybox", NULL,
};

static int pm_in_list(const char *name, const char *const *list)
{
    for (int i = 0; list[i]; i++)
        if (strcmp(name, list[i]) == 0)
            return 1;
    return 0;
}

static int pm_env_int(const char *name, int *out)
{
    const char *v = name ? getenv(name) : NULL;
    if (!v || !*v)
        return 0;
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (errno || *end || x < 0 || x > INT_MAX)
        return 0;
    *out = (int)x;
    return 1;
}

int pm_rank_from_env(struct pm_rank_info *info)
{
    int saved = errno;
    memset(info, 0, sizeof *info);
    info->rank = info->size = info->local_rank = info->local_size = -1;
    for (size_t i = 0; i < sizeof pm_job_vars / sizeof *pm_job_vars; i++) {
        const char *job = getenv(pm_job_vars[i]);
        if (job && *job && strlen(job) < sizeof info->job && !strpbrk(job, "/ \t\n")) {
            snprintf(info->job, sizeof info->job, "%s", job);
            break;
        }
    }
    int found = 0;
    for (size_t i = 0; i < sizeof pm_launcher_vars / sizeof *pm_launcher_vars && !found; i++) {
        const struct pm_launcher_vars *v = &pm_launcher_vars[i];
        if (v->needs && !getenv(v->needs))
            continue;
        if (!pm_env_int(v->rank, &info->rank))
            continue;
        pm_env_int(v->size, &info->size);
        pm_env_int(v->local_rank, &info->local_rank);
        pm_env_int(v->local_size, &info->local_size);
        snprintf(info->source, sizeof info->source, "%s", v->rank);
        found = 1;
    }
    errno = saved;
    return found;
}

/* Basename of /proc/PID/exe, "" if unreadable. */
static void pm_exe_name(pid_t pid, char *out, size_t len)
{
    char link[64], path[PATH_MAX];
    snprintf(link, sizeof link, "/proc/%ld/exe", pid ? (long)pid : (long)getpid());
    ssize_t n = readlink(link, path, sizeof path - 1);
    out[0] = '\0';
    if (n <= 0)
        return;
    path[n] = '\0';
    const char *base = strrchr(path, '/');
    snprintf(out, len, "%s", base ? base + 1 : path);
}

static pid_t pm_parent_of(pid_t pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    /* "pid (comm) state ppid": comm may contain spaces and parentheses */
    const char *close = strrchr(buf, ')');
    long ppid = 0;
    if (!close || sscanf(close + 1, " %*c %ld", &ppid) != 1)
        return 0;
    return (pid_t)ppid;
}

int pm_exe_is_tool(pid_t pid)
{
    char name[256];
    pm_exe_name(pid, name, sizeof name);
    return pm_in_list(name, pm_launchers) || pm_in_list(name, pm_wrappers) ||
           pm_in_list(name, pm_shells);
}

enum pm_proc_role pm_proc_role(const struct pm_rank_info *info)
{
    int saved = errno;
    enum pm_proc_role role = PM_ROLE_OTHER;
    char name[256];
    if (pm_exe_is_tool(0)) {
        role = PM_ROLE_TOOL;
    } else if (info->rank >= 0) {
        /* Walk up through wrappers: a launcher above them makes us the rank. */
        pid_t p = getppid();
        for (int depth = 0; depth < 8 && p > 1; depth++) {
            pm_exe_name(p, name, sizeof name);
            if (pm_in_list(name, pm_launchers)) {
                role = PM_ROLE_RANK;
                break;
            }
            if (!pm_in_list(name, pm_wrappers))
                break;
            p = pm_parent_of(p);
        }
    }
    errno = saved;
    return role;
}
