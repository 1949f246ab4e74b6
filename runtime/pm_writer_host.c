/* Inside libperfmark_writer.so only: the runtime functions the writer
 * calls, forwarded to the runtime that loaded it (struct pm_writer_host).
 * The writer's sources stay as they are in the runtime's own build. */
#include "pm_counterset.h"
#include "pm_log.h"
#include "pm_names.h"
#include "pm_pin.h"
#include "pm_writer.h"

extern const struct pm_writer_host *pm_writer_host_table;
#define H pm_writer_host_table

const char *pm_name_get(int32_t id) { return H->name_get(id); }
enum pm_kind pm_name_kind(int32_t id) { return H->name_kind(id); }
const char *pm_kind_name(enum pm_kind kind) { return H->kind_name(kind); }
size_t pm_msg_count(void) { return H->msg_count(); }
const char *pm_msg_get(size_t i) { return H->msg_get(i); }
void pm_pin_place(int cpu, struct pm_place *out) { H->pin_place(cpu, out); }
int pm_counterset_td_rdpmc_used(void) { return H->td_rdpmc_used(); }
