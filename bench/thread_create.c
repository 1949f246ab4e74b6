/* What starting a thread costs: N threads created and joined one after the
 * other, each doing nothing; prints the mean time per thread.
 * usage: thread_create [N] (default 100000) */
#include "thread_loop.h"

#include <stdlib.h>

int main(int argc, char **argv)
{
    return thread_loop(argc > 1 ? atol(argv[1]) : 100000);
}
