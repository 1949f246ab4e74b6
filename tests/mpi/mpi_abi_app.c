/* A program on fake_mpi_abi.c's stand-in MPI (an ABI perfmark has no
 * wrappers for): a few Allreduce calls, counted and printed, exit 3 so that
 * a changed exit status shows.
 *   mpi_abi_app: 5 MPI_Allreduce, sum 15 */
#include <stdio.h>

typedef struct pm_fake_handle *MPI_Comm, *MPI_Datatype, *MPI_Op;
int MPI_Init(int *argc, char ***argv);
int MPI_Finalize(void);
int MPI_Allreduce(const void *in, void *out, int count, MPI_Datatype type, MPI_Op op,
                  MPI_Comm comm);

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    double sum = 0;
    int calls = 0;
    for (int i = 1; i <= 5; i++) {
        double x = i, y = 0;
        MPI_Allreduce(&x, &y, 1, NULL, NULL, NULL);
        sum += y;
        calls++;
    }
    printf("mpi_abi_app: %d MPI_Allreduce, sum %g\n", calls, sum);
    MPI_Finalize();
    return 3;
}
