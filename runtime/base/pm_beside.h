/* pm_beside — perfmark's own libraries that the runtime loads only when a
 * run needs them (the HDF5 writer of an MPI ABI, the DWARF unwinder), found
 * where libperfmark.so is. */
#ifndef PM_BESIDE_H
#define PM_BESIDE_H

#include <stddef.h>

/* dlopen `file` beside this runtime (an install, or the build tree), else
 * beside any other libperfmark.so loaded here, else wherever the dynamic
 * loader finds it (LD_LIBRARY_PATH, ld.so.conf). NULL with the first
 * failure's reason in err. */
void *pm_dlopen_beside(const char *file, char *err, size_t errlen);

#endif
