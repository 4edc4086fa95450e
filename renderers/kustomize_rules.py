"""Kustomize directories: which ones are units, and the offline-safety rules for their files.

`find_units` finds kustomization directories (a directory with `kustomization.yaml`,
`kustomization.yml` or `Kustomization`): the outermost ones own every file under them, and the
ones another kustomization references as a local directory are bases, not rendered alone.
`check_unit` reads every kustomization file a unit involves, before `kubectl kustomize` runs, and
refuses remote or absolute references, paths that leave the repository, Helm, and
generator/transformer/validator plugins that are not builtin configurations in local files.
Used by `renderers.kustomize` and `renderers.registry`.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from gitfleet.api.errors import FleetError
from gitfleet.api.limits import Limits
from gitfleet.load.yamlio import locate, parse_documents
from gitfleet.repo.tree import Tree
from renderers.base import Unit, read_source

KUSTOMIZATION_FILES = ("kustomization.yaml", "kustomization.yml", "Kustomization")
FORBIDDEN_FIELDS = ("helmCharts", "helmGlobals", "helmChartInflationGenerator")
PLUGIN_FIELDS = ("generators", "transformers", "validators")
FILE_LIST_FIELDS = ("crds", "configurations")
DIR_LIST_FIELDS = ("bases", "components")
PATH_ITEM_FIELDS = ("patches", "patchesJson6902", "replacements")
GENERATOR_FIELDS = ("configMapGenerator", "secretGenerator")
FUNCTION_ANNOTATIONS = ("config.kubernetes.io/function", "config.k8s.io/function")
_REMOTE = re.compile(r"^[a-z][a-z0-9+.-]*::|://|^git@|\?ref=|\?version=|\?submodules=|//", re.I)
_HOST_LIKE = re.compile(r"^[a-z0-9-]+(\.[a-z0-9-]+)+(:[0-9]+)?/", re.I)


def _parent(path: str) -> str:
    return posixpath.dirname(path)


def _under(path: str, directory: str) -> bool:
    return directory == "" or path.startswith(directory + "/")


@dataclass(frozen=True)
class RepoIndex:
    """The repository's files, directories and kustomization files, for lookups."""

    files: frozenset[str]
    dirs: frozenset[str]
    kustomizations: Mapping[str, tuple[str, ...]]
    """Directory ('' for the root) -> kustomization files in it (normally exactly one)."""

    @classmethod
    def of(cls, files: Iterable[str]) -> RepoIndex:
        listed = frozenset(files)
        dirs = {""}
        found: dict[str, list[str]] = {}
        for path in sorted(listed):
            parent = _parent(path)
            while parent not in dirs:
                dirs.add(parent)
                parent = _parent(parent)
            if posixpath.basename(path) in KUSTOMIZATION_FILES:
                found.setdefault(_parent(path), []).append(path)
        kustomizations = {d: tuple(sorted(p, key=_preference)) for d, p in found.items()}
        return cls(listed, frozenset(dirs), kustomizations)


def _preference(path: str) -> int:
    return KUSTOMIZATION_FILES.index(posixpath.basename(path))


def find_units(tree: Tree, limits: Limits) -> tuple[list[Unit], frozenset[str]]:
    """Kustomize units to render, and every file owned by a kustomization directory."""
    index = RepoIndex.of(tree.files())
    kdirs = sorted(index.kustomizations)
    roots = [d for d in kdirs if not any(o != d and _under(d, o) for o in kdirs)]
    referenced: set[str] = set()
    for kdir in kdirs:
        referenced.update(_local_dir_refs(tree, index.kustomizations[kdir][0], index, limits))
    units: list[Unit] = []
    owned: set[str] = set()
    for root in roots:
        files = tuple(sorted(p for p in index.files if _under(p, root)))
        owned.update(files)
        if root not in referenced:
            units.append(Unit("kustomize", index.kustomizations[root][0], files))
    return units, frozenset(owned)


