/* omp_null_tool — an OMPT tool that registers the callbacks perfmark's tool
 * uses (thread begin/end, parallel begin/end, implicit task, sync region)
 * and does nothing in them. bench/run_omp.sh loads it through
 * OMP_TOOL_LIBRARIES to measure what libomp's own OMPT machinery costs a
 * parallel region once any tool is active, so that perfmark's share can be
 * told apart from it. With PM_NULL_TOOL_CALLBACKS=none it registers no
 * callback at all: what libomp charges for a tool being present, which no
 * tool can avoid. */
#include <omp-tools.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

static void on_thread(ompt_thread_t type, ompt_data_t *data) { (void)type, (void)data; }
static void on_thread_end(ompt_data_t *data) { (void)data; }
static void on_parallel_begin(ompt_data_t *task, const ompt_frame_t *frame, ompt_data_t *par,
                              unsigned n, int flags, const void *ra)
{
    (void)task, (void)frame, (void)par, (void)n, (void)flags, (void)ra;
}
static void on_parallel_end(ompt_data_t *par, ompt_data_t *task, int flags, const void *ra)
{
    (void)par, (void)task, (void)flags, (void)ra;
}
static void on_implicit_task(ompt_scope_endpoint_t ep, ompt_data_t *par, ompt_data_t *task,
                             unsigned n, unsigned index, int flags)
{
    (void)ep, (void)par, (void)task, (void)n, (void)index, (void)flags;
}
static void on_sync_region(ompt_sync_region_t kind, ompt_scope_endpoint_t ep, ompt_data_t *par,
                           ompt_data_t *task, const void *ra)
{
    (void)kind, (void)ep, (void)par, (void)task, (void)ra;
}

static int on_init(ompt_function_lookup_t lookup, int device, ompt_data_t *data)
{
    (void)device, (void)data;
    const char *which = getenv("PM_NULL_TOOL_CALLBACKS");
    if (which && strcmp(which, "none") == 0)
        return 1;  /* active, with nothing registered */
    ompt_set_callback_t set = (ompt_set_callback_t)lookup("ompt_set_callback");
    set(ompt_callback_thread_begin, (ompt_callback_t)on_thread);
    set(ompt_callback_thread_end, (ompt_callback_t)on_thread_end);
    set(ompt_callback_parallel_begin, (ompt_callback_t)on_parallel_begin);
    set(ompt_callback_parallel_end, (ompt_callback_t)on_parallel_end);
    set(ompt_callback_implicit_task, (ompt_callback_t)on_implicit_task);
    set(ompt_callback_sync_region, (ompt_callback_t)on_sync_region);
    return 1;
}

static void on_fini(ompt_data_t *data) { (void)data; }

ompt_start_tool_result_t *ompt_start_tool(unsigned version, const char *runtime)
{
    (void)version, (void)runtime;
    static ompt_start_tool_result_t result = {on_init, on_fini, {0}};
    return &result;
}
