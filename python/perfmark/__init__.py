"""perfmark: read the HDF5 file of a perfmark run with pandas.

    import perfmark
    with perfmark.open("perfmark-1234.h5") as run:
        run.metadata            # root attributes
        run.regions()           # the region tree
        run.cells()             # one row per (thread, region, event)
        run.summary()           # the report's numbers over threads and across ranks
        run.mpi()               # MPI functions across ranks

Files perfmark cannot read raise perfmark.PerfmarkError with the reason.
"""
from .errors import PerfmarkError
from .run import Run

__all__ = ["open", "Run", "PerfmarkError"]


def open(path):  # noqa: A001 - the package's one entry point, like io.open
    """Open a perfmark HDF5 file (read only)."""
    return Run(path)
