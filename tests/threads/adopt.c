/* The program of early.c's library: `adopt PAGES` lets the early thread
 * touch PAGES pages once perfmark (and main) run. Exit status 3. */
#include <stdlib.h>

void early_go(long n);

int main(int argc, char **argv)
{
    early_go(argc > 1 ? atol(argv[1]) : 500);
    return 3;
}
