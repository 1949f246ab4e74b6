"""Reading a perfmark HDF5 file with h5py, as the schema table says.

Every name comes from the table (schema.json) by ID; the policy for a file
that lacks an entry is the table's rule, as in the C reader (analysis/read/):
a NEEDED entry missing makes the file unreadable, a DEFAULT one reads as
zeros or "". Sizes are checked against the table's dimension names (T
threads, R regions, E events, G kernel groups, N rank rows, M messages)
before anything is used, so a damaged file fails here with a reason and
never as an IndexError later.

Nothing large is read at open: the compound tables when first asked for,
the [T,R,...] cell arrays a block of thread rows at a time (cells()).
"""
import contextlib
import os
import signal
import time

import h5py
import numpy as np

from . import schema as _schema
from .errors import PerfmarkError

# The flag names of schema 1 (docs/hdf5-schema.md): a file names newer bits
# itself, as attributes of /region/flags.
BUILTIN_FLAGS = {0x01: "MULTIPLEXED", 0x02: "NOT_COUNTED", 0x04: "LOST_GENERATION",
                 0x08: "MIGRATED", 0x10: "UNBALANCED", 0x20: "SHORT", 0x40: "PARTIAL"}

# Absent DEFAULT entries read as zeros or "", except these (the C reader's
# one other default, analysis/read/read_file.c: no bind_cpu means no CPU was
# bound). The table has no column for defaults; if it gets one, this goes.
NONZERO_DEFAULTS = {"BIND_CPU": -1}

# The errors h5py and numpy raise on a damaged file or an unexpected type.
_H5_ERRORS = (OSError, KeyError, ValueError, RuntimeError, TypeError, IndexError)


def text(v):
    """A string from h5py (bytes, str or numpy bytes, NUL-padded when fixed
    size) as str; invalid UTF-8 becomes U+FFFD."""
    if isinstance(v, np.ndarray) and v.size == 1:
        v = v.reshape(()).item()
    if isinstance(v, (bytes, np.bytes_)):
        return bytes(v).rstrip(b"\0").decode("utf-8", "replace")
    return str(v).rstrip("\0")