def _local_dir_refs(tree: Tree, kfile: str, index: RepoIndex, limits: Limits) -> set[str]:
    """Directories a kustomization references through resources/bases/components."""
    body = _read_body(tree, kfile, limits)[0] or {}
    refs: set[str] = set()
    for name in ("resources", *DIR_LIST_FIELDS):
        entries = body.get(name)
        for entry in entries if isinstance(entries, list) else []:
            if isinstance(entry, str) and not _REMOTE.search(entry):
                target = posixpath.normpath(posixpath.join(_parent(kfile), entry))
                target = "" if target == "." else target
                if target in index.kustomizations:
                    refs.add(target)
    return refs


def _read_body(
    tree: Tree, kfile: str, limits: Limits
) -> tuple[dict[str, Any] | None, str, list[FleetError]]:
    text, error = read_source(tree, kfile, limits)
    if text is None:
        return None, "", [error] if error else []
    docs, errors = parse_documents(kfile, text, limits, renderer="kustomize")
    if errors:
        return None, text, errors
    if len(docs) != 1:
        return None, text, [FleetError(kfile, None, "", "must hold exactly one YAML document")]
    return docs[0].body, text, []


def check_unit(tree: Tree, unit: Unit, index: RepoIndex, limits: Limits) -> list[FleetError]:
    """Every rule broken by the unit's kustomization and the kustomizations it references."""
    errors: list[FleetError] = []
    seen: set[str] = set()
    queue = [unit.path]
    while queue:
        kfile = queue.pop()
        if kfile in seen:
            continue
        seen.add(kfile)
        if len(index.kustomizations.get(_parent(kfile), ())) > 1:
            found = ", ".join(index.kustomizations[_parent(kfile)])
            errors.append(FleetError(kfile, None, "", f"more than one kustomization file: {found}"))
        body, text, problems = _read_body(tree, kfile, limits)
        errors.extend(problems)
        if body is not None:
            checker = KustomizationCheck(tree, kfile, text, index, limits)
            checker.check(body)
            errors.extend(checker.errors)
            queue.extend(checker.kustomizations)
    return sorted(set(errors))


