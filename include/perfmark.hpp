/*
 * perfmark.hpp — C++ region guard for the perfmark markers (include/perfmark.h).
 *
 *     #include <perfmark.hpp>
 *     void solve() {
 *         perfmark::region r("solve");   // begins here, ends when r goes out of scope
 *         ...
 *     }
 *
 * The guard ends its region on every way out of the scope (return, break,
 * exception), which the C macros cannot. Link with -lperfmark as for C.
 *
 * Names: `region(const char *)` keeps the pointer and passes it again at the
 * end, so it must stay valid until the guard is destroyed (string literals
 * always are); it takes the markers' fastest path (the per-thread name cache
 * is keyed by the pointer). `region(const std::string &)` resolves the name to
 * a process-wide handle first, so a temporary string is fine; that costs a
 * lookup under a lock per construction, so prefer literals in hot loops, or
 * resolve once with perfmark::handle() and pass the handle.
 *
 * With -DPERFMARK_DISABLE the guard is an empty object and nothing refers to
 * libperfmark, like the C macros.
 */
#ifndef PERFMARK_HPP
#define PERFMARK_HPP

#include <string>

#include "perfmark.h"

namespace perfmark {

#ifndef PERFMARK_DISABLE

class region {
public:
    explicit region(const char *name) : name_(name), handle_(-1)
    {
        perfmark_region_begin(name);
    }
    explicit region(const std::string &name) : name_(nullptr), handle_(perfmark_region(name.c_str()))
    {
        perfmark_region_enter(handle_);
    }
    /* A handle from perfmark_region(): no name lookup at all. */
    explicit region(perfmark_region_t handle) : name_(nullptr), handle_(handle)
    {
        perfmark_region_enter(handle_);
    }
    ~region()
    {
        if (name_)
            perfmark_region_end(name_);
        else
            perfmark_region_exit(handle_);
    }
    /* One guard, one visit: copying or moving would end the region twice. */
    region(const region &) = delete;
    region &operator=(const region &) = delete;

private:
    const char *name_;
    perfmark_region_t handle_;
};

inline bool active() { return perfmark_active() != 0; }

/* perfmark_region(name): resolve once, then construct guards from the handle. */
inline perfmark_region_t handle(const char *name) { return perfmark_region(name); }

#else /* PERFMARK_DISABLE */

class region {
public:
    explicit region(const char *) {}
    explicit region(const std::string &) {}
    explicit region(perfmark_region_t) {}
    region(const region &) = delete;
    region &operator=(const region &) = delete;
};

inline bool active() { return false; }
inline perfmark_region_t handle(const char *) { return -1; }

#endif /* PERFMARK_DISABLE */

} /* namespace perfmark */

/* PERFMARK_SCOPE("name"): a guard for the rest of the enclosing scope, with a
 * variable name of its own (one per line). */
#define PERFMARK_SCOPE_CAT2(a, b) a##b
#define PERFMARK_SCOPE_CAT(a, b) PERFMARK_SCOPE_CAT2(a, b)
#define PERFMARK_SCOPE(name) \
    ::perfmark::region PERFMARK_SCOPE_CAT(perfmark_scope_, __LINE__)(name)

#endif /* PERFMARK_HPP */
