"""Sampled profiles (/samples) as DataFrames, with call paths.

A file keeps each sampled instruction, and each return address of its call
path, as (object, offset), never as a name (docs/hdf5-schema.md). This
module names them from the objects' own symbol tables (.symtab, else
.dynsym), or from a separate debug file of a stripped object (beside it by
.gnu_debuglink or in its .debug/, or by build-id under PERFMARK_SYMBOL_PATH
and /usr/lib/debug), with nothing but the standard library: a function is
named when a symbol covers the address, else "object+0xOFFSET", as in the
report. C++ names are demangled by c++filt where it is installed. Return
addresses are named at the call (offset - 1), like the report does; the
report also names inlined functions and source lines (elfutils), which
this module does not.
"""
import os
import shutil
import struct
import subprocess
from bisect import bisect_right

_SHT_SYMTAB, _SHT_DYNSYM, _SHT_NOTE = 2, 11, 7
_STT_FUNC = 2


class _Elf:
    """The sections of a 64-bit little-endian ELF file that naming needs."""

    def __init__(self, path):
        with open(path, "rb") as f:
            self.data = f.read()
        d = self.data
        if d[:4] != b"\x7fELF" or d[4] != 2 or d[5] != 1:
            raise ValueError("not a 64-bit little-endian ELF file")
        shoff, = struct.unpack_from("<Q", d, 0x28)
        shentsize, shnum, shstrndx = struct.unpack_from("<HHH", d, 0x3A)
        self.sections = []
        for i in range(shnum):
            name, typ, _, _, off, size, link, _, _, entsize = struct.unpack_from(
                "<IIQQQQIIQQ", d, shoff + i * shentsize)
            self.sections.append([name, typ, off, size, link, entsize])
        if shnum and shstrndx < shnum:
            stroff = self.sections[shstrndx][2]
            for s in self.sections:
                end = d.find(b"\0", stroff + s[0])
                s[0] = d[stroff + s[0]:end].decode("utf-8", "replace")

    def section(self, name):
        return next((s for s in self.sections if s[0] == name), None)

    def build_id(self):
        s = self.section(".note.gnu.build-id")
        if not s:
            return ""
        namesz, descsz, typ = struct.unpack_from("<III", self.data, s[2])
        at = s[2] + 12 + ((namesz + 3) & ~3)
        return self.data[at:at + descsz].hex() if typ == 3 else ""

    def debuglink(self):
        s = self.section(".gnu_debuglink")
        if not s:
            return ""
        raw = self.data[s[2]:s[2] + s[3]]
        return raw[:raw.find(b"\0")].decode("utf-8", "replace")

    def functions(self):
        """(starts, ends, names) of its FUNC symbols, by start; .symtab when
        it has one, else .dynsym."""
        for typ in (_SHT_SYMTAB, _SHT_DYNSYM):
            tab = next((s for s in self.sections if s[1] == typ and s[3]), None)
            if tab is None:
                continue
            strtab = self.sections[tab[4]]
            funcs = []
            for at in range(tab[2], tab[2] + tab[3], 24):
                name, info, _, shndx, value, size = struct.unpack_from("<IBBHQQ", self.data, at)
                if info & 0xF != _STT_FUNC or shndx == 0 or not value:
                    continue
                end = self.data.find(b"\0", strtab[2] + name)
                nm = self.data[strtab[2] + name:end].decode("utf-8", "replace")
                if "@" in nm:
                    nm = nm[:nm.index("@")]  # a symbol version
                funcs.append((value, value + max(size, 1), nm))
            if funcs:
                funcs.sort()
                return [f[0] for f in funcs], [f[1] for f in funcs], [f[2] for f in funcs]
        return [], [], []


def _read_build_id(path):
    try:
        return _Elf(path).build_id()
    except (OSError, ValueError, struct.error):
        return None


def _debug_dirs():
    env = os.environ.get("PERFMARK_SYMBOL_PATH", "")
    return [d for d in env.split(":") if d] + ["/usr/lib/debug"]


def _object_file(path, build_id):
    """The object as it ran: its recorded path if the build-id matches, else
    a file with its build-id under the debug directories."""
    if os.path.exists(path) and (not build_id or _read_build_id(path) == build_id):
        return path
    if len(build_id) < 3:
        return None
    for d in _debug_dirs():
        for cand in ("%s/.build-id/%s/%s" % (d, build_id[:2], build_id[2:]),
                     "%s/.build-id/%s/%s.debug" % (d, build_id[:2], build_id[2:]),
                     os.path.join(d, os.path.basename(path))):
            if os.path.exists(cand) and _read_build_id(cand) == build_id:
                return cand
    return None


def _debug_file(path, elf, build_id):
    """A separate debug file of a stripped object, or None."""
    link = elf.debuglink()
    cands = []
    if link:
        cands += [os.path.join(os.path.dirname(path), link),
                  os.path.join(os.path.dirname(path), ".debug", link)]
    if len(build_id) >= 3:
        cands += ["%s/.build-id/%s/%s.debug" % (d, build_id[:2], build_id[2:])
                  for d in _debug_dirs()]
    for c in cands:
        if os.path.exists(c) and (not build_id or _read_build_id(c) == build_id):
            return c
    return None


class Symbols:
    """Names of (module row, offset) pairs of one file's /samples/modules."""

    def __init__(self, modules):
        self.modules = modules  # [(build_id, path)]
        self._funcs = {}

    def _load(self, m):
        build_id, path = self.modules[m]
        funcs = ([], [], [])
        f = _object_file(path, build_id) if not path.startswith("[") else None
        try:
            if f:
                elf = _Elf(f)
                funcs = elf.functions()
                if not elf.section(".symtab"):
                    dbg = _debug_file(f, elf, build_id)
                    if dbg:
                        more = _Elf(dbg).functions()
                        if more[0]:
                            funcs = more
        except (OSError, ValueError, struct.error):
            funcs = ([], [], [])
        self._funcs[m] = funcs
        return funcs

    def name(self, module, offset):
        if module < 0 or module >= len(self.modules):
            return "[kernel]" if offset >= 1 << 63 else "0x%x" % offset
        starts, ends, names = self._funcs.get(module) or self._load(module)
        i = bisect_right(starts, offset) - 1
        if i >= 0 and offset < ends[i]:
            return names[i]
        return "%s+0x%x" % (os.path.basename(self.modules[module][1]), offset)


def demangle(names):
    """{name: demangled} for the C++ names among `names` (c++filt)."""
    mangled = sorted({n for n in names if n.startswith("_Z")})
    tool = shutil.which("c++filt")
    if not mangled or not tool:
        return {}
    try:
        out = subprocess.run([tool], input="\n".join(mangled), capture_output=True,
                             text=True, timeout=60).stdout.splitlines()
    except (OSError, subprocess.SubprocessError):
        return {}
    return dict(zip(mangled, out)) if len(out) == len(mangled) else {}
