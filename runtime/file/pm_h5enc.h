/* pm_h5enc — perfmark's own HDF5 encoder: a model (pm_h5model.h) as the
 * bytes of an HDF5 file, without the HDF5 library.
 *
 * Why: loading Debian's HDF5 (about 40 libraries) and initialising it took
 * 15-30 ms in every measuring process, and building the file through it
 * another 20 ms at MPI_Finalize, on a 2-vCPU VM (bench/README.md): more than
 * a short MPI job may spend on being measured at all. Encoding the same
 * content here takes well under a millisecond.
 *
 * What it writes: the file format's newer structures, which every HDF5
 * since 1.8 reads (h5py, h5dump and the report among them): a version-2
 * superblock, version-2 object headers with checksums and no optional
 * fields (flags 0x02), or version-1 headers for an object of more than 8
 * attributes (as the HDF5 library writes by default: readers of their own
 * such as jsfive take both, but not a version-2 header's phase-change
 * values), groups whose links sit in their headers (compact), attributes in
 * their object's header, datasets with contiguous storage,
 * variable-length strings in global heap collections, compound types of
 * version 3. No chunking and no compression: files whose datasets are
 * large enough to want them are written by the HDF5 library instead
 * (pm_h5enc_fits).
 *
 * Only whole datasets (row0 0, nrows dims[0]). Little-endian hosts only
 * (numbers are copied as they are in memory). */
#ifndef PM_H5ENC_H
#define PM_H5ENC_H

#include "pm_h5model.h"

#include <stddef.h>
#include <stdint.h>

/* Largest dataset (elements) this encoder writes: the HDF5 library path
 * chunks and compresses datasets above it (PM_CHUNK_THRESHOLD). */
#define PM_H5ENC_MAX_ELEMENTS 65536

/* Whether this host can use the encoder at all (little-endian). */
int pm_h5enc_available(void);
/* Whether the encoder should write this model: every dataset whole and at
 * most PM_H5ENC_MAX_ELEMENTS elements, on a little-endian host. */
int pm_h5enc_fits(const struct pm_h5model *m);

/* The file's bytes in *image (malloc'ed, *len bytes): 0, or -1 with errno
 * (ENOMEM; EFBIG: an object's header message over 64 KiB; EINVAL for a
 * model it cannot write: failed, or partial rows, or a big-endian host).
 * Any size is written when asked: an emergency dump uses it whatever the
 * size, since loading a library then could deadlock, and it is the last
 * resort when the HDF5 library cannot be loaded. The file is built in one
 * buffer allocated once, near its final size. */
int pm_h5enc_image(const struct pm_h5model *m, void **image, size_t *len);

/* Jenkins' lookup3 hash with initial value 0: HDF5's metadata checksum. */
uint32_t pm_h5enc_checksum(const void *data, size_t len);

#endif
