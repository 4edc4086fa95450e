"""Helm charts: which folders are charts, their release settings, and the offline-safety checks.

`find_charts` finds chart folders (a directory with `Chart.yaml`; the outermost one owns every
file under it, so vendored subcharts in `charts/` are part of their parent). `read_release` reads
the optional `gitfleet-release.yaml` (kind `HelmRelease`: release name, namespace, values files,
inline values, the key that receives the Fleet values, kubeVersion, includeCRDs); without it the
release name is the folder name and the namespace is the release name. `check_chart` refuses,
before helm runs, what would reach outside the repository or the rendering machine: dependencies
that are not vendored under `charts/` (helm would need a repository or OCI pull), and templates
that call `lookup` (which reads a live cluster) or `getHostByName` (a DNS query). Used by
`renderers.helm` and `renderers.registry`.
"""

from __future__ import annotations

import io
import posixpath
import re
import tarfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from gitfleet.api.errors import FleetError
from gitfleet.api.limits import Limits
from gitfleet.load.yamlio import locate, parse_documents
from gitfleet.repo.tree import Tree
from renderers.base import Unit, read_source

CHART_FILE = "Chart.yaml"
RELEASE_FILE = "gitfleet-release.yaml"
VALUES_FILE = "gitfleet-values.yaml"
RELEASE_KIND = "HelmRelease"
RELEASE_API_VERSIONS = ("gitfleet.io/v1alpha1",)
SPEC_FIELDS = ("valuesFiles", "values", "fleetValues", "kubeVersion", "includeCRDs")
FORBIDDEN_FUNCTIONS = {
    "lookup": "reads objects from a live cluster",
    "getHostByName": "makes a DNS query",
}
_ACTION = re.compile(r"\{\{(.*?)\}\}", re.S)
_COMMENT = re.compile(r"/\*.*?\*/", re.S)
_STRING = re.compile(r'"(?:\\.|[^"\\])*"|`[^`]*`')
_FUNCTION = re.compile(r"(?<![\w.$])(" + "|".join(FORBIDDEN_FUNCTIONS) + r")\b")
_NAME = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
DEFAULT_KUBE_VERSION = "v1.36.0"
_TEMPLATE_SUFFIXES = (".yaml", ".yml", ".tpl", ".txt", ".json")


@dataclass(frozen=True)
class Release:
    """How one chart folder is rendered."""

    name: str
    namespace: str
    values_files: tuple[str, ...] = ()
    """Repository paths, in order (after the chart's values.yaml and gitfleet-values.yaml)."""
    values: Mapping[str, Any] = field(default_factory=dict)
    fleet_values: str = "fleet"
    """Top-level values key that receives the Fleet's `spec.values` ('' = not passed)."""
    kube_version: str = DEFAULT_KUBE_VERSION
    """`.Capabilities.KubeVersion` (always passed: helm's own default depends on how it was built)."""
    include_crds: bool = True


def chart_dir(unit: Unit) -> str:
    """The chart folder of a unit ('' for the repository root)."""
    return posixpath.dirname(unit.path)


def find_charts(files: Iterable[str]) -> list[Unit]:
    """One unit per outermost chart folder, owning every file under it."""
    listed = sorted(files)
    dirs = sorted(posixpath.dirname(p) for p in listed if posixpath.basename(p) == CHART_FILE)
    outer: list[str] = []
    for d in dirs:
        if not any(_under(d, o) for o in outer):
            outer.append(d)
    return [
        Unit("helm", posixpath.join(d, CHART_FILE), tuple(p for p in listed if _under(p, d)))
        for d in outer
    ]


def _under(path: str, directory: str) -> bool:
    return directory == "" or path == directory or path.startswith(directory + "/")


def read_release(tree: Tree, unit: Unit, limits: Limits) -> tuple[Release | None, list[FleetError]]:
    """The release settings of a chart folder (defaults when it has no release file)."""
    base = chart_dir(unit)
    folder = posixpath.basename(base) or "release"
    path = posixpath.join(base, RELEASE_FILE)
    if path not in unit.files:
        return Release(folder, folder), []
    text, error = read_source(tree, path, limits)
    if text is None:
        return None, [error] if error else []
    docs, errors = parse_documents(path, text, limits)
    if errors:
        return None, errors
    if len(docs) != 1:
        return None, [FleetError(path, None, "", "must hold exactly one HelmRelease document")]
    return _release(path, text, docs[0].body, base, folder, unit)


