/* fork() inside a region. The parent's regions must be unaffected; the
 * child measures its own region "child_work" (PAGES fresh pages) with
 * reopened counters; "span", open across the fork, is LOST_GENERATION in
 * the child.  usage: forker PAGES */
#include <perfmark.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

static void touch(long pages)
{
    long psz = sysconf(_SC_PAGESIZE);
    char *p = mmap(NULL, (size_t)(pages * psz), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    madvise(p, (size_t)(pages * psz), MADV_NOHUGEPAGE);
    for (long i = 0; i < pages; i++)
        p[i * psz] = 1;
    munmap(p, (size_t)(pages * psz));
}

int main(int argc, char **argv)
{
    long pages = argc > 1 ? atol(argv[1]) : 1000;
    perfmark_region_begin("before");
    touch(pages);
    perfmark_region_end("before");

    perfmark_region_begin("span");
    pid_t pid = fork();
    if (pid == 0) {
        perfmark_region_begin("child_work");
        touch(pages);
        perfmark_region_end("child_work");
        perfmark_region_end("span");
        exit(0);
    }
    touch(pages);
    int status = 0;
    waitpid(pid, &status, 0);
    perfmark_region_end("span");
    printf("child %ld\n", (long)pid);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
