/* PM_WRAPPER_API: what libperfmark.so exports for perfmark's own MPI
 * wrapper libraries (libperfmark_mpi_<abi>.so, which link it): internal,
 * never in include/perfmark.h, never meant for applications. Protected in
 * libperfmark.so itself, so that its own calls stay direct. */
#ifndef PM_WRAPPER_API_H
#define PM_WRAPPER_API_H

#ifdef PM_BUILDING_RUNTIME
#define PM_WRAPPER_API __attribute__((visibility("protected")))
#else
#define PM_WRAPPER_API __attribute__((visibility("default")))  /* a user of them */
#endif

#endif
