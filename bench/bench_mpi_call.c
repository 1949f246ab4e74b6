/* What perfmark adds to an MPI call, against the same call made through
 * its PMPI_ entry point (which perfmark does not wrap) in the same run:
 *   - a cheap local call: MPI_Test on MPI_REQUEST_NULL;
 *   - a 0-byte ping-pong between ranks 0 and 1 (MPI_Send + MPI_Recv).
 * Rounds alternate floor and wrapped blocks; medians over rounds. Run with
 * PERFMARK_EVENTS=none for "counters off" (target: <= 60 ns per call over
 * the floor) and with sw (about one region pair of the core).
 * usage: mpirun -np 2 bench_mpi_call [ROUNDS] [CALLS] */
#include <mpi.h>
#include <perfmark.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

typedef int (*test_fn)(MPI_Request *, int *, MPI_Status *);
typedef int (*send_fn)(const void *, int, MPI_Datatype, int, int, MPI_Comm);
typedef int (*recv_fn)(void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Status *);

/* ns per MPI_Test call */
static __attribute__((noinline)) double time_test(test_fn test, int calls)
{
    MPI_Request req = MPI_REQUEST_NULL;
    int flag;
    double t0 = now_ns();
    for (int i = 0; i < calls; i++)
        test(&req, &flag, MPI_STATUS_IGNORE);
    return (now_ns() - t0) / calls;
}

/* ns per round trip: rank 0's Send and Recv and rank 1's Recv and Send are
 * all on its critical path, so it holds four wrapped calls */
static __attribute__((noinline)) double time_pingpong(send_fn send, recv_fn recv, int rank,
                                                      int calls)
{
    char b = 0;
    double t0 = now_ns();
    for (int i = 0; i < calls; i++) {
        if (rank == 0) {
            send(&b, 0, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
            recv(&b, 0, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            recv(&b, 0, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            send(&b, 0, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
        }
    }
    return (now_ns() - t0) / calls;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int rounds = argc > 1 ? atoi(argv[1]) : 15;
    int calls = argc > 2 ? atoi(argv[2]) : 20000;
    if (rounds < 1 || rounds > 1000 || calls < 1)
        rounds = 15, calls = 20000;
    const char *events = getenv("PERFMARK_EVENTS");
    double *ft = malloc(sizeof(double) * rounds), *wt = malloc(sizeof(double) * rounds);
    double *fp = malloc(sizeof(double) * rounds), *wp = malloc(sizeof(double) * rounds);

    time_test(PMPI_Test, calls / 4);  /* warm-up */
    time_test(MPI_Test, calls / 4);
    for (int r = 0; r < rounds; r++) {
        int floor_first = r % 2 == 0;
        if (floor_first)
            ft[r] = time_test(PMPI_Test, calls);
        wt[r] = time_test(MPI_Test, calls);
        if (!floor_first)
            ft[r] = time_test(PMPI_Test, calls);
    }
    int pingpong = size >= 2 && rank < 2;
    for (int r = 0; pingpong && r < rounds; r++) {
        int floor_first = r % 2 == 0;
        if (floor_first)
            fp[r] = time_pingpong(PMPI_Send, PMPI_Recv, rank, calls / 10);
        wp[r] = time_pingpong(MPI_Send, MPI_Recv, rank, calls / 10);
        if (!floor_first)
            fp[r] = time_pingpong(PMPI_Send, PMPI_Recv, rank, calls / 10);
    }
    if (rank == 0) {
        const char *mode = perfmark_active() ? (events ? events : "default") : "not measured";
        double f = median(ft, rounds), w = median(wt, rounds);
        printf("MPI_Test(null)   [%s]: %7.1f ns  floor (PMPI) %7.1f ns  added %6.1f ns per call\n",
               mode, w, f, w - f);
        if (pingpong) {
            f = median(fp, rounds), w = median(wp, rounds);
            printf("0-byte ping-pong [%s]: %7.1f ns  floor (PMPI) %7.1f ns per round trip: "
                   "added %6.1f ns per call (4 calls per round trip)\n", mode, w, f,
                   (w - f) / 4);
        }
    }
    free(ft), free(wt), free(fp), free(wp);
    MPI_Finalize();
    return 0;
}