class File:
    """An open perfmark file: its sizes checked, its tables read on demand.

    check=True first reads the file's structure and tables in a forked
    child: HDF5 1.10 can crash or spin on damaged metadata (a corrupt heap
    of strings), and a crash there must become an error, not take the
    caller's interpreter down (the report does the same,
    analysis/read/read_guard.c)."""

    def __init__(self, path, check=True):
        self.path = os.fspath(path)
        self.schema = _schema.load()
        self._tables = {}
        if check:
            self._check_in_child()
        self._h5 = self._open()
        try:
            with self.guard("the root attributes"):
                self._check_version()
            with self.guard("the file's structure"):
                self._check_needed()
            self.sizes = self._sizes()
            self._check_shapes()
            self._check_tables()
        except BaseException:
            self._h5.close()
            raise

    def _check_in_child(self):
        """Open the file and read everything but the cells in a child; its
        crash, hang or error becomes this file's PerfmarkError."""
        try:
            size = os.path.getsize(self.path)
        except OSError:
            size = 0
        budget = 10 + size / 100e6  # seconds: the report's stall budget
        rfd, wfd = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: never returns
            os.close(rfd)
            code, msg = 0, ""
            try:
                f = File(self.path, check=False)
                f.touch()
                f.close()
            except PerfmarkError as e:
                code, msg = 1, e.reason
            except BaseException as e:  # anything else is this file's fault too
                code, msg = 1, "cannot read: %s: %s" % (type(e).__name__, e)
            os.write(wfd, msg.encode("utf-8", "replace")[:4000])
            os._exit(code)
        os.close(wfd)
        try:
            status = self._wait(pid, budget)
            msg = os.read(rfd, 4096).decode("utf-8", "replace")
        finally:
            os.close(rfd)
        if status is None:
            self.fail("reading it did not finish in %.0f s: a damaged file?" % budget)
        if os.WIFSIGNALED(status):
            self.fail("damaged file: HDF5 crashed reading it (signal %d)" % os.WTERMSIG(status))
        if os.WEXITSTATUS(status) != 0:
            self.fail(msg or "cannot read it")

    @staticmethod
    def _wait(pid, budget):
        """The child's wait status, or None after killing it at the budget."""
        deadline = time.monotonic() + budget
        delay = 0.001
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                return status
            if time.monotonic() > deadline:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                return None
            time.sleep(delay)
            delay = min(delay * 2, 0.05)

    def touch(self):
        """Read every table, attribute and string the package may use (not
        the cell arrays): what the child of _check_in_child does."""
        for ident in ("EVENTS", "REGIONS", "THREADS"):
            self.table(ident)
        for e in self.schema.attributes("/"):
            self.attr(e.id)
        self.flag_names()
        if self.has("MESSAGES"):
            self.array("MESSAGES")

    # ------------------------------------------------------------ errors

    def fail(self, reason):
        raise PerfmarkError(self.path, reason)

    @contextlib.contextmanager
    def guard(self, what):
        """Turn whatever h5py raises while reading `what` into PerfmarkError."""
        try:
            yield
        except PerfmarkError:
            raise
        except _H5_ERRORS as e:
            self.fail("cannot read %s (damaged file?): %s" % (what, e))

    def _open(self):
        if not os.path.exists(self.path):
            self.fail("no such file")
        if os.path.isdir(self.path):
            self.fail("is a directory")
        try:
            return h5py.File(self.path, "r")
        except _H5_ERRORS as e:
            msg = str(e)
            if "signature" in msg:
                self.fail("not a perfmark file (not an HDF5 file)")
            if "truncated" in msg:
                self.fail("truncated or damaged HDF5 file (%s)" % msg)
            self.fail("cannot open as HDF5: %s" % msg)

    def close(self):
        self._h5.close()

    # ------------------------------------------------------------ checks

    def _check_version(self):
        e = self.schema["SCHEMA_VERSION"]
        if e.name not in self._h5.attrs:
            self.fail("not a perfmark file (no %s attribute)" % e.name)
        v = self._h5.attrs[e.name]
        try:
            v = int(np.asarray(v).reshape(()))
        except (TypeError, ValueError):
            self.fail("%s is not an integer" % e.name)
        if v > self.schema.version:
            self.fail("written by a newer perfmark (schema %d); this reader knows %d"
                      % (v, self.schema.version))
        if v != self.schema.version:
            self.fail("unknown schema version %d; this reader knows %d"
                      % (v, self.schema.version))
        detail = self.schema["DETAIL"].name
        self.is_summary = detail in self._h5.attrs and text(self._h5.attrs[detail]) == "summary"
        if self.is_summary and self.schema["SUMMARY_REGION_STAT"].path not in self._h5:
            # its rows are the kept ranks' only: numbers made of them would
            # be wrong without a word, so say it instead
            self.fail("a summary file without its statistics tables (written before schema "
                      "revision 11): `perfmark report --format json` reads it")

    def _present(self, e):
        """Whether the file holds entry e (its owner assumed present)."""
        h = self._h5
        if e.kind in ("group", "dataset"):
            return e.path in h
        if e.kind == "attribute":
            return e.name == "*" or e.name in h[e.owner].attrs
        dt = h[e.owner].dtype
        return dt.names is not None and e.name in dt.names

    def _group_of(self, e):
        """The GROUP row that holds e, or None at the root."""
        head = e.owner if e.kind in ("attribute", "field") else e.path
        for g in self.schema.entries:
            if g.kind == "group" and g.path != "/" and head.startswith(g.path + "/"):
                return g
        return None

    def needed(self, e):
        """The table's rule: NEEDED entries must be there, except inside a
        group a file may lack (/rank), which holds data only when its first
        dataset does: then its NEEDED entries are needed too."""
        return e.needed and self._group_holds_data(e)

    def _group_holds_data(self, e):
        """False when e sits in a group a file may lack (/rank) whose first
        dataset is absent: the group's rows come from that dataset, so the
        rest of it is ignored, as the C reader does."""
        g = self._group_of(e)
        if g is None or g.needed:
            return True
        first = next(x for x in self.schema.entries if x.kind == "dataset" and
                     self._group_of(x) is g)
        return e is first or first.path in self._h5

    def has(self, ident):
        """Whether the file holds entry `ident` (and it counts)."""
        e = self.schema[ident]
        owner = e.owner
        with self.guard(e.path):
            return ((owner == "/" or owner in self._h5) and self._present(e) and
                    self._group_holds_data(e))

    def _check_needed(self):
        for e in self.schema.entries:
            if self.needed(e) and not self.has(e.id):
                self.fail("%s %s is missing" % (e.kind, e.path))

    def _sizes(self):
        s = self.schema
        with self.guard("the table sizes"):
            n = {"T": len(self._h5[s["THREADS"].path]), "R": len(self._h5[s["REGIONS"].path]),
                 "E": len(self._h5[s["EVENTS"].path]), "G": int(self.attr("KERNEL_GROUPS")),
                 "N": len(self._h5[s["RANK_COUNTS"].path]) if self.has("RANK_COUNTS") else 0,
                 "M": len(self._h5[s["MESSAGES"].path]) if self.has("MESSAGES") else 0}
            # the sampling's tables (revision 7); 0 rows in files without them
            for dim, ident in (("S", "SAMPLES_EVENTS"), ("K", "SAMPLES_MODULES"),
                               ("H", "SAMPLES_HITS"), ("C", "SAMPLES_CHAINS"),
                               ("F", "SAMPLES_FRAMES"), ("I", "SERIES_TIME_NS"),
                               ("J", "SERIES_PROCESS_TIME_NS"), ("P", "NODE_CPU"),
                               ("Q", "NODE_PROCESS_PID"), ("V", "NODE_SERIES_TIME_NS"),
                               ("B", "SUMMARY_STATE"), ("X", "SUMMARY_KEPT_RANK"),
                               ("Y", "SUMMARY_REF_ROW")):
                n[dim] = len(self._h5[s[ident].path]) if self.has(ident) else 0
            # the summary's tables (revision 11): rows and columns
            for rows, cols, ident in (("A", "z", "SUMMARY_REGION_STAT"),
                                      ("D", "l", "SUMMARY_REGION_MORE"),
                                      ("W", "z", "SUMMARY_MPI_STAT"),
                                      ("O", "o", "SUMMARY_RANK_SHARE"),
                                      ("L", "x", "SUMMARY_TOPDOWN"),
                                      ("L", "y", "SUMMARY_TOPDOWN_SLOTS"),
                                      ("D", "k", "SUMMARY_REGION_COUNT")):
                if not self.has(ident) and rows in n:
                    continue  # a table the file lacks sizes nothing
                shape = self._h5[s[ident].path].shape if self.has(ident) else (0, 0)
                n[rows] = shape[0]
                n[cols] = shape[1] if len(shape) > 1 else 0
            for dim, ident in (("u", "SUMMARY_RUN_STAT"), ("j", "SUMMARY_RUN_COUNT")):
                n[dim] = len(self._h5[s[ident].path]) if self.has(ident) else 0
        if n["G"] < 0:
            self.fail("%s is negative" % s["KERNEL_GROUPS"].path)
        return n

    def shape(self, ident):
        """The shape the table gives a dataset in this file."""
        return tuple(self.sizes[d] for d in self.schema[ident].dims)

    def _check_shapes(self):
        for e in self.schema.entries:
            if e.kind != "dataset" or not self.has(e.id):
                continue
            with self.guard(e.path):
                got = self._h5[e.path].shape
            if got != self.shape(e.id):
                self.fail("%s has shape %s, expected %s (%s)" % (
                    e.path, list(got), list(self.shape(e.id)), ",".join(e.dims)))

    def _check_tables(self):
        """What the model relies on: parents before children, every event in
        a kernel group that exists."""
        reg = self.table("REGIONS")
        parent = reg[self.schema["REGIONS_PARENT"].name]
        rows = np.arange(len(parent))
        if len(parent) and ((parent < -1) | (parent >= rows)).any():
            r = int(rows[(parent < -1) | (parent >= rows)][0])
            self.fail("%s row %d: parent %d does not come before it"
                      % (self.schema["REGIONS"].path, r, int(parent[r])))
        group = self.table("EVENTS")[self.schema["EVENTS_GROUP"].name]
        bad = (group < 0) | (group >= self.sizes["G"])
        if bad.any():
            e = int(np.flatnonzero(bad)[0])
            self.fail("%s row %d: group %d, but %s = %d" % (
                self.schema["EVENTS"].path, e, int(group[e]),
                self.schema["KERNEL_GROUPS"].name, self.sizes["G"]))

    # ----------------------------------------------------------- reading

    def attr(self, ident):
        """A root (or other) attribute, or its default when absent."""
        e = self.schema[ident]
        if not self.has(ident):
            return NONZERO_DEFAULTS.get(ident, e.default())
        with self.guard("attribute " + e.path):
            v = self._h5[e.owner].attrs[e.name]
            if e.is_string():
                return text(v)
            v = np.asarray(v).reshape(())
            return float(v) if e.type == "float64" else int(v)

    def table(self, ident):
        """A compound dataset as {field name: numpy array}: every FIELD row
        of the table, absent ones as zeros or "" (strings as object arrays
        of str)."""
        if ident in self._tables:
            return self._tables[ident]
        e = self.schema[ident]
        with self.guard(e.path):
            data = self._h5[e.path][()]
        n = len(data)
        out = {}
        for f in self.schema.fields(ident):
            have = data.dtype.names is not None and f.name in data.dtype.names
            if f.is_string():
                out[f.name] = np.array([text(v) for v in data[f.name]] if have else [""] * n,
                                       dtype=object)
            else:
                dt = _schema.NUMPY_TYPES[f.type]
                with self.guard("%s field %s" % (e.path, f.name)):
                    out[f.name] = data[f.name].astype(dt) if have else np.zeros(n, dt)
        self._tables[ident] = out
        return out

    def field(self, ident):
        """One column of a compound table, by the FIELD row's ID."""
        e = self.schema[ident]
        table = next(x.id for x in self.schema.entries
                     if x.kind == "dataset" and x.path == e.owner)
        return self.table(table)[e.name]

    def array(self, ident, t0=None, t1=None):
        """A dataset (rows t0:t1 of its first dimension when given), or zeros
        of its shape when a file may lack it and does (DEFAULT rule)."""
        e = self.schema[ident]
        shape = self.shape(ident)
        sl = slice(t0, t1)
        if not self.has(ident):
            n = len(range(*sl.indices(shape[0]))) if shape else 0
            return np.zeros((n,) + shape[1:], _schema.NUMPY_TYPES[e.type])
        with self.guard(e.path):
            ds = self._h5[e.path]
            if e.is_string():
                return [text(v) for v in ds[sl]]
            return ds[sl].astype(_schema.NUMPY_TYPES[e.type], copy=False)

    def chunk_rows(self, ident):
        """Rows per chunk along the first dimension, 0 when not chunked."""
        with self.guard(self.schema[ident].path):
            c = self._h5[self.schema[ident].path].chunks
        return c[0] if c else 0

    def flag_names(self):
        """{bit: name}: schema 1's names, then any single-bit integer
        attribute of /region/flags naming a bit they do not (as the C
        reader: attributes in name order, the first name of a bit wins)."""
        names = dict(BUILTIN_FLAGS)
        e = self.schema["REGION_FLAG_NAME"]
        with self.guard("attributes of " + e.owner):
            attrs = self._h5[e.owner].attrs
            for name in sorted(attrs.keys()):
                v = np.asarray(attrs[name])
                if v.size != 1 or v.dtype.kind not in "iu":
                    continue
                bit = int(v.reshape(()))
                if 0 < bit <= 0x80000000 and bit & (bit - 1) == 0 and bit not in names:
                    names[bit] = name
        return names
