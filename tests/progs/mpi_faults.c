/* Faults in an MPI job (issue 8). Rank r touches (r+1) x PAGES fresh pages
 * in region "touch" (ground truth: that many page faults), then:
 *   wait  every rank says "ready RANK PID" and sleeps inside region
 *         "waiting" until a signal comes from outside (to one rank or to
 *         mpirun)
 *   segv  rank 1 crashes with SIGSEGV inside region "crashing" while the
 *         others wait for it in an MPI_Allreduce
 * usage: mpi_faults PAGES wait|segv */
#include <mpi.h>
#include <perfmark.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static void touch_pages(long pages)
{
    long psz = sysconf(_SC_PAGESIZE);
    char *p = mmap(NULL, (size_t)(pages * psz), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        exit(9);
    madvise(p, (size_t)(pages * psz), MADV_NOHUGEPAGE);
    perfmark_region_begin("touch");
    for (long i = 0; i < pages; i++)
        p[i * psz] = 1;
    perfmark_region_end("touch");
    munmap(p, (size_t)(pages * psz));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long base = argc > 1 ? atol(argv[1]) : 200;
    const char *mode = argc > 2 ? argv[2] : "wait";
    touch_pages(base * (rank + 1));
    if (!strcmp(mode, "wait")) {
        perfmark_region_begin("waiting");
        printf("ready %d %ld\n", rank, (long)getpid());
        fflush(stdout);
        for (int i = 0; i < 600; i++)
            usleep(100000);
        perfmark_region_end("waiting");
    } else if (!strcmp(mode, "segv") && rank == 1) {
        perfmark_region_begin("crashing");
        sleep(1);  /* the others are in the Allreduce by now */
        *(volatile int *)(long)(argc - 3) = 1;  /* argc is 3: a NULL store */
    }
    long local = rank, total = 0;
    MPI_Allreduce(&local, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    printf("mpi_faults rank %d of %d done\n", rank, size);
    MPI_Finalize();
    return 0;
}
