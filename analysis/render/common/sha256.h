/* sha256.h — SHA-256 (FIPS 180-4) of a byte string, for the HTML page's
 * Content-Security-Policy, which allows the page's one script by its hash
 * (script-src 'sha256-<base64>') and nothing else. */
#ifndef PM_SHA256_H
#define PM_SHA256_H

#include <stddef.h>
#include <stdint.h>

void pm_sha256(const void *data, size_t len, uint8_t digest[32]);
/* The digest in base64 (44 characters and a NUL). */
void pm_sha256_base64(const void *data, size_t len, char out[45]);

#endif
