/* An MPI program with ground truth by construction: rank r touches
 * (r+1) x PAGES fresh pages in region "touch", then all ranks meet in an
 * Allreduce inside region "comm". Mode "spawn" also runs helper processes
 * (system(), a shell) that must not be measured.
 * usage: mpi_app PAGES [spawn] */
#include <mpi.h>
#include <perfmark.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long pages = (argc > 1 ? atol(argv[1]) : 1000) * (rank + 1);
    long psz = sysconf(_SC_PAGESIZE);

    char *p = mmap(NULL, (size_t)(pages * psz), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    madvise(p, (size_t)(pages * psz), MADV_NOHUGEPAGE);
    perfmark_region_begin("touch");
    for (long i = 0; i < pages; i++)
        p[i * psz] = 1;
    perfmark_region_end("touch");

    if (argc > 2 && strcmp(argv[2], "spawn") == 0) {
        if (system("/bin/true && ls / > /dev/null") != 0)
            fprintf(stderr, "mpi_app: helper failed\n");
    }

    long local = pages, total = 0;
    perfmark_region_begin("comm");
    MPI_Allreduce(&local, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    perfmark_region_end("comm");
    printf("mpi_app rank %d of %d: %ld pages, %ld in all\n", rank, size, pages, total);
    munmap(p, (size_t)(pages * psz));
    MPI_Finalize();
    return 0;
}
