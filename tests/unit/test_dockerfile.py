"""The Dockerfile, checked statically (no Docker engine needed): every external program the code
runs is in the image — from a Debian package, or built by `hack/tools.sh` at a pinned version in
the build stage and copied onto PATH — the Python packages and the template are copied, the image
runs as the user the deploy manifests expect, and its header comment names what it ships."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from gitfleet import deploy

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = ROOT / "Dockerfile"
TOOLS_SH = ROOT / "hack" / "tools.sh"

APT = {
    "git": "git",
    "ssh": "openssh-client",  # git runs it for ssh:// and scp-style remotes
    "ssh-keygen": "openssh-client",  # git runs it for SSH signatures (sign and verify)
    "gpg": "gpg",
}
"""Programs from Debian packages: program -> package."""
BUILT = ("helm", "kustomize", "sops")
"""Programs built from their Go modules by hack/tools.sh in the build stage."""
COVERED_BY = {"kubectl": "kustomize"}
"""Programs the code falls back to when another one is missing: the other one is shipped."""

_CALLS = (
    re.compile(r'shutil\.which\(\s*"([\w.-]+)"'),
    re.compile(r'subprocess\.(?:run|Popen|check_output|call)\(\s*\[\s*"([\w.-]+)"'),
    re.compile(r'return \[\s*"([\w.-]+)",\s*"-'),  # argv builders such as gitcmd.git_argv
)


@dataclass(frozen=True)
class Stage:
    """One build stage: its base image, name and instructions (continuation lines joined)."""

    base: str
    name: str
    instructions: tuple[str, ...]


def stages(text: str) -> list[Stage]:
    joined = re.sub(r"\\\n", " ", text)
    found: list[Stage] = []
    lines: list[str] = []
    for raw in joined.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        words = line.split()
        if words[0].upper() == "FROM":
            lines = []
            name = words[3] if len(words) >= 4 and words[2].upper() == "AS" else ""
            found.append(Stage(words[1], name, ()))
        lines.append(line)
        found[-1] = Stage(found[-1].base, found[-1].name, tuple(lines))
    return found


def called_programs() -> set[str]:
    """Every program name the product code runs or looks up on PATH."""
    names: set[str] = set()
    for package in ("gitfleet", "renderers", "reconciler"):
        for path in sorted((ROOT / package).rglob("*.py")):
            text = path.read_text(encoding="utf-8")
            for pattern in _CALLS:
                names.update(pattern.findall(text))
    return names


def apt_packages(stage: Stage) -> set[str]:
    packages: set[str] = set()
    for line in stage.instructions:
        for match in re.finditer(r"apt-get install ((?:[\w.+-]+ ?)+)", line):
            packages.update(w for w in match.group(1).split() if not w.startswith("-"))
    return packages


def tools_sh_arguments(stage: Stage) -> set[str]:
    """The tool names a RUN instruction passes to hack/tools.sh."""
    names: set[str] = set()
    for line in stage.instructions:
        words = line.split()
        if words[0] == "RUN":
            starts = [i + 1 for i, w in enumerate(words) if w.endswith("/tools.sh")]
            names.update(w for s in starts for w in words[s:])
    return names


def final() -> Stage:
    return stages(DOCKERFILE.read_text(encoding="utf-8"))[-1]


def tools_stage() -> Stage:
    named = {s.name: s for s in stages(DOCKERFILE.read_text(encoding="utf-8"))}
    assert "tools" in named, "the Dockerfile has no `AS tools` build stage"
    return named["tools"]


def test_the_scan_finds_the_programs_the_code_is_known_to_run() -> None:
    assert {"git", "gpg", "helm", "kustomize", "sops", "kubectl"} <= called_programs()


def test_every_program_the_code_runs_is_in_the_image() -> None:
    shipped = set(APT) | set(BUILT)
    missing = {
        p for p in called_programs() if p not in shipped and COVERED_BY.get(p) not in shipped
    }
    assert not missing, f"the code runs {sorted(missing)}: install them in the Dockerfile"


def test_debian_packages_are_installed_in_the_final_stage() -> None:
    assert set(APT.values()) <= apt_packages(final())


@pytest.mark.parametrize("program", BUILT)
def test_built_programs_are_built_pinned_and_copied_onto_path(program: str) -> None:
    assert program in tools_sh_arguments(tools_stage())
    copies = [i.split() for i in final().instructions if i.startswith("COPY --from=tools")]
    assert any(
        f"/build/bin/{program}" in words[2:-1] and words[-1] == "/usr/local/bin/"
        for words in copies
    ), copies
    script = TOOLS_SH.read_text(encoding="utf-8")
    assert re.search(rf"^build_{program}\(\) \{{", script, re.M)
    assert re.search(rf"^{program.upper()}_VERSION=v\d+\.\d+\.\d+\b", script, re.M)
    assert f"@${program.upper()}_VERSION" in script


def test_tools_stage_builds_only_with_the_pinned_script() -> None:
    stage = tools_stage()
    assert stage.base.startswith("golang:1.")
    assert any(i == "COPY hack/tools.sh /build/tools.sh" for i in stage.instructions)


def test_python_packages_and_template_are_copied_and_installed() -> None:
    instructions = final().instructions
    copied = {i.split()[1] for i in instructions if i.startswith("COPY ") and "--from" not in i}
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    include = re.search(r"include = \[([^\]]*)\]", pyproject)
    assert include is not None
    packages = {p.strip(' "*') for p in include.group(1).split(",")}
    assert packages | {"fleet-repo-template", "pyproject.toml"} <= copied
    assert any("pip install" in i and ".[agent]" in i for i in instructions)


def test_image_runs_as_the_user_the_manifests_expect() -> None:
    users = [i.split()[1] for i in final().instructions if i.startswith("USER ")]
    assert users[-1:] == ["10001"]
    hub = next(d for d in deploy.hub_manifests("ssh://git@h/f.git") if d["kind"] == "Deployment")
    context = hub["spec"]["template"]["spec"]["containers"][0]["securityContext"]
    assert context["runAsUser"] == int(users[-1])


def test_header_comment_names_every_shipped_program() -> None:
    header = DOCKERFILE.read_text(encoding="utf-8").split("\nFROM ", 1)[0]
    for program in (*APT, *BUILT):
        assert re.search(rf"\b{re.escape(program)}\b", header), program
    assert "not bundled" not in header and "not built yet" not in header


def test_dockerignore_keeps_every_copied_source() -> None:
    ignored = {
        line.strip()
        for line in (ROOT / ".dockerignore").read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.startswith("#")
    }
    copied = {
        w
        for stage in stages(DOCKERFILE.read_text(encoding="utf-8"))
        for i in stage.instructions
        if i.startswith("COPY ") and "--from" not in i
        for w in i.split()[1:-1]
    }
    assert "hack/tools.sh" in copied and "gitfleet" in copied
    assert not {c.split("/")[0] for c in copied} & ignored
