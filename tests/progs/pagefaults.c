/* Ground truth: each thread touches N fresh pages inside region "touch",
 * one write per page, with transparent huge pages off for the mapping, so
 * the kernel takes exactly N page faults there.
 * usage: pagefaults PAGES THREADS */
#include <perfmark.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

static long pages;

static void *touch(void *arg)
{
    long psz = sysconf(_SC_PAGESIZE);
    char *p = mmap(NULL, (size_t)(pages * psz), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        perror("mmap");
        exit(1);
    }
    madvise(p, (size_t)(pages * psz), MADV_NOHUGEPAGE);
    perfmark_region_begin("touch");
    for (long i = 0; i < pages; i++)
        p[i * psz] = 1;
    perfmark_region_end("touch");
    munmap(p, (size_t)(pages * psz));
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    pages = atol(argv[1]);
    int threads = atoi(argv[2]);
    pthread_t th[64];
    for (int i = 0; i < threads; i++)
        pthread_create(&th[i], NULL, touch, NULL);
    for (int i = 0; i < threads; i++)
        pthread_join(th[i], NULL);
    return 0;
}
