/* The parts of the mpi_calls test program (see mpi_calls.c). */
#ifndef MPI_CALLS_H
#define MPI_CALLS_H

/* Records a wrong result: the program then says WRONG and exits 1. */
void expect(int cond, int rank, const char *what);

void more_p2p(int rank, int size);
void completion(int rank, int size);
void more_collectives(int rank, int size);
void one_sided(int rank, int size);
void more_io(int rank);

#endif
