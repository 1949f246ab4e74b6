/*
 * caliper/cali-manager.h — Caliper's ConfigManager for perfmark's shim
 * (libperfmark-caliper.so). NOT Caliper's header: written for perfmark with
 * the signatures of Caliper 2.x's C interface (Shroud-generated
 * wrapConfigManager.h and typesCaliper.h) for these calls; in C++ it also
 * brings in cali::ConfigManager (<caliper/ConfigManager.h>), as Caliper's
 * does.
 *
 * What a configuration string does under perfmark (docs/guide.md):
 *   runtime-report   after flush() of a started manager, perfmark's text
 *                    report of the run is printed once the run's file is
 *                    written at exit (rank 0 of an MPI job). Options:
 *                    output=stderr (default) | stdout | FILE, and
 *                    aggregate_across_ranks (accepted: the report always
 *                    covers every rank).
 *   none, ""         nothing.
 *   anything else    error() is true and error_msg() says what, in
 *                    Caliper's words ("Unknown config or parameter: X",
 *                    "Unknown option: X", ...); the program goes on.
 * start() and stop() do not start or pause measuring: perfmark measures
 * the whole run (`perfmark run`).
 */
#ifndef CALI_CALI_MANAGER_H
#define CALI_CALI_MANAGER_H

#include <stddef.h>
#ifndef __cplusplus
#include <stdbool.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Shroud's descriptors, as in Caliper's typesCaliper.h. */
struct s_cali_SHROUD_capsule_data {
    void *addr; /* the memory behind it */
    int idtor;  /* which destructor frees it */
};
typedef struct s_cali_SHROUD_capsule_data cali_SHROUD_capsule_data;

struct s_cali_SHROUD_array {
    cali_SHROUD_capsule_data cxx; /* free with cali_SHROUD_memory_destructor */
    union {
        const void *base;
        const char *ccharp;
    } addr;
    int type;
    size_t elem_len; /* the string's length */
    size_t size;
    int rank;
    long shape[7];
};
typedef struct s_cali_SHROUD_array cali_SHROUD_array;

struct s_cali_ConfigManager {
    void *addr;
    int idtor;
};
typedef struct s_cali_ConfigManager cali_ConfigManager;

void cali_SHROUD_memory_destructor(cali_SHROUD_capsule_data *cap);

cali_ConfigManager *cali_ConfigManager_new(cali_ConfigManager *SHC_rv);
void cali_ConfigManager_delete(cali_ConfigManager *self);
void cali_ConfigManager_set_default_parameter(cali_ConfigManager *self, const char *option,
                                              const char *val);
void cali_ConfigManager_set_default_parameter_for_config(cali_ConfigManager *self,
                                                         const char *config,
                                                         const char *option, const char *val);
void cali_ConfigManager_add(cali_ConfigManager *self, const char *config);
bool cali_ConfigManager_error(cali_ConfigManager *self);
/* The message in SHT_rv_cdesc->addr.ccharp (NULL when there is none), its
 * length in elem_len; free it with cali_SHROUD_memory_destructor(&...->cxx). */
void cali_ConfigManager_error_msg_bufferify(cali_ConfigManager *self,
                                            cali_SHROUD_array *SHT_rv_cdesc);
void cali_ConfigManager_start(cali_ConfigManager *self);
void cali_ConfigManager_stop(cali_ConfigManager *self);
void cali_ConfigManager_flush(cali_ConfigManager *self);

/* perfmark's own, behind cali::ConfigManager's help functions: the i-th
 * config name (NULL past the last), and a config's one-line description
 * (`full` = 0) or description with its options (`full` = 1), NULL for an
 * unknown name. */
const char *perfmark_cali_config_name(int i);
const char *perfmark_cali_config_doc(const char *name, int full);

#ifdef __cplusplus
}
#include "ConfigManager.h"
#endif

#endif /* CALI_CALI_MANAGER_H */
