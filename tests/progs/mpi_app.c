/* An MPI program with ground truth by construction: rank r touches
 * (r+1) x PAGES fresh pages in region "touch", then all ranks meet in an
 * Allreduce inside region "comm". Mode "spawn" also runs helper processes
 * (system(), a shell) that must not be measured. Mode "uneven": rank r
 * starts r threads that each touch PAGES pages in region "worker", and only
 * even ranks enter "even_only", only odd ranks "odd_only".
 * Mode "abort": rank 1 calls MPI_Abort(7) after its regions; mode "die":
 * rank 1 kills itself with SIGKILL (the others wait in the Allreduce).
 * usage: mpi_app PAGES [spawn|uneven|abort|die] */
#include <mpi.h>
#include <perfmark.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>


static void touch_pages(long pages, const char *region)
{
    long psz = sysconf(_SC_PAGESIZE);
    char *p = mmap(NULL, (size_t)(pages * psz), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    madvise(p, (size_t)(pages * psz), MADV_NOHUGEPAGE);
    perfmark_region_begin(region);
    for (long i = 0; i < pages; i++)
        p[i * psz] = 1;
    perfmark_region_end(region);
    munmap(p, (size_t)(pages * psz));
}

static long worker_pages;

static void *worker(void *arg)
{
    touch_pages(worker_pages, "worker");
    return arg;
}

static void uneven(int rank, long pages)
{
    pthread_t th[16];
    worker_pages = pages;
    for (int i = 0; i < rank && i < 16; i++)
        pthread_create(&th[i], NULL, worker, NULL);
    for (int i = 0; i < rank && i < 16; i++)
        pthread_join(th[i], NULL);
    perfmark_region_begin(rank % 2 ? "odd_only" : "even_only");
    perfmark_region_end(rank % 2 ? "odd_only" : "even_only");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long base = argc > 1 ? atol(argv[1]) : 1000;
    long pages = base * (rank + 1);
    touch_pages(pages, "touch");
    if (argc > 2 && strcmp(argv[2], "uneven") == 0)
        uneven(rank, base);
    if (argc > 2 && strcmp(argv[2], "abort") == 0 && rank == 1) {
        sleep(1);  /* let the others reach the Allreduce */
        MPI_Abort(MPI_COMM_WORLD, 7);
    }
    if (argc > 2 && strcmp(argv[2], "die") == 0 && rank == 1) {
        sleep(1);
        raise(SIGKILL);
    }

    if (argc > 2 && strcmp(argv[2], "spawn") == 0) {
        if (system("/bin/true && ls / > /dev/null") != 0)
            fprintf(stderr, "mpi_app: helper failed\n");
    }

    long local = pages, total = 0;
    perfmark_region_begin("comm");
    MPI_Allreduce(&local, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    perfmark_region_end("comm");
    printf("mpi_app rank %d of %d: %ld pages, %ld in all\n", rank, size, pages, total);
    MPI_Finalize();
    return 0;
}
