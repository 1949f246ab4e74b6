#!/usr/bin/env python3
"""Generate perfmark's MPI entry points from mpi_functions.def: one table,
two kinds of output.

usage: gen_mpi_wrappers.py wrappers TABLE HEADER OUTPUT.c fortran|f08|nofortran
       gen_mpi_wrappers.py stubs TABLE HEADER OUTPUT.S OUTPUT.c

TABLE is mpi_functions.def (its header documents the format), HEADER is
pm_mpi.h, whose `int64_t pm_bytes_RULE(int rc, ...)` declarations are the
byte rules a table line may name (their number of arguments is checked
here).

Every line gives three symbols, in this order: the C function MPI_Xxx,
the mpif.h / `use mpi` entry point mpi_xxx_ and the `use mpi_f08` one
mpi_xxx_f08_. Their position in that list is the symbol's slot, the same
in both outputs (a key over the names makes sure of it at run time).

`wrappers`: the body of one MPI wrapper library (libperfmark_mpi_ABI.so,
compiled against that MPI's mpi.h): for each line the C wrapper (calls
PMPI_Xxx; lifecycle rows are hand-written in mpi_lifecycle.c) and the
Fortran wrappers the MPI needs (they call the real pmpi_ entry point, or
the MPI's own, found once with dlsym), all static, and the table of them
by slot (pm_mpi_abi_fns). Which Fortran bindings need wrappers is the MPI's
doing: Open MPI's call PMPI_Xxx (`fortran`: both); MPICH's mpif.h and
`use mpi` call the C functions, its `use mpi_f08` ones call PMPI_Xxx except
those with a choice buffer (mpi_xxx_f08ts_, which call the C functions):
`f08`, the mpi_xxx_f08_ ones only. `nofortran`: C only.

`stubs`: what libperfmark.so exports in their place, with no MPI: each
symbol a jump through its slot (OUTPUT.S, x86-64 and aarch64), every slot
first pointing at a lazy entry that asks pm_mpi_resolve (pm_mpi_dispatch.c)
for the target, and the names by slot (OUTPUT.c).

Plain python3, no third-party modules; run by CMake at build time.
"""
import os
import re
import sys


# Lifecycle rows (not regions): the runtime call before and after the real
# Fortran call. Their C wrappers are hand-written in mpi_lifecycle.c.
LIFECYCLE = {
    "init": ("", "    pm_mpi_initialized();"),
    "finalize": ("    pm_mpi_finalizing();", ""),
    "abort": ("    pm_mpi_aborting();", ""),
}


class TableError(Exception):
    pass


class Param:
    """One C parameter: `const int sendcounts[]` -> base 'const int',
    stars 0, array True, name 'sendcounts'."""

    def __init__(self, text, where):
        m = re.match(r"^(.*?)([A-Za-z_]\w*)\s*(\[\s*\])?$", text.strip())
        if not m or not m.group(1).strip():
            raise TableError("%s: cannot read parameter %r" % (where, text))
        decl = m.group(1)
        self.stars = decl.count("*")
        self.base = " ".join(decl.replace("*", " ").split())
        self.name = m.group(2)
        self.array = bool(m.group(3))

    def c_decl(self):
        return "%s %s%s%s" % (self.base, "*" * self.stars, self.name, "[]" if self.array else "")

    def is_buffer(self):
        return self.base in ("void", "const void") and self.stars == 1

    def is_string(self):
        return self.base in ("char", "const char") and self.stars == 1 and not self.array

    def f_type(self, where):
        """The C type a Fortran compiler passes for this parameter."""
        if self.is_buffer():
            return "void *"
        if self.is_string():
            return "char *"
        if self.stars > 1 or (self.stars == 1 and self.array):
            raise TableError("%s: %s has no Fortran form" % (where, self.c_decl()))
        if self.base in ("MPI_Aint", "MPI_Offset", "MPI_Count") and not self.stars:
            return self.base + " *"
        return "MPI_Fint *"

    def rule_arg(self, fortran, where):
        """This parameter as a byte rule takes it: (C expression, needs a status)."""
        n, plain = self.name, not self.stars and not self.array
        if self.base == "int" and plain:
            return ("*%s" % n if fortran else n), False
        if self.base == "MPI_Datatype" and plain:
            return ("PM_DT_F(%s)" if fortran else "PM_DT_C(%s)") % n, False
        if self.base == "MPI_Comm" and plain:
            return ("PMPI_Comm_f2c(*%s)" % n if fortran else n), False
        if self.base == "const int" and (self.array or self.stars == 1):
            return ("PM_COUNTS_F(%s)" if fortran else "PM_COUNTS_C(%s)") % n, False
        if self.base == "MPI_Status" and self.stars == 1 and not self.array:
            return ("pm_f_status(%s, &st)" % n if fortran else n), fortran
        if self.is_buffer():
            return ("pm_f_in_place(%s)" if fortran else "PM_IN_PLACE_C(%s)") % n, False
        raise TableError("%s: parameter %s cannot be used in a byte rule" % (where, self.c_decl()))


