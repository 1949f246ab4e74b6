/*
 * mutants.c — damaged copies of real job files through the perfmark CLI
 * (CTest fuzz_mutants, tests/fuzz/README.md).
 *
 *   fuzz_mutants run PERFMARK OUTDIR N SEED.h5...
 *       N mutants, the i-th of seed file i % (number of seeds), each made by
 *       one deterministic mutation (PM_FUZZ_SEED, default 0x5eed, and i
 *       alone decide it: a failure reproduces by its number): byte flips,
 *       a truncation, a zeroed range, or an 8-byte overwrite. Each goes
 *       through `perfmark report --format text|csv|json|html` and
 *       `perfmark diff SEED MUTANT`; each must end (60 s here, far below
 *       the budget the test sets) with either a report (status 0, output)
 *       or one message line naming the file (status 1 for report, 2 for
 *       diff), never by a signal. A failure keeps OUTDIR/fail-I.h5 and
 *       OUTDIR/fail-I.patch (the mutation as a byte patch, see below).
 *       PM_FUZZ_JOBS workers (default 2) share the mutants.
 *   fuzz_mutants patch IN.h5 OUT.h5 PATCH
 *       apply a byte patch: the committed reproducers are a file our own
 *       writer makes plus such a patch (tests/fuzz/repro/).
 *
 * Patch lines: "flip OFFSET XORBYTE", "zero OFFSET LENGTH", "truncate
 * LENGTH", "write OFFSET HEXBYTES" (numbers decimal, bytes in hex); "#"
 * starts a comment.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PM_RUN_LIMIT 60.0 /* seconds: a hang fails here, before CTest's timeout */

struct pm_buf {
    unsigned char *p;
    size_t n;
};

static uint64_t pm_mix(uint64_t *s) /* splitmix64: small, fixed, portable */
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static int pm_slurp(const char *path, struct pm_buf *b)
{
    FILE *f = fopen(path, "rb");
    long n;

    if (!f || fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) <= 0 || fseek(f, 0, SEEK_SET) != 0) {
        if (f)
            fclose(f);
        return -1;
    }
    b->n = (size_t)n;
    b->p = malloc(b->n);
    if (!b->p || fread(b->p, 1, b->n, f) != b->n) {
        fclose(f);
        return -1;
    }
    fclose(f);
    return 0;
}

static int pm_spill(const char *path, const struct pm_buf *b)
{
    FILE *f = fopen(path, "wb");
    int ok = f && fwrite(b->p, 1, b->n, f) == b->n;

    return f && fclose(f) == 0 && ok ? 0 : -1;
}

/* Apply one patch line to b; -1 when it is not one. */
static int pm_apply_line(struct pm_buf *b, const char *line)
{
    unsigned long long off, len;
    unsigned x;
    char hex[64];

    if (line[0] == '#' || line[0] == '\n' || line[0] == '\0')
        return 0;
    if (sscanf(line, "flip %llu %x", &off, &x) == 2 && off < b->n) {
        b->p[off] ^= (unsigned char)x;
    } else if (sscanf(line, "zero %llu %llu", &off, &len) == 2 && off < b->n) {
        memset(b->p + off, 0, len < b->n - off ? len : b->n - off);
    } else if (sscanf(line, "truncate %llu", &len) == 1) {
        b->n = len < b->n ? len : b->n;
    } else if (sscanf(line, "write %llu %63s", &off, hex) == 2) {
        for (size_t i = 0; hex[2 * i] && hex[2 * i + 1] && off + i < b->n; i++) {
            sscanf(hex + 2 * i, "%2x", &x);
            b->p[off + i] = (unsigned char)x;
        }
    } else {
        return -1;
    }
    return 0;
}

/* Mutant i of `seed`: the mutation as patch text (applied to b as well). */
static void pm_mutate(uint64_t fuzz_seed, size_t i, struct pm_buf *b, char *patch, size_t len)
{
    static const uint64_t hostile[] = {0, UINT64_MAX, 0x7fffffffffffffffull, 0xffffffffull,
                                       0x100000000ull, 1};
    uint64_t s = fuzz_seed ^ (0x9e3779b97f4a7c15ull * (i + 1));
    size_t n = b->n, used = 0;
    unsigned kind = (unsigned)(i % 4);

    patch[0] = '\0';
    if (kind == 0) { /* 1-8 bytes flipped */
        unsigned k = 1 + (unsigned)(pm_mix(&s) % 8);
        for (unsigned j = 0; j < k; j++) {
            size_t off = (size_t)(pm_mix(&s) % n);
            unsigned x = 1 + (unsigned)(pm_mix(&s) % 255);
            used += (size_t)snprintf(patch + used, len - used, "flip %zu %02x\n", off, x);
        }
    } else if (kind == 1) { /* truncated anywhere */
        snprintf(patch, len, "truncate %zu\n", (size_t)(pm_mix(&s) % n));
    } else if (kind == 2) { /* 1-512 bytes zeroed */
        size_t off = (size_t)(pm_mix(&s) % n), k = 1 + (size_t)(pm_mix(&s) % 512);
        snprintf(patch, len, "zero %zu %zu\n", off, k);
    } else { /* 8 bytes overwritten: random, or a value that breaks sizes and addresses */
        size_t off = (size_t)(pm_mix(&s) % n);
        uint64_t v = pm_mix(&s) % 2 ? pm_mix(&s) : hostile[pm_mix(&s) % 6];
        used = (size_t)snprintf(patch, len, "write %zu ", off);
        for (int k = 0; k < 8; k++)
            used += (size_t)snprintf(patch + used, len - used, "%02x",
                                     (unsigned)((v >> (8 * k)) & 0xff));
        snprintf(patch + used, len - used, "\n");
    }
    for (char *line = patch; *line;) {
        char *nl = strchr(line, '\n');
        pm_apply_line(b, line);
        line = nl ? nl + 1 : line + strlen(line);
    }
}

