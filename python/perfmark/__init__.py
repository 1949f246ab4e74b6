"""perfmark: read the HDF5 file of a perfmark run with pandas.

    import perfmark
    with perfmark.open("perfmark-1234.h5") as run:
        run.metadata            # root attributes
        run.regions()           # the region tree
        run.cells()             # one row per (thread, region, event)
        run.summary()           # the report's numbers over threads and across ranks
        run.mpi()               # MPI functions across ranks
        run.by_rank()           # each rank's own value of every region
        run.topdown()           # TopDown per region, where the file has it
        run.derived()           # branch/cache/mem metrics of the CPU-model tables
    d = perfmark.diff("a.h5", "b.h5", metric="page-faults", threshold=5)
    d.table                     # one row per (region, metric), as `perfmark diff`

Files perfmark cannot read raise perfmark.PerfmarkError with the reason.
"""
from .errors import PerfmarkError
from .diff import Diff, diff
from .run import Run

__all__ = ["open", "diff", "Run", "Diff", "PerfmarkError"]


def open(path, check=True):  # noqa: A001 - the package's one entry point, like io.open
    """Open a perfmark HDF5 file (read only). check=True reads its structure
    and tables in a forked child first, so that HDF5 crashing on a damaged
    file becomes a PerfmarkError; check=False skips that (no fork: for a
    process where forking is unwelcome, e.g. one running MPI), and a damaged
    file may then crash the interpreter."""
    return Run(path, check=check)
