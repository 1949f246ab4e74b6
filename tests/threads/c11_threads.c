/* C11 thrd_create workers that call no marker (glibc's thrd_create starts
 * them past any pthread_create interposer): worker k touches k * PAGES
 * pages and prints
 *   worker K tid TID pages P cputime_ns 0
 * usage: c11_threads N PAGES. Exit status 3. */
#define _GNU_SOURCE
#include <perfmark.h>
#include <stdio.h>
#include <stdlib.h>
#include <threads.h>
#include <unistd.h>

static long pages_each;

static int worker(void *arg)
{
    long k = (long)arg, pages = k * pages_each, page = sysconf(_SC_PAGESIZE);
    char *mem = malloc((size_t)(pages * page));
    for (long i = 0; mem && i < pages; i++)
        mem[i * page] = 1;
    printf("worker %ld tid %d pages %ld cputime_ns 0\n", k, (int)gettid(), pages);
    fflush(stdout);
    free(mem);
    return 0;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 3;
    pages_each = argc > 2 ? atol(argv[2]) : 1000;
    perfmark_region_begin("main_region");
    thrd_t th[64];
    for (long i = 0; i < n && i < 64; i++)
        thrd_create(&th[i], worker, (void *)(i + 1));
    for (long i = 0; i < n && i < 64; i++)
        thrd_join(th[i], NULL);
    perfmark_region_end("main_region");
    return 3;
}