static double pm_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Run argv with stdout/stderr into files; its wait status, or -1 when it
 * had to be killed after PM_RUN_LIMIT. */
static int pm_run(char *const argv[], const char *out, const char *err, double *secs)
{
    double t0 = pm_now();
    int status;
    pid_t pid = fork();

    if (pid == 0) {
        int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (o < 0 || e < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0)
            _exit(127);
        execv(argv[0], argv);
        _exit(127);
    }
    if (pid < 0)
        return -2;
    for (;;) {
        pid_t r = waitpid(pid, &status, WNOHANG);
        struct timespec ts = {0, 2000000};

        if (r == pid)
            break;
        if (r < 0 && errno != EINTR)
            return -2;
        if (pm_now() - t0 > PM_RUN_LIMIT) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            *secs = pm_now() - t0;
            return -1;
        }
        nanosleep(&ts, NULL);
    }
    *secs = pm_now() - t0;
    return status;
}

struct pm_tally {
    unsigned ok, rejected, stopped, crashed, failed;
    double max_secs;
};

/* The rules every run of a mutant must keep; 0, or 1 (said on stdout). */
static int pm_check(const char *what, const char *mutant, int status, int fail_rc,
                    const char *out, const char *err, double secs, struct pm_tally *t)
{
    struct pm_buf e = {0}, o = {0};
    size_t lines = 0;
    int bad = 0;

    if (secs > t->max_secs)
        t->max_secs = secs;
    if (status == -1) {
        printf("FAIL %s %s: did not end within %.0f s\n", what, mutant, PM_RUN_LIMIT);
        return 1;
    }
    if (status < 0 || WIFSIGNALED(status)) {
        printf("FAIL %s %s: ended by signal %d\n", what, mutant,
               status < 0 ? -1 : WTERMSIG(status));
        return 1;
    }
    if (pm_slurp(err, &e) != 0)
        e.n = 0;
    for (size_t k = 0; k < e.n; k++)
        lines += e.p[k] == '\n';
    if (WEXITSTATUS(status) == 0) {
        if (pm_slurp(out, &o) != 0 || o.n == 0) {
            printf("FAIL %s %s: status 0 without a report\n", what, mutant);
            bad = 1;
        } else {
            t->ok++;
        }
    } else if (WEXITSTATUS(status) != fail_rc) {
        printf("FAIL %s %s: status %d, not %d\n", what, mutant, WEXITSTATUS(status), fail_rc);
        bad = 1;
    } else if (lines != 1 || e.p[e.n - 1] != '\n' || !memmem(e.p, e.n, mutant, strlen(mutant))) {
        printf("FAIL %s %s: not one message line naming the file: '%.*s'\n", what, mutant,
               (int)(e.n < 400 ? e.n : 400), e.n ? (char *)e.p : "");
        bad = 1;
    } else if (memmem(e.p, e.n, "no progress", 11) || memmem(e.p, e.n, "still reading", 13)) {
        t->stopped++;
    } else if (memmem(e.p, e.n, "crashed", 7)) {
        t->crashed++;
    } else {
        t->rejected++;
    }
    free(e.p);
    free(o.p);
    return bad;
}