class Function:
    def __init__(self, fields, where, rules):
        if len(fields) not in (3, 4):
            raise TableError("%s: want NAME | C PARAMETERS | BYTES [| FORTRAN PARAMETERS], "
                             "got %d fields" % (where, len(fields)))
        words = fields[0].split()
        self.name = words[0] if words else ""
        if not re.match(r"^MPI_[A-Z][a-z0-9_]*$", self.name):
            raise TableError("%s: %r is not an MPI C function name" % (where, self.name))
        attrs = words[1:]
        if any(a != "poll" for a in attrs):
            raise TableError("%s: unknown attribute(s) %s after the name (only `poll`)"
                             % (where, [a for a in attrs if a != "poll"]))
        self.poll = "poll" in attrs
        where = "%s (%s)" % (where, self.name)
        plist = fields[1]
        self.params = [] if plist == "void" else [Param(p, where) for p in plist.split(",")]
        names = [p.name for p in self.params]
        if len(set(names)) != len(names):
            raise TableError("%s: a parameter name repeats" % where)
        by_name = dict((p.name, p) for p in self.params)

        self.fparams = self.params
        if len(fields) == 4:
            flist = [] if fields[3] == "-" else [x.strip() for x in fields[3].split(",")]
            missing = [x for x in flist if x not in by_name]
            if missing:
                raise TableError("%s: Fortran parameters %s are not C parameters" % (where, missing))
            self.fparams = [by_name[x] for x in flist]
        for p in self.fparams:
            p.f_type(where)

        self.bytes = fields[2]
        if self.poll and self.bytes != "0":
            raise TableError("%s: a `poll` call moves no bytes (its visits may not be "
                             "bracketed), so its byte rule must be 0" % where)
        self.rule, self.rule_params = None, []
        if self.bytes not in ("0", "unknown") and self.bytes not in LIFECYCLE:
            m = re.match(r"^([a-z_]\w*)\((.*)\)$", self.bytes)
            if not m:
                raise TableError("%s: cannot read byte rule %r" % (where, self.bytes))
            self.rule = m.group(1)
            if self.rule not in rules:
                raise TableError("%s: no rule pm_bytes_%s in pm_mpi.h" % (where, self.rule))
            args = [a.strip() for a in m.group(2).split(",")] if m.group(2).strip() else []
            if len(args) != rules[self.rule]:
                raise TableError("%s: pm_bytes_%s takes %d arguments after rc, the table gives %d"
                                 % (where, self.rule, rules[self.rule], len(args)))
            for a in args:
                if a not in by_name:
                    raise TableError("%s: rule argument %r is not a parameter" % (where, a))
                if by_name[a] not in self.fparams:
                    raise TableError("%s: rule argument %r has no Fortran form" % (where, a))
                by_name[a].rule_arg(False, where)
            self.rule_params = [by_name[a] for a in args]

    # ---- pieces of the generated code ----

    def slot(self):
        return "pm_region_" + self.name

    def bytes_code(self, fortran, rc):
        """Statements that set `bytes` (when the region was entered)."""
        if self.rule is None:
            return []
        args, status = [rc], False
        for p in self.rule_params:
            expr, st = p.rule_arg(fortran, self.name)
            args.append(expr)
            status = status or st
        call = "pm_bytes_%s(%s)" % (self.rule, ", ".join(args))
        if status:
            return ["    if (call.on) {", "        MPI_Status st;",
                    "        bytes = %s;" % call, "    }"]
        return ["    if (call.on)", "        bytes = %s;" % call]

    def bracket(self, real_call, fortran, rc):
        """The body around the real call, shared by the three bindings."""
        out = ["    struct pm_mpi_call call;",
               '    pm_mpi_begin(&call, &%s, "%s", %d);' % (self.slot(), self.name,
                                                            1 if self.poll else 0),
               real_call,
               "    pm_mpi_returned(&call);",
               "    int64_t bytes = %s;" % ("-1" if self.bytes == "unknown" else "0")]
        out += self.bytes_code(fortran, rc)
        out.append("    pm_mpi_end(&call, bytes);")
        return out

    def c_wrapper(self):
        decl = ", ".join(p.c_decl() for p in self.params) or "void"
        args = ", ".join(p.name for p in self.params)
        # Declared with mpi.h's own type first: a table line that differs
        # from this MPI's prototype does not compile.
        out = ["static __typeof__(%s) pm_w_%s;" % (self.name, self.name),
               "static int pm_w_%s(%s)" % (self.name, decl), "{"]
        out += self.bracket("    int rc = P%s(%s);" % (self.name, args), False, "rc")
        return out + ["    return rc;", "}", ""]

    def f_typedef(self):
        return "pm_f_%s" % self.name

    def f_params(self):
        """(declaration, argument) pairs of the Fortran entry point."""
        pairs = [(p.f_type(self.name) + p.name, p.name) for p in self.fparams]
        pairs.append(("MPI_Fint *ierr", "ierr"))
        pairs += [("size_t %s_len" % p.name, "%s_len" % p.name)
                  for p in self.fparams if p.is_string()]
        return pairs

    def f_wrapper(self, suffix):
        lower = self.name.lower()
        sym, real = lower + suffix, "p" + lower + suffix
        pairs = self.f_params()
        decl = ", ".join(d for d, _ in pairs)
        args = ", ".join(a for _, a in pairs)
        out = ["static void pm_w_%s(%s)" % (sym, decl), "{",
               "    static void *slot;",
               '    %s real = (%s)pm_f_real(&slot, "%s", "%s");'
               % (self.f_typedef(), self.f_typedef(), real, sym)]
        if self.bytes in LIFECYCLE:
            before, after = LIFECYCLE[self.bytes]
            out += [before, "    real(%s);" % args, after]
            out = [x for x in out if x]
        else:
            out += self.bracket("    real(%s);" % args, True, "pm_f_rc(ierr)")
        return out + ["}", ""]

    def symbols(self):
        """The three symbols of this line, in slot order."""
        lower = self.name.lower()
        return [self.name, lower + "_", lower + "_f08_"]

    def generate(self, fortran):
        """`fortran`: which Fortran suffixes get a wrapper ("_", "_f08_")."""
        out = ["/* ---- %s: %s */" % (self.name, self.bytes)]
        if self.bytes not in LIFECYCLE:
            out.append("static int32_t %s = -1;" % self.slot())
        if fortran:
            out.append("typedef void (*%s)(%s);" % (
                self.f_typedef(), ", ".join(d for d, _ in self.f_params())))
        out.append("")
        if self.bytes not in LIFECYCLE:  # else hand-written in mpi_lifecycle.c
            out += self.c_wrapper()
        for suffix in fortran:
            out += self.f_wrapper(suffix)
        return out

    def table_entries(self, fortran):
        """This line's slots in pm_mpi_abi_fns."""
        out = ["(const void *)pm_w_%s" % self.name]
        for sym, suffix in zip(self.symbols()[1:], ("_", "_f08_")):
            out.append("(const void *)pm_w_%s" % sym if suffix in fortran else "NULL")
        return out


