/* pm_call_ordinal — a call site as "the K-th call of its function to that
 * target", for naming OpenMP constructs without debug information: an edit
 * elsewhere in the function moves the call's offset, not its ordinal (until
 * a construct is added or removed before it).
 *
 * Reads the calling function's machine code (readable text); not for hot
 * paths. */
#ifndef PM_CALL_ORDINAL_H
#define PM_CALL_ORDINAL_H

/* For the call returning to `ret` in the function starting at `fn_start`:
 * how many calls of the same form to the same target come before it in
 * the function (0 for the first), or -1 when the instruction before `ret`
 * is not a direct call (or the architecture is not x86-64 or AArch64). */
long pm_call_ordinal(const void *ret, const void *fn_start);

#endif
