"""The release of ethread: the one place its version is written (``setup.cfg`` reads it; nothing
is read from installed metadata).
"""

__version__ = "0.2.0"
