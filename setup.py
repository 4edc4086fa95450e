"""Build hook: ship `fleet-repo-template/` inside the wheel as `gitfleet/fleet_template/`, so
`gitfleet init` works after a plain (non-editable) `pip install`. Everything else about the
build is in pyproject.toml. An editable install reads the template from the source tree instead.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

TEMPLATE = Path(__file__).resolve().parent / "fleet-repo-template"


class BuildWithTemplate(build_py):
    """`build_py` that also copies the fleet repository template into the built package."""

    def run(self) -> None:
        super().run()
        if not TEMPLATE.is_dir():
            raise SystemExit(f"fleet-repo-template/ is missing next to {__file__}")
        target = Path(self.build_lib) / "gitfleet" / "fleet_template"
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(TEMPLATE, target, symlinks=False)


setup(cmdclass={"build_py": BuildWithTemplate})