def _release(
    path: str, text: str, body: Mapping[str, Any], base: str, folder: str, unit: Unit
) -> tuple[Release | None, list[FleetError]]:
    errors: list[FleetError] = []

    def fail(field_path: str, message: str) -> None:
        errors.append(FleetError(path, locate(text, 0, field_path), field_path, message))

    if body.get("apiVersion") not in RELEASE_API_VERSIONS or body.get("kind") != RELEASE_KIND:
        fail("kind", f"must be apiVersion {RELEASE_API_VERSIONS[0]}, kind {RELEASE_KIND}")
    for key in sorted(set(body) - {"apiVersion", "kind", "metadata", "spec"}):
        fail(key, "unknown field")
    meta = body.get("metadata") or {}
    spec = body.get("spec") or {}
    if not isinstance(meta, dict) or not isinstance(spec, dict):
        fail("spec", "metadata and spec must be mappings")
        return None, errors
    for key in sorted(set(meta) - {"name", "namespace"}):
        fail(f"metadata.{key}", "unknown field (a HelmRelease has only name and namespace)")
    for key in sorted(set(spec) - set(SPEC_FIELDS)):
        fail(f"spec.{key}", f"unknown field (known: {', '.join(SPEC_FIELDS)})")
    name = str(meta.get("name") or folder)
    namespace = str(meta.get("namespace") or name)
    checked = [("metadata.name", name)]
    checked += [("metadata.namespace", namespace)] if meta.get("namespace") else []
    for key, value in checked:
        if not _NAME.match(value) or len(value) > 53:
            fail(key, f"{value!r} is not a valid release name/namespace (DNS label, <= 53)")
    files = _values_files(spec.get("valuesFiles"), base, unit, fail)
    values = spec.get("values") or {}
    if not isinstance(values, dict):
        fail("spec.values", "must be a mapping")
    fleet_values = spec.get("fleetValues", "fleet")
    if not isinstance(fleet_values, str) or (fleet_values and not _is_key(fleet_values)):
        fail("spec.fleetValues", "must be a values key (letters, digits, _) or '' for none")
    kube_version = spec.get("kubeVersion")
    if kube_version is not None and not re.match(r"^v?\d+\.\d+(\.\d+)?$", str(kube_version)):
        fail("spec.kubeVersion", "must look like 1.36 or v1.36.0")
    include_crds = spec.get("includeCRDs", True)
    if not isinstance(include_crds, bool):
        fail("spec.includeCRDs", "must be true or false")
    if errors:
        return None, errors
    kube = str(kube_version) if kube_version is not None else DEFAULT_KUBE_VERSION
    return Release(name, namespace, files, values, str(fleet_values), kube, include_crds), []


def _is_key(text: str) -> bool:
    return re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", text) is not None