class KustomizationCheck:
    """Checks one kustomization document; collects errors and referenced kustomization files."""

    def __init__(self, tree: Tree, kfile: str, text: str, index: RepoIndex, limits: Limits):
        self.tree, self.kfile, self.text = tree, kfile, text
        self.index, self.limits = index, limits
        self.base = _parent(kfile)
        self.errors: list[FleetError] = []
        self.kustomizations: list[str] = []

    def fail(self, field: str, message: str) -> None:
        self.errors.append(FleetError(self.kfile, locate(self.text, 0, field), field, message))

    def check(self, body: dict[str, Any]) -> None:
        for name in FORBIDDEN_FIELDS:
            if name in body:
                self.fail(name, "Helm charts are not supported in kustomizations (offline build)")
        for name, want in (("resources", "any"), *((n, "dir") for n in DIR_LIST_FIELDS)):
            for field, entry in self._items(body, name):
                self.path(field, entry, want)
        for name in FILE_LIST_FIELDS:
            for field, entry in self._items(body, name):
                self.path(field, entry, "file")
        for field, entry in self._items(body, "patchesStrategicMerge"):
            if not (isinstance(entry, str) and ("\n" in entry or entry.lstrip().startswith("{"))):
                self.path(field, entry, "file")
        for name in PATH_ITEM_FIELDS:
            for field, item in self._items(body, name):
                if isinstance(item, dict) and "path" in item:
                    self.path(f"{field}.path", item["path"], "file")
        for name in GENERATOR_FIELDS:
            for field, item in self._items(body, name):
                self.generator(field, item)
        for name in PLUGIN_FIELDS:
            for field, entry in self._items(body, name):
                self.plugin(field, entry)
        openapi = body.get("openapi")
        if isinstance(openapi, dict) and "path" in openapi:
            self.path("openapi.path", openapi["path"], "file")

    def _items(self, body: dict[str, Any], name: str) -> list[tuple[str, Any]]:
        value = body.get(name)
        if value is None:
            return []
        if not isinstance(value, list):
            self.fail(name, "must be a list")
            return []
        return [(f"{name}[{i}]", item) for i, item in enumerate(value)]

    def generator(self, field: str, item: Any) -> None:
        if not isinstance(item, dict):
            self.fail(field, "must be a mapping")
            return
        for j, entry in enumerate(item.get("files") or []):
            path = entry.split("=", 1)[-1] if isinstance(entry, str) else entry
            self.path(f"{field}.files[{j}]", path, "file")
        for j, entry in enumerate(item.get("envs") or []):
            self.path(f"{field}.envs[{j}]", entry, "file")
        if "env" in item:
            self.path(f"{field}.env", item["env"], "file")

    def plugin(self, field: str, entry: Any) -> None:
        if isinstance(entry, str) and "\n" in entry:
            self.fail(
                field, "inline plugin configuration is not allowed; use a file in the repository"
            )
            return
        target = self.path(field, entry, "any")
        if target is None or target not in self.index.files:
            return
        text, error = read_source(self.tree, target, self.limits)
        docs, problems = parse_documents(target, text or "", self.limits, renderer="kustomize")
        if error is not None or problems:
            self.fail(field, f"cannot read plugin configuration {target}")
        for doc in docs:
            self.plugin_config(field, target, doc.body)

    def plugin_config(self, field: str, target: str, body: dict[str, Any]) -> None:
        metadata = body.get("metadata")
        annotations = metadata.get("annotations") if isinstance(metadata, dict) else None
        if isinstance(annotations, dict) and any(a in annotations for a in FUNCTION_ANNOTATIONS):
            self.fail(field, f"{target}: KRM function plugins (exec/container) are not allowed")
        elif body.get("apiVersion") != "builtin":
            kind = f"{body.get('apiVersion')}/{body.get('kind')}"
            self.fail(
                field,
                f"{target}: only builtin plugin configurations (apiVersion: builtin) are allowed; "
                f"{kind} needs an external plugin",
            )

    def path(self, field: str, entry: Any, want: str) -> str | None:
        """Check one path reference; returns its repository path when it exists."""
        if not isinstance(entry, str) or not entry.strip():
            self.fail(field, "must be a non-empty string")
            return None
        problem = _path_problem(entry)
        if problem:
            self.fail(field, f"{problem}: {entry!r}")
            return None
        target = posixpath.normpath(posixpath.join(self.base, entry))
        target = "" if target == "." else target
        if target == ".." or target.startswith("../"):
            self.fail(field, f"path escapes the repository: {entry!r}")
            return None
        return self._exists(field, entry, target, want)

    def _exists(self, field: str, entry: str, target: str, want: str) -> str | None:
        if target in self.index.files and want == "dir":
            self.fail(field, f"must name a directory with a kustomization, not a file: {entry!r}")
            return None
        if target in self.index.files:
            if self.tree.size(target) > self.limits.max_file_bytes:
                self.fail(field, f"{target} is larger than limits.maxFileBytes")
            return target
        if target in self.index.dirs and want != "file":
            found = self.index.kustomizations.get(target)
            if not found:
                self.fail(field, f"directory {target or '.'} has no kustomization file")
                return None
            self.kustomizations.append(found[0])
            return target
        self.fail(field, _missing_message(entry, target, want))
        return None


def _path_problem(entry: str) -> str | None:
    if _REMOTE.search(entry):
        return "remote resources are not allowed (kustomizations are built offline)"
    if entry.startswith(("/", "~", "\\")) or re.match(r"^[A-Za-z]:[\\/]", entry):
        return "absolute paths are not allowed"
    return None


def _missing_message(entry: str, target: str, want: str) -> str:
    if _HOST_LIKE.match(entry):
        return f"remote resources are not allowed (kustomizations are built offline): {entry!r}"
    if any(part.startswith(".") for part in target.split("/")):
        return f"{target} is not in the repository (hidden files and folders are not read)"
    kinds = {"file": "file", "dir": "directory", "any": "file or directory"}
    return f"{kinds[want]} {target or '.'} not found in the repository"


def unit_dir(unit: Unit) -> str:
    """The directory of a kustomize unit ('' for the repository root)."""
    return _parent(unit.path)