static int pm_worker(const char *perfmark, const char *dir, size_t n, char **seeds, size_t ns,
                     uint64_t fuzz_seed, unsigned w, unsigned jobs)
{
    static const char *const formats[] = {"text", "csv", "json", "html"};
    struct pm_buf src[64];
    struct pm_tally t = {0};
    char mutant[4096], out[4200], err[4200], patch[512];

    for (size_t k = 0; k < ns; k++)
        if (pm_slurp(seeds[k], &src[k]) != 0) {
            printf("FAIL cannot read seed %s\n", seeds[k]);
            return 1;
        }
    snprintf(out, sizeof out, "%s/w%u.out", dir, w);
    snprintf(err, sizeof err, "%s/w%u.err", dir, w);
    for (size_t i = w; i < n; i += jobs) {
        struct pm_buf b = {malloc(src[i % ns].n), src[i % ns].n};
        unsigned bad = 0, stopped = t.stopped;
        double secs = 0;

        if (!b.p)
            return 1;
        memcpy(b.p, src[i % ns].p, b.n);
        pm_mutate(fuzz_seed, i, &b, patch, sizeof patch);
        snprintf(mutant, sizeof mutant, "%s/m%04zu.h5", dir, i);
        if (pm_spill(mutant, &b) != 0) {
            printf("FAIL cannot write %s\n", mutant);
            return 1;
        }
        for (size_t f = 0; f < 4; f++) {
            char *argv[] = {(char *)perfmark, "report", mutant, "--format", (char *)formats[f],
                            NULL};
            int st = pm_run(argv, out, err, &secs);
            char what[64];

            snprintf(what, sizeof what, "report --format %s", formats[f]);
            bad += (unsigned)pm_check(what, mutant, st, 1, out, err, secs, &t);
        }
        {
            char *argv[] = {(char *)perfmark, "diff", seeds[i % ns], mutant, NULL};
            int st = pm_run(argv, out, err, &secs);

            bad += (unsigned)pm_check("diff", mutant, st, 2, out, err, secs, &t);
        }
        if (t.stopped != stopped) /* the loops in HDF5 the guard ended: candidates for repro/ */
            printf("note: mutant %zu of %s stopped by the read guard, patch: %s", i,
                   seeds[i % ns], patch);
        if (bad) {
            char keep[4200];

            t.failed++;
            printf("     mutant %zu of %s, patch: %s", i, seeds[i % ns], patch);
            snprintf(keep, sizeof keep, "%s/fail-%04zu.h5", dir, i);
            rename(mutant, keep);
            snprintf(keep, sizeof keep, "%s/fail-%04zu.patch", dir, i);
            FILE *p = fopen(keep, "w");
            if (p) {
                fprintf(p, "# mutant %zu (PM_FUZZ_SEED %#llx) of %s\n%s", i,
                        (unsigned long long)fuzz_seed, seeds[i % ns], patch);
                fclose(p);
            }
        } else {
            unlink(mutant);
        }
        free(b.p);
        fflush(stdout);
    }
    printf("worker %u: runs: %u reported, %u rejected, %u stopped (no progress), %u HDF5 "
           "crashes; %u failed mutants; slowest run %.2f s\n",
           w, t.ok, t.rejected, t.stopped, t.crashed, t.failed, t.max_secs);
    fflush(stdout);
    return t.failed ? 1 : 0;
}

int main(int argc, char **argv)
{
    if (argc == 5 && strcmp(argv[1], "patch") == 0) {
        struct pm_buf b;
        char line[512];
        FILE *p = fopen(argv[4], "r");
        int rc = 0;

        if (!p || pm_slurp(argv[2], &b) != 0) {
            fprintf(stderr, "fuzz_mutants: cannot read %s or %s\n", argv[2], argv[4]);
            return 2;
        }
        while (fgets(line, sizeof line, p))
            if (pm_apply_line(&b, line) != 0) {
                fprintf(stderr, "fuzz_mutants: bad patch line: %s", line);
                rc = 2;
            }
        fclose(p);
        return rc ? rc : pm_spill(argv[3], &b) == 0 ? 0 : 2;
    }
    if (argc >= 6 && strcmp(argv[1], "run") == 0) {
        const char *s = getenv("PM_FUZZ_SEED"), *j = getenv("PM_FUZZ_JOBS");
        uint64_t fuzz_seed = s ? strtoull(s, NULL, 0) : 0x5eed;
        unsigned jobs = j ? (unsigned)atoi(j) : 2, failed = 0;
        size_t n = strtoul(argv[4], NULL, 10), ns = (size_t)argc - 5;
        double t0 = pm_now();

        if (jobs < 1 || jobs > 64)
            jobs = 2;
        if (ns > 64)
            ns = 64;
        mkdir(argv[3], 0755);
        printf("fuzz_mutants: %zu mutants of %zu files, PM_FUZZ_SEED=%#llx, %u workers\n", n, ns,
               (unsigned long long)fuzz_seed, jobs);
        fflush(stdout);
        for (unsigned w = 0; w < jobs; w++) {
            pid_t pid = fork();
            if (pid == 0)
                _exit(pm_worker(argv[2], argv[3], n, argv + 5, ns, fuzz_seed, w, jobs));
            if (pid < 0)
                return 2;
        }
        for (unsigned w = 0; w < jobs; w++) {
            int st;
            if (wait(&st) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
                failed++;
        }
        printf("fuzz_mutants: %s in %.1f s\n", failed ? "FAILED" : "all mutants kept the rules",
               pm_now() - t0);
        return failed ? 1 : 0;
    }
    fprintf(stderr, "usage: fuzz_mutants run PERFMARK OUTDIR N SEED.h5...\n"
                    "       fuzz_mutants patch IN.h5 OUT.h5 PATCH\n");
    return 2;
}
