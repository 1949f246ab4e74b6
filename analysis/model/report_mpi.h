#ifndef PM_REPORT_MPI_H
#define PM_REPORT_MPI_H

/* perfmark report under mpirun (report_mpi.c). pm_report_mpi_init starts
 * MPI only when a launcher's variables are set (OMPI_COMM_WORLD_SIZE,
 * PMIX_RANK, PMI_SIZE) and returns 1 then; a plain `perfmark report` never
 * initialises MPI. The cells are then shared among the ranks and rank 0 alone
 * renders; the others produce no output. pm_report_mpi_end gives every rank
 * rank 0's exit status and finalises MPI. */
int pm_report_mpi_init(void);
int pm_report_mpi_rank(void);
int pm_report_mpi_size(void);
int pm_report_mpi_all(int ok); /* 1 when ok on every rank (ok itself without MPI) */
int pm_report_mpi_end(int rc);

#endif /* PM_REPORT_MPI_H */
