/* A STAND-IN for Caliper's own library (Debian has no Caliper): a
 * libcaliper.so that defines the annotation functions of perfmark's
 * cali.h subset and does nothing, so that a program linked with it before
 * -lperfmark-caliper sends its markers here, as it would to the real
 * Caliper. Only the wrong-link-order test uses it. */
#include "caliper/cali.h"

void cali_begin_region(const char *name) { (void)name; }
void cali_end_region(const char *name) { (void)name; }
void cali_begin_phase(const char *name) { (void)name; }
void cali_end_phase(const char *name) { (void)name; }
void cali_begin_comm_region(const char *name) { (void)name; }
void cali_end_comm_region(const char *name) { (void)name; }
void cali_init(void) {}
int cali_is_initialized(void) { return 1; }
