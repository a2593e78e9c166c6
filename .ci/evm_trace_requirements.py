"""Exit non-zero unless evm-trace, installed without its dependencies in the folder given (CI
runs tests/clients/test_evm_trace.py with that folder on the path), has what it imports: each of its
requirements, and theirs, installed in the folder or in the virtualenv. Versions are not held
to the pins: evm-trace 0.3 and eth-pydantic-types pin eth-utils, eth-typing and hexbytes below
ethread's (the test shows they work with ethread's); the pins left unmet are printed. Then
evm-trace's modules the test uses are imported from the folder."""

import importlib
import sys
from importlib.metadata import distributions

from requirements_met import met, requirements, virtualenv_version

folder = sys.argv[1]
here = {d.metadata["Name"].lower().replace("_", "-"): d for d in distributions(path=[folder])}
if "evm-trace" not in here:
    sys.exit(f"evm-trace is not installed in {folder}")


def installed_here_first(name: str) -> str | None:
    """The version in the folder, else the virtualenv's."""
    dist = here.get(name.lower().replace("_", "-"))
    return dist.version if dist is not None else virtualenv_version(name)


missing, unpinned = [], []
for name, dist in sorted(here.items()):
    for requirement, installed in requirements(dist, installed_here_first):
        if installed is None:
            missing.append(f"{name} needs {requirement} (installed nowhere)")
        elif not met(requirement, installed):
            unpinned.append(f"{name}: {requirement} (installed: {installed})")
if missing:
    sys.exit("; ".join(missing))
sys.path.insert(0, folder)
for module in ("evm_trace", "evm_trace.geth"):
    loaded = importlib.import_module(module)
    if not str(loaded.__file__).startswith(folder):
        sys.exit(f"{module} was imported from {loaded.__file__}, not from {folder}")
print(f"evm-trace {here['evm-trace'].version}: every requirement is installed; pins not met "
      f"(by design): {'; '.join(unpinned) or 'none'}")