def read_rules(header):
    """Rule name -> number of arguments after rc, from pm_mpi.h."""
    text = open(header).read()
    rules = {}
    for m in re.finditer(r"int64_t\s+pm_bytes_(\w+)\s*\(([^)]*)\)", text):
        params = [p for p in m.group(2).split(",") if p.strip()]
        if not params or not re.match(r"^\s*int\s+rc\s*$", params[0]):
            raise TableError("%s: pm_bytes_%s must take `int rc` first" % (header, m.group(1)))
        rules[m.group(1)] = len(params) - 1
    if not rules:
        raise TableError("%s: no pm_bytes_ rules found" % header)
    return rules


def read_table(path, rules):
    functions, pending, start = [], "", 0
    with open(path) as f:
        for lineno, raw in enumerate(f, 1):
            line = raw.rstrip("\n")
            if not pending and (not line.strip() or line.lstrip().startswith("#")):
                continue
            if not pending:
                start = lineno
            if line.rstrip().endswith("\\"):
                pending += line.rstrip()[:-1] + " "
                continue
            text = pending + line
            pending = ""
            where = "%s:%d" % (path, start)
            fields = [" ".join(x.split()) for x in text.split("|")]
            functions.append(Function(fields, where, rules))
    if pending:
        raise TableError("%s: the last line ends with a continuation" % path)
    seen = set()
    for fn in functions:
        if fn.name in seen:
            raise TableError("%s: %s is listed twice" % (path, fn.name))
        seen.add(fn.name)
    return functions


