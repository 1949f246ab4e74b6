"""The schema table of the perfmark HDF5 file, loaded from schema.json.

schema.json is generated from schema/pm_schema.def (by the C build, or by
setup.py with _schema_def.py) and shipped inside the package: every path,
attribute and field name the reader uses is looked up here by the row's ID
(e.g. "REGION_COUNTS"), so the package never keeps a copy of the paths.
"""
import json
import os

# numpy dtypes of the table's TYPE column (strings are decoded to str).
NUMPY_TYPES = {"int32": "int32", "uint8": "uint8", "uint32": "uint32", "int64": "int64",
               "uint64": "uint64", "float64": "float64"}
STRING_TYPES = ("string", "string64")

JSON_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "schema.json")


class Entry:
    """One row of the table: a group, dataset, attribute or compound field."""

    def __init__(self, row):
        self.id = row["id"]
        self.kind = row["kind"]
        self.path = row["path"]
        self.name = row["name"]
        self.dims = list(row["dims"])
        self.type = row["type"]
        self.since = row["since"]
        self.needed = row["rule"] == "needed"
        self.meaning = row["meaning"]

    @property
    def owner(self):
        """The object holding it: "/region/flags" for "/region/flags@*",
        "/events" for "/events.name", the group for a dataset."""
        if self.kind == "attribute":
            return self.path.split("@", 1)[0]
        if self.kind == "field":
            return self.path.rsplit(".", 1)[0]
        head = self.path.rsplit("/", 1)[0]
        return head or "/"

    def is_string(self):
        return self.type in STRING_TYPES

    def default(self):
        """What an absent DEFAULT entry reads as."""
        if self.is_string():
            return ""
        return 0.0 if self.type == "float64" else 0


class Schema:
    def __init__(self, table):
        self.version = table["schema_version"]
        self.revision = table["revision"]
        self.entries = [Entry(r) for r in table["entries"]]
        self._by_id = {e.id: e for e in self.entries}

    def __getitem__(self, ident):
        return self._by_id[ident]

    def fields(self, dataset_id):
        """The FIELD rows of a compound dataset, in table order."""
        path = self[dataset_id].path
        return [e for e in self.entries if e.kind == "field" and e.owner == path]

    def attributes(self, owner="/"):
        """The ATTR rows on one object (named ones only: not "@*")."""
        return [e for e in self.entries if e.kind == "attribute" and e.owner == owner
                and e.name != "*"]


_loaded = None


def load():
    """The package's schema.json (read once)."""
    global _loaded
    if _loaded is None:
        try:
            with open(JSON_PATH, encoding="utf-8") as f:
                _loaded = Schema(json.load(f))
        except OSError as e:
            raise RuntimeError("perfmark's schema table is missing (%s): install the package "
                               "with `cmake --install` or `pip install ./python`" % e) from e
    return _loaded
