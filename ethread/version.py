"""The release of ethread: the one place its version is written.

``setup.cfg`` reads it (``version = attr: ethread.version.__version__``) when a distribution is
built, ``ethread --version`` prints it, and ``web3_clientVersion`` answers it; nothing is read
from installed metadata, so a checkout and the wheel built from it say the same.
"""

__version__ = "0.2.0"
