"""The Era1 archive format: e2store records of snappy-framed RLP history.

Public surface: :class:`Era1File` (read one file through its block index),
:class:`Era1Writer` (write one), :func:`accumulator_root`, :func:`export_era1` (from any
backend), :func:`verify_file` and :class:`FormatError` (what damage raises).
"""

from .accumulator import EPOCH_SIZE, accumulator_root
from .e2store import FormatError
from .export import export_era1
from .file import Era1File, Era1Name, era1_filename
from .verify import verify_file
from .writer import Era1Writer

__all__ = [
    "EPOCH_SIZE",
    "Era1File",
    "Era1Name",
    "Era1Writer",
    "FormatError",
    "accumulator_root",
    "era1_filename",
    "export_era1",
    "verify_file",
]