def symbol_names(functions):
    return [sym for fn in functions for sym in fn.symbols()]


def table_key(functions):
    """FNV-1a over the names in slot order: the stubs and a wrapper library
    built from different tables must not be paired."""
    h = 0xcbf29ce484222325
    for ch in "\n".join(symbol_names(functions)).encode():
        h = ((h ^ ch) * 0x100000001b3) & 0xffffffffffffffff
    return h


def write(path, lines):
    with open(path + ".tmp", "w") as f:
        f.write("\n".join(lines) + "\n")
    os.replace(path + ".tmp", path)


FORTRAN_MODES = {"fortran": ("_", "_f08_"), "f08": ("_f08_",), "nofortran": ()}


def gen_wrappers(functions, header, output, mode):
    names = symbol_names(functions)
    fortran = FORTRAN_MODES[mode]
    lines = ["/* Generated by wrappers/mpi/gen_mpi_wrappers.py from mpi_functions.def:",
             " * do not edit. %d functions, each as MPI_Xxx (lifecycle rows: in"
             % len(functions), " * mpi_lifecycle.c)%s. */"
             % "".join(", mpi_xxx%s" % f for f in fortran),
             '#include "%s"' % os.path.basename(header), ""]
    for fn in functions:
        lines += fn.generate(fortran)
    lines += ["/* Every symbol's wrapper by slot (pm_mpi_abi.h). */",
              "const uint64_t pm_mpi_abi_key = 0x%016xull;" % table_key(functions),
              "const int pm_mpi_abi_count = %d;" % len(names),
              "const void *const pm_mpi_abi_fns[%d] = {" % len(names)]
    for fn in functions:
        for entry in fn.table_entries(fortran):
            lines.append("    %s," % entry)
    lines.append("};")
    write(output, lines)


