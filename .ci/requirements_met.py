"""What the requirement checks of CI share: a distribution's requirements (its extras left out)
and the version of each that is installed, looked for where the check says."""

from collections.abc import Callable, Iterator
from importlib.metadata import Distribution, PackageNotFoundError, version

from packaging.requirements import Requirement


def virtualenv_version(name: str) -> str | None:
    """The version of ``name`` installed in the virtualenv, or None."""
    try:
        return version(name)
    except PackageNotFoundError:
        return None


def requirements(dist: Distribution,
                 installed: Callable[[str], str | None] = virtualenv_version,
                 ) -> Iterator[tuple[Requirement, str | None]]:
    """Each requirement of ``dist`` that applies without extras, with the version
    ``installed`` finds of it (None: installed nowhere it looks)."""
    for text in dist.requires or []:
        requirement = Requirement(text)
        if requirement.marker is not None and not requirement.marker.evaluate({"extra": ""}):
            continue
        yield requirement, installed(requirement.name)


def met(requirement: Requirement, installed: str) -> bool:
    """Whether ``installed`` is a version ``requirement`` allows (pre-releases too)."""
    return requirement.specifier.contains(installed, prereleases=True)
