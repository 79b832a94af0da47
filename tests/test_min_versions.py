"""The oldest versions CI tests (``.ci/min-versions.txt``) are the floors pyproject.toml declares,
and the README states them: the three cannot drift apart."""

import re
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]


def _floors(requirements):
    """``{name: floor}`` of requirement strings, each with exactly one ``>=``."""
    floors = {}
    for text in requirements:
        req = Requirement(text)
        lower = [s.version for s in req.specifier if s.operator == ">="]
        assert len(lower) == 1, f"{text!r}: a runtime requirement needs one >= floor"
        floors[canonicalize_name(req.name)] = Version(lower[0])
    return floors


def _runtime_floors():
    """The floors of the dependencies and of the ``all`` extra (every extra a user installs)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return _floors(project["dependencies"]), _floors(project["optional-dependencies"]["all"])


def _pins():
    """``{name: version}`` of the ``==`` lines of .ci/min-versions.txt (caps are not pins)."""
    pins = {}
    for line in (ROOT / ".ci" / "min-versions.txt").read_text().splitlines():
        line = line.split("#")[0].strip()
        if not line:
            continue
        req = Requirement(line)
        for spec in req.specifier:
            if spec.operator == "==":
                pins[canonicalize_name(req.name)] = Version(spec.version)
    return pins


def test_the_pins_are_the_declared_floors():
    core, extras = _runtime_floors()
    assert _pins() == core | extras


def test_the_readme_states_the_core_floors():
    core, _ = _runtime_floors()
    readme = (ROOT / "README.md").read_text()
    section = re.search(r"^Supported versions:.*?(?=\n\n)", readme, flags=re.MULTILINE | re.DOTALL)
    assert section, "README: no 'Supported versions:' paragraph"
    stated = {
        canonicalize_name(name): Version(version)
        for name, version in re.findall(r"([A-Za-z][\w-]*)\s+(\d+(?:\.\d+)+)", section.group(0))
    }
    assert {name: stated.get(name) for name in core} == core
