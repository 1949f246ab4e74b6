/*
 * caliper/cali.h — the subset of Caliper's C annotation API that perfmark's
 * shim (libperfmark-caliper.so) provides. NOT Caliper's header: written for
 * perfmark, with the signatures of Caliper 2.x's <caliper/cali.h> and
 * <caliper/cali_macros.h> for these entry points only, so that code
 * annotated with them compiles unchanged with
 * -I<prefix>/include/perfmark/shims and links with -lperfmark-caliper.
 *
 * Provided: cali_begin_region/cali_end_region (CALI_MARK_BEGIN/END,
 * CALI_MARK_FUNCTION_BEGIN/END, CALI_WRAP_STATEMENT), phases and
 * communication regions (mapped to ordinary regions), cali_init,
 * cali_is_initialized, and in C++ CALI_CXX_MARK_SCOPE / CALI_CXX_MARK_FUNCTION.
 * Not provided: attributes, loops and iterations, snapshots, channels,
 * configuration, ConfigManager.
 */
#ifndef CALI_CALI_H
#define CALI_CALI_H

#ifdef __cplusplus
extern "C" {
#endif

void cali_begin_region(const char *name);
void cali_end_region(const char *name);
void cali_begin_phase(const char *name);
void cali_end_phase(const char *name);
void cali_begin_comm_region(const char *name);
void cali_end_comm_region(const char *name);
void cali_init(void);
int cali_is_initialized(void);

#ifdef __cplusplus
}
#endif

#define CALI_MARK_BEGIN(name) cali_begin_region(name)
#define CALI_MARK_END(name) cali_end_region(name)
#define CALI_MARK_FUNCTION_BEGIN cali_begin_region(__func__)
#define CALI_MARK_FUNCTION_END cali_end_region(__func__)
#define CALI_MARK_PHASE_BEGIN(name) cali_begin_phase(name)
#define CALI_MARK_PHASE_END(name) cali_end_phase(name)
#define CALI_MARK_COMM_REGION_BEGIN(name) cali_begin_comm_region(name)
#define CALI_MARK_COMM_REGION_END(name) cali_end_comm_region(name)
#define CALI_WRAP_STATEMENT(name, statement) \
    cali_begin_region((name));               \
    statement;                               \
    cali_end_region((name))

#ifdef __cplusplus
namespace perfmark_cali {
/* Scope guard behind the C++ macros: the name must outlive the scope
 * (string literals and __func__ do). */
class scope {
public:
    explicit scope(const char *name) : name_(name) { cali_begin_region(name_); }
    ~scope() { cali_end_region(name_); }
    scope(const scope &) = delete;
    scope &operator=(const scope &) = delete;
private:
    const char *name_;
};
} /* namespace perfmark_cali */
#define CALI_PM_CAT2(a, b) a##b
#define CALI_PM_CAT(a, b) CALI_PM_CAT2(a, b)
#define CALI_CXX_MARK_SCOPE(name) ::perfmark_cali::scope CALI_PM_CAT(cali_pm_scope_, __LINE__)(name)
#define CALI_CXX_MARK_FUNCTION ::perfmark_cali::scope CALI_PM_CAT(cali_pm_func_, __LINE__)(__func__)
#endif

#endif /* CALI_CALI_H */