def _values_files(raw: Any, base: str, unit: Unit, fail: Any) -> tuple[str, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        fail("spec.valuesFiles", "must be a list of files in the chart folder")
        return ()
    out: list[str] = []
    for i, entry in enumerate(raw):
        rel = str(entry)
        full = posixpath.normpath(posixpath.join(base, rel))
        if rel.startswith("/") or "://" in rel or not _under(full, base) or full == base:
            fail(f"spec.valuesFiles[{i}]", f"{rel!r} must be a relative path inside the chart")
        elif full not in unit.files:
            fail(f"spec.valuesFiles[{i}]", f"{rel!r} does not exist in the chart folder")
        else:
            out.append(full)
    return tuple(out)


def check_chart(tree: Tree, unit: Unit, limits: Limits) -> list[FleetError]:
    """Refusals found before helm runs: unvendored dependencies, lookup/getHostByName calls."""
    errors = _check_dependencies(tree, unit, chart_dir(unit), limits)
    for path in unit.files:
        if _is_template(path, chart_dir(unit)):
            text, error = read_source(tree, path, limits)
            if text is None:
                errors.extend([error] if error else [])
                continue
            errors.extend(_forbidden_calls(path, text))
        elif path.endswith(".tgz") and "/charts/" in "/" + path[len(chart_dir(unit)) :]:
            errors.extend(_check_archive(tree, unit, path, limits))
    return errors


def _is_template(path: str, base: str) -> bool:
    rel = path[len(base) + 1 :] if base else path
    parts = rel.split("/")
    return "templates" in parts[:-1] and path.endswith(_TEMPLATE_SUFFIXES)


def _forbidden_calls(path: str, text: str, member: str = "") -> list[FleetError]:
    """One error per call of a forbidden function in a Go template's actions."""
    errors = []
    for action in _ACTION.finditer(text):
        code = _STRING.sub('""', _COMMENT.sub("", action.group(1)))
        for call in _FUNCTION.finditer(code):
            name = call.group(1)
            line = text.count("\n", 0, action.start()) + 1
            where = f"{member} line {line}: " if member else ""
            message = (
                f"{where}the template calls {name}, which {FORBIDDEN_FUNCTIONS[name]}; charts are "
                "rendered offline, so it is refused"
            )
            errors.append(FleetError(path, None if member else line, "", message))
    return errors


def _check_archive(tree: Tree, unit: Unit, path: str, limits: Limits) -> list[FleetError]:
    if tree.size(path) > limits.max_file_bytes:
        return [FleetError(path, None, "", "vendored chart archive larger than maxFileBytes")]
    errors: list[FleetError] = []
    try:
        with tarfile.open(fileobj=io.BytesIO(tree.read(path)), mode="r:gz") as archive:
            for member in archive.getmembers():
                if not member.isfile() or member.size > limits.max_file_bytes:
                    continue
                name = member.name
                if not (_is_template(name, "") and "templates" in name.split("/")):
                    continue
                handle = archive.extractfile(member)
                text = handle.read().decode("utf-8", "replace") if handle else ""
                errors.extend(_forbidden_calls(path, text, name))
    except (tarfile.TarError, OSError, EOFError) as exc:
        errors.append(FleetError(path, None, "", f"not a readable chart archive: {exc}"))
    return errors


def _check_dependencies(tree: Tree, unit: Unit, base: str, limits: Limits) -> list[FleetError]:
    chart = posixpath.join(base, CHART_FILE)
    text, error = read_source(tree, chart, limits)
    if text is None:
        return [error] if error else []
    docs, errors = parse_documents(chart, text, limits)
    if errors or not docs:
        return errors or [FleetError(chart, None, "", "Chart.yaml is empty")]
    deps = docs[0].body.get("dependencies") or []
    if not isinstance(deps, list):
        return [FleetError(chart, locate(text, 0, "dependencies"), "dependencies", "not a list")]
    vendored = _vendored(unit.files, base)
    out = []
    for i, dep in enumerate(deps):
        if not isinstance(dep, dict):
            continue
        name, repo = str(dep.get("name", "")), str(dep.get("repository") or "")
        if name in vendored:
            continue
        where = f"from {repo}" if repo else "with no repository"
        message = (
            f"dependency {name!r} ({where}) is not vendored under charts/; charts are rendered "
            "offline, so repository and OCI pulls are refused: run 'helm dependency build' "
            "and commit charts/"
        )
        field_path = f"dependencies[{i}]"
        out.append(FleetError(chart, locate(text, 0, field_path), field_path, message))
    return out


def _vendored(files: Iterable[str], base: str) -> set[str]:
    """Names of subcharts vendored under `<chart>/charts/` (folders or `name-version.tgz`)."""
    prefix = posixpath.join(base, "charts") + "/"
    names = set()
    for path in files:
        if not path.startswith(prefix):
            continue
        rest = path[len(prefix) :].split("/")
        if len(rest) == 2 and rest[1] == CHART_FILE:
            names.add(rest[0])
        elif len(rest) == 1 and rest[0].endswith(".tgz"):
            names.add(re.sub(r"-v?\d+(\.\d+)*([-+].*)?\.tgz$", "", rest[0]))
    return names