def gen_stubs(functions, out_s, out_c):
    names = symbol_names(functions)
    asm = ["/* Generated by wrappers/mpi/gen_mpi_wrappers.py from mpi_functions.def:",
           " * do not edit. The MPI entry points libperfmark.so exports, without MPI:",
           " * each jumps through its slot of pm_mpi_slots, which first holds the",
           " * symbol's lazy entry (pm_mpi_dispatch.c fills the slots). Each is",
           " * exported as NAME@PERFMARK_MPI, a hidden version (wrappers/libperfmark.map): the",
           " * static linker never binds a program's MPI_Xxx to it, so the program",
           " * keeps its MPI library, while the dynamic loader binds unversioned",
           " * references to it as to any symbol of a library's oldest version. */",
           "#if defined(__x86_64__)",
           "    .section .data.rel.local,\"aw\"",
           "    .p2align 3",
           "    .globl pm_mpi_slots",
           "    .hidden pm_mpi_slots",
           "pm_mpi_slots:"]
    asm += ["    .quad pm_mpi_lazy_%d" % i for i in range(len(names))]
    asm += ["    .text"]
    for i, name in enumerate(names):
        stub = "pm_mpi_stub_" + name
        asm += ["    .p2align 4", "    .globl %s" % stub, "    .type %s, @function" % stub,
                "    .symver %s, %s@PERFMARK_MPI" % (stub, name),
                "%s:" % stub, "    jmp *pm_mpi_slots+%d(%%rip)" % (8 * i),
                "    .size %s, .-%s" % (stub, stub)]
    for i in range(len(names)):
        asm += ["pm_mpi_lazy_%d:" % i, "    movl $%d, %%r11d" % i, "    jmp pm_mpi_lazy"]
    asm += ["/* Save every argument register (and %al, the vector count of a variadic",
            " * call), ask for the target, restore them, jump: the caller's call goes",
            " * on as if it had gone there directly. */",
            "    .type pm_mpi_lazy, @function",
            "pm_mpi_lazy:",
            "    pushq %rbp", "    movq %rsp, %rbp",
            "    pushq %rdi", "    pushq %rsi", "    pushq %rdx", "    pushq %rcx",
            "    pushq %r8", "    pushq %r9", "    pushq %rax", "    pushq %r11",
            "    subq $128, %rsp"]
    asm += ["    movdqu %%xmm%d, %d(%%rsp)" % (k, 16 * k) for k in range(8)]
    asm += ["    movl %r11d, %edi", "    call pm_mpi_resolve", "    movq %rax, %r10"]
    asm += ["    movdqu %d(%%rsp), %%xmm%d" % (16 * k, k) for k in range(8)]
    asm += ["    addq $128, %rsp",
            "    popq %r11", "    popq %rax", "    popq %r9", "    popq %r8",
            "    popq %rcx", "    popq %rdx", "    popq %rsi", "    popq %rdi",
            "    popq %rbp", "    jmp *%r10",
            "    .size pm_mpi_lazy, .-pm_mpi_lazy",
            "#elif defined(__aarch64__)",
            "    .section .data.rel.local,\"aw\"",
            "    .p2align 3",
            "    .globl pm_mpi_slots",
            "    .hidden pm_mpi_slots",
            "pm_mpi_slots:"]
    asm += ["    .xword pm_mpi_lazy_%d" % i for i in range(len(names))]
    asm += ["    .text"]
    for i, name in enumerate(names):
        stub = "pm_mpi_stub_" + name
        asm += ["    .p2align 3", "    .globl %s" % stub, "    .type %s, %%function" % stub,
                "    .symver %s, %s@PERFMARK_MPI" % (stub, name),
                "%s:" % stub, "    adrp x16, pm_mpi_slots",
                "    add x16, x16, :lo12:pm_mpi_slots", "    ldr x16, [x16, #%d]" % (8 * i),
                "    br x16", "    .size %s, .-%s" % (stub, stub)]
    for i in range(len(names)):
        asm += ["pm_mpi_lazy_%d:" % i, "    mov x17, #%d" % i, "    b pm_mpi_lazy"]
    asm += ["    .type pm_mpi_lazy, %function",
            "pm_mpi_lazy:",
            "    stp x29, x30, [sp, #-224]!", "    mov x29, sp",
            "    stp x0, x1, [sp, #16]", "    stp x2, x3, [sp, #32]",
            "    stp x4, x5, [sp, #48]", "    stp x6, x7, [sp, #64]",
            "    stp x8, x17, [sp, #80]",
            "    stp q0, q1, [sp, #96]", "    stp q2, q3, [sp, #128]",
            "    stp q4, q5, [sp, #160]", "    stp q6, q7, [sp, #192]",
            "    mov w0, w17", "    bl pm_mpi_resolve", "    mov x16, x0",
            "    ldp q6, q7, [sp, #192]", "    ldp q4, q5, [sp, #160]",
            "    ldp q2, q3, [sp, #128]", "    ldp q0, q1, [sp, #96]",
            "    ldp x8, x17, [sp, #80]", "    ldp x6, x7, [sp, #64]",
            "    ldp x4, x5, [sp, #48]", "    ldp x2, x3, [sp, #32]",
            "    ldp x0, x1, [sp, #16]",
            "    ldp x29, x30, [sp], #224", "    br x16",
            "    .size pm_mpi_lazy, .-pm_mpi_lazy",
            "#else",
            "#error \"perfmark's MPI stubs exist for x86-64 and aarch64 only\"",
            "#endif",
            "    .section .note.GNU-stack,\"\",%progbits"]
    write(out_s, asm)
    lines = ["/* Generated by wrappers/mpi/gen_mpi_wrappers.py from mpi_functions.def:",
             " * do not edit. The names of the MPI stubs by slot (pm_mpi_abi.h). */",
             "#include <stdint.h>",
             "",
             "const uint64_t pm_mpi_stub_key = 0x%016xull;" % table_key(functions),
             "const int pm_mpi_stub_count = %d;" % len(names),
             "const char *const pm_mpi_stub_names[%d] = {" % len(names)]
    lines += ['    "%s",' % n for n in names]
    lines.append("};")
    write(out_c, lines)


def main(argv):
    usage = (len(argv) == 6 and argv[1] == "wrappers" and argv[5] in FORTRAN_MODES) \
        or (len(argv) == 6 and argv[1] == "stubs")
    if not usage:
        sys.stderr.write(__doc__)
        return 2
    table, header = argv[2], argv[3]
    try:
        functions = read_table(table, read_rules(header))
    except (TableError, OSError) as e:
        sys.stderr.write("gen_mpi_wrappers.py: %s\n" % e)
        return 1
    if argv[1] == "wrappers":
        gen_wrappers(functions, header, argv[4], argv[5])
    else:
        gen_stubs(functions, argv[4], argv[5])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
