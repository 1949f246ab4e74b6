/*
 * fuzz_report.c — libFuzzer harness: the input bytes as an HDF5 file through
 * the whole report path (pm_file_open, pm_report_build_stream, the text, CSV
 * and JSON renderers), in
 * this process so that the sanitizers see perfmark's own code.
 *
 * HDF5 needs a file name, so each input is written to a fresh file in
 * /dev/shm (a new name every time: HDF5 identifies open files by inode and a
 * handle leaked on an error path must not serve a later input). Crashes
 * inside libhdf5 itself are not ours to fix; `perfmark report` contains them
 * in a child process (analysis/cli/report.c). See README.md for the triage.
 */
#include "cli/report.h"

#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

static FILE *pm_sink;

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    pm_report_in_process = 1;
    pm_sink = fopen("/dev/null", "w");
    return pm_sink ? 0 : -1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static unsigned long n;
    static const char *const formats[] = {"text", "csv", "json"};
    char path[96], err[1024];
    int fd;

    snprintf(path, sizeof path, "/dev/shm/pm-fuzz-%ld-%lu.h5", (long)getpid(), n++);
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0)
        return 0;
    if (write(fd, data, size) != (ssize_t)size) {
        close(fd);
        unlink(path);
        return 0;
    }
    close(fd);
    for (size_t i = 0; i < sizeof formats / sizeof *formats; i++)
        if (pm_report_file(path, formats[i], pm_sink, err, sizeof err) != 0)
            break; /* the file is rejected the same way in every format */
    unlink(path);
    return 0;
}
