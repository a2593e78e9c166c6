"""Exit non-zero unless every requirement of the web3.py installed in the folder given (CI's
web3.py 8 beside the virtualenv's 7) is met by the virtualenv: that web3.py is installed
without its dependencies, so that it runs on exactly the packages the rest of the suite does."""

import sys
from importlib.metadata import distributions

from requirements_met import met, requirements

folder = sys.argv[1]
web3 = next(d for d in distributions(path=[folder]) if d.metadata["Name"] == "web3")
missing = []
for requirement, installed in requirements(web3):
    if installed is None:
        missing.append(f"{requirement} (not installed)")
    elif not met(requirement, installed):
        missing.append(f"{requirement} (installed: {installed})")
if missing:
    sys.exit(f"web3.py {web3.version} needs: " + "; ".join(missing))
print(f"web3.py {web3.version}: every requirement is met by the virtualenv")
