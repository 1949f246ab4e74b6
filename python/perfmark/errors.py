"""The one exception the package raises for a file it cannot read.

Callers catch PerfmarkError and print its message: it names the file and
the reason (not a perfmark file, a newer schema, a damaged or inconsistent
file), never an h5py KeyError or OSError from deep inside a read.
"""


class PerfmarkError(Exception):
    """A file perfmark cannot read, and why (str(e) says it in one line)."""

    def __init__(self, path, reason):
        super().__init__("%s: %s" % (path, reason))
        self.path = path
        self.reason = reason
