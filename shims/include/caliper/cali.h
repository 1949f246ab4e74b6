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
 * communication regions (mapped to ordinary regions), loops and their
 * iterations (CALI_MARK_LOOP_BEGIN/END, CALI_MARK_ITERATION_BEGIN/END; in
 * C++ CALI_CXX_MARK_LOOP_BEGIN/ITERATION/END), cali_init,
 * cali_is_initialized, the cali_set_global_*_byname metadata calls
 * (accepted, not recorded), and in C++ CALI_CXX_MARK_SCOPE /
 * CALI_CXX_MARK_FUNCTION. The ConfigManager is in <caliper/cali-manager.h>
 * (C and C++) and <caliper/ConfigManager.h> (C++).
 * Not provided: attributes of your own, snapshots, channels, data tracking.
 *
 * A loop is a region named after the loop; each iteration is one visit of
 * its child region "iteration#<loop name>" (Caliper's name for the
 * iteration attribute), so the file counts the iterations exactly:
 *     mainloop                      1 visit
 *       iteration#mainloop          N visits (the iteration number itself
 *         foo                       N visits  is not recorded)
 */
#ifndef CALI_CALI_H
#define CALI_CALI_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Caliper's attribute id type. The shim knows two kinds of attribute: the
 * loop attribute (cali_loop_attr_id) and the iteration attribute each loop
 * gets from cali_make_loop_iteration_attribute(); cali_begin_string,
 * cali_begin_int and cali_end act on those and ignore any other id. */
typedef uint64_t cali_id_t;
#define CALI_INV_ID 0xFFFFFFFFFFFFFFFF

void cali_begin_region(const char *name);
void cali_end_region(const char *name);
void cali_begin_phase(const char *name);
void cali_end_phase(const char *name);
void cali_begin_comm_region(const char *name);
void cali_end_comm_region(const char *name);
void cali_init(void);
int cali_is_initialized(void);

extern cali_id_t cali_loop_attr_id;
cali_id_t cali_make_loop_iteration_attribute(const char *name);
void cali_begin_string(cali_id_t attr, const char *val);
void cali_begin_int(cali_id_t attr, int val);
void cali_end(cali_id_t attr);

/* Run metadata (Adiak-style globals): accepted so that code calling them
 * builds and runs; perfmark's file does not record them. */
void cali_set_global_double_byname(const char *attr_name, double val);
void cali_set_global_int_byname(const char *attr_name, int val);
void cali_set_global_string_byname(const char *attr_name, const char *val);
void cali_set_global_uint_byname(const char *attr_name, uint64_t val);

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

/* Loops, as in Caliper: LOOP_BEGIN declares the loop's iteration attribute
 * (a variable named after loop_id), so it must stand where a declaration
 * may, and LOOP_END closes the innermost loop of the calling thread. */
#define CALI_MARK_LOOP_BEGIN(loop_id, name)          \
    cali_begin_string(cali_loop_attr_id, (name));    \
    cali_id_t cali_pm_iter_##loop_id = cali_make_loop_iteration_attribute(name)
#define CALI_MARK_LOOP_END(loop_id) cali_end(cali_loop_attr_id)
#define CALI_MARK_ITERATION_BEGIN(loop_id, iter) \
    cali_begin_int(cali_pm_iter_##loop_id, ((int)(iter)))
#define CALI_MARK_ITERATION_END(loop_id) cali_end(cali_pm_iter_##loop_id)

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

namespace cali {
/* Caliper's loop annotation: the loop region is open from construction to
 * end() (or destruction); iteration(i) returns a guard that is one visit of
 * the iteration region until it goes out of scope. Unlike Caliper's, a Loop
 * cannot be copied (its iterations and end() belong to the one object). */
class Loop {
public:
    class Iteration {
    public:
        Iteration(cali_id_t attr, int i) : attr_(attr) { cali_begin_int(attr_, i); }
        Iteration(Iteration &&other) : attr_(other.attr_) { other.attr_ = CALI_INV_ID; }
        ~Iteration()
        {
            if (attr_ != CALI_INV_ID)
                cali_end(attr_);
        }
        Iteration(const Iteration &) = delete;
        Iteration &operator=(const Iteration &) = delete;
    private:
        cali_id_t attr_;
    };

    Loop(const char *name) : open_(true)
    {
        cali_begin_string(cali_loop_attr_id, name);
        iter_ = cali_make_loop_iteration_attribute(name);
    }
    ~Loop() { end(); }
    Loop(const Loop &) = delete;
    Loop &operator=(const Loop &) = delete;

    Iteration iteration(int i) const { return Iteration(iter_, i); }
    void end()
    {
        if (open_) {
            cali_end(cali_loop_attr_id);
            open_ = false;
        }
    }
private:
    cali_id_t iter_;
    bool open_;
};
} /* namespace cali */

#define CALI_PM_CAT2(a, b) a##b
#define CALI_PM_CAT(a, b) CALI_PM_CAT2(a, b)
#define CALI_CXX_MARK_SCOPE(name) ::perfmark_cali::scope CALI_PM_CAT(cali_pm_scope_, __LINE__)(name)
#define CALI_CXX_MARK_FUNCTION ::perfmark_cali::scope CALI_PM_CAT(cali_pm_func_, __LINE__)(__func__)
#define CALI_CXX_MARK_LOOP_BEGIN(loop_id, name) ::cali::Loop cali_pm_loop_##loop_id(name)
#define CALI_CXX_MARK_LOOP_END(loop_id) cali_pm_loop_##loop_id.end()
#define CALI_CXX_MARK_LOOP_ITERATION(loop_id, iter) \
    ::cali::Loop::Iteration cali_pm_iter_##loop_id(  \
        cali_pm_loop_##loop_id.iteration(static_cast<int>(iter)))
#endif

#endif /* CALI_CALI_H */
