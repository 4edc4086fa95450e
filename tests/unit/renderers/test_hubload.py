"""The hub's loader patches the last snapshot, and the result is always what a fresh build makes.

Every step of each sequence loads the edited tree with one long-lived `FleetLoader` and with
`load_fleet`, and compares the two snapshots field by field, mapping order included. The mode the
loader took is checked too, so the tests prove that the patch ran (not only the fallbacks).
"""

from __future__ import annotations

import dataclasses
import random
import subprocess
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from gitfleet.load.model import FleetSnapshot
from gitfleet.repo import GitTree
from renderers import load_fleet
from renderers.hubload import FleetLoader, changed_paths, structural
from tests.unit.renderers.memtree import MemTree
from tests.unit.renderers.render_helpers import write_files

FLEET = "apiVersion: gitfleet.io/v1alpha1\nkind: Fleet\nmetadata:\n  name: {}\nspec:\n  values:\n    a: 1\n"
MC = (
    "apiVersion: cluster.kubernetes-fleet.io/v1beta1\nkind: MemberCluster\nmetadata:\n"
    "  name: '{}'\n  labels:\n    tier: {}\nspec:\n  heartbeatPeriodSeconds: 60\n"
)
CP = (
    "apiVersion: multicluster.x-k8s.io/v1alpha1\nkind: ClusterProfile\nmetadata:\n"
    "  name: {}\n  namespace: inventory\nspec:\n  clusterManager:\n    name: ocm\n"
)
CRP = (
    "apiVersion: placement.kubernetes-fleet.io/v1beta1\nkind: ClusterResourcePlacement\n"
    "metadata:\n  name: {}\nspec:\n  resourceSelectors:\n  - group: ''\n    version: v1\n"
    "    kind: Namespace\n    name: {}\n"
)
CRO = (
    "apiVersion: placement.kubernetes-fleet.io/v1beta1\nkind: ClusterResourceOverride\n"
    "metadata:\n  name: {}\nspec:\n  clusterResourceSelectors:\n"
    "    - {{group: '', version: v1, kind: Namespace, name: web}}\n"
    "  policy:\n    overrideRules:\n      - clusterSelector: {{}}\n        jsonPatchOverrides:\n"
    "          - {{op: add, path: /metadata/labels, value: {{a: '{}'}}}}\n"
)
NS = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: {}\n"
CM = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {}\n  namespace: web\ndata:\n  k: '{}'\n"
SECRET = (
    "apiVersion: v1\nkind: Secret\nmetadata:\n  name: {}\n  namespace: web\nstringData:\n  p: x\n"
)
LIST = "apiVersion: v1\nkind: List\nitems:\n- {}\n- {}\n"
TENANT = (
    "apiVersion: gitfleet.io/v1alpha1\nkind: Tenant\nmetadata:\n  name: {}\nspec:\n"
    '  paths: ["resources/{}/**"]\n  namespaces: [{}]\n  clusterSelector: {{}}\n'
)


def base_files() -> dict[str, str]:
    """A small fleet with every shape the loader sees: clusters, a ClusterProfile, placements,
    an override, payload, a List, a mixed file (a placement and a manifest) and a Tenant."""
    files = {
        "fleet.yaml": FLEET.format("fleet"),
        "README.md": "# fleet\n",
        "clusters/a.yaml": MC.format("a", "gold"),
        "clusters/b.yaml": MC.format("b", "silver"),
        "clusters/profiles.yaml": CP.format("p1"),
        "placements/web.yaml": CRP.format("web", "web"),
        "placements/mixed.yaml": CRP.format("mixed", "mixed") + "---\n" + NS.format("mixed"),
        "overrides/web.yaml": CRO.format("web-labels", "x"),
        "resources/web/ns.yaml": NS.format("web"),
        "resources/web/list.yaml": LIST.format(
            "{apiVersion: v1, kind: ConfigMap, metadata: {name: l1, namespace: web}}",
            "{apiVersion: v1, kind: ConfigMap, metadata: {name: l2, namespace: web}}",
        ),
        "tenants/shop.yaml": TENANT.format("shop", "shop", "shop"),
    }
    for i in range(6):
        files[f"resources/w/cm{i}.yaml"] = CM.format(f"cm{i}", i)
    return files


def assert_same(got: FleetSnapshot, want: FleetSnapshot) -> None:
    """Equal field by field, mappings in the same order (what the pass iterates)."""
    for field in dataclasses.fields(want):
        if not field.compare:
            continue
        mine, theirs = getattr(got, field.name), getattr(want, field.name)
        if isinstance(theirs, Mapping):
            assert list(mine.items()) == list(theirs.items()), field.name
        else:
            assert mine == theirs, field.name


class Checked:
    """A long-lived loader whose every load is compared with a fresh `load_fleet`."""

    def __init__(self) -> None:
        self.loader = FleetLoader()
        self.modes: list[str] = []
        self.step = 0

    def load(self, files: Mapping[str, str]) -> FleetSnapshot:
        self.step += 1
        tree = MemTree(files, commit=f"c{self.step}")
        got = self.loader.load(tree)
        assert_same(got, load_fleet(tree))
        self.modes.append(self.loader.mode)
        return got


Edit = Callable[[dict[str, str]], None]


def _set(path: str, text: str) -> Edit:
    def edit(files: dict[str, str]) -> None:
        files[path] = text

    return edit


def _drop(path: str) -> Edit:
    def edit(files: dict[str, str]) -> None:
        del files[path]

    return edit


def _rename(old: str, new: str) -> Edit:
    def edit(files: dict[str, str]) -> None:
        files[new] = files.pop(old)

    return edit


def _both(*edits: Edit) -> Edit:
    def edit(files: dict[str, str]) -> None:
        for one in edits:
            one(files)

    return edit


STEPS: list[tuple[str, Edit, str]] = [
    ("edit a resource", _set("resources/w/cm1.yaml", CM.format("cm1", "edited")), "patch"),
    ("unrelated file", _set("README.md", "# fleet, again\n"), "patch"),
    ("add a resource", _set("resources/w/cm9.yaml", CM.format("cm9", 9)), "patch"),
    ("add one first in order", _set("resources/a.yaml", CM.format("first", 0)), "patch"),
    ("remove a resource", _drop("resources/w/cm2.yaml"), "patch"),
    ("rename a file", _rename("resources/w/cm0.yaml", "resources/web/zz.yaml"), "patch"),
    ("relabel a cluster", _set("clusters/a.yaml", MC.format("a", "bronze")), "patch"),
    ("add a cluster", _set("clusters/c.yaml", MC.format("c", "gold")), "patch"),
    ("add one sorted first", _set("clusters/0.yaml", MC.format("0", "gold")), "patch"),
    ("remove a cluster", _drop("clusters/b.yaml"), "patch"),
    ("edit an override", _set("overrides/web.yaml", CRO.format("web-labels", "y")), "patch"),
    ("YAML syntax error", _set("placements/web.yaml", "apiVersion: [\n"), "patch"),
    ("fix it", _set("placements/web.yaml", CRP.format("web", "web")), "patch"),
    (
        "invalid field",
        _set("placements/web.yaml", CRP.format("web", "web") + "  bogus: 1\n"),
        "patch",
    ),
    ("fix the field", _set("placements/web.yaml", CRP.format("web", "web")), "patch"),
    ("plaintext Secret", _set("resources/web/secret.yaml", SECRET.format("s")), "patch"),
    (
        "no kind",
        _set("resources/web/secret.yaml", "apiVersion: v1\nmetadata: {name: s}\n"),
        "patch",
    ),
    (
        "edit the mixed file",
        _set(
            "placements/mixed.yaml",
            CRP.format("mixed", "mixed")
            + "---\n"
            + NS.format("mixed")
            + "---\n"
            + NS.format("mixed2"),
        ),
        "patch",
    ),
    ("kind change: cluster to profile", _set("clusters/c.yaml", CP.format("c")), "patch"),
    (
        "kind change: payload to fleet object",
        _set("resources/w/cm3.yaml", CRP.format("cm3", "web")),
        "patch",
    ),
    (
        "kind change: cluster to placement",
        _set("clusters/0.yaml", CRP.format("zero", "web")),
        "patch",
    ),
    (
        "duplicate inside one file",
        _set("resources/web/dup.yaml", CM.format("d", 1) + "---\n" + CM.format("d", 2)),
        "patch",
    ),
    (
        "edit the List",
        _set(
            "resources/web/list.yaml",
            LIST.format(
                "{apiVersion: v1, kind: ConfigMap, metadata: {name: l1, namespace: web}}", "3"
            ),
        ),
        "patch",
    ),
    (
        "invalid Tenant",
        _set("tenants/shop.yaml", TENANT.format("shop", "shop", "shop") + "  bogus: 1\n"),
        "patch",
    ),
    ("fix the Tenant", _set("tenants/shop.yaml", TENANT.format("shop", "shop", "shop")), "patch"),
    ("duplicate cluster in another file", _set("clusters/a2.yaml", MC.format("a", "gold")), "full"),
    ("edit while duplicated", _set("resources/w/cm1.yaml", CM.format("cm1", "again")), "full"),
    ("fix the duplicate", _drop("clusters/a2.yaml"), "assemble"),
    ("edit after the fix", _set("resources/w/cm1.yaml", CM.format("cm1", "third")), "patch"),
    ("duplicate payload", _set("resources/w/cm1b.yaml", CM.format("cm1", 1)), "full"),
    ("rename the duplicate away", _set("resources/w/cm1b.yaml", CM.format("cm1b", 1)), "assemble"),
    (
        "two new files, one name",
        _both(
            _set("clusters/n1.yaml", MC.format("n", "gold")),
            _set("clusters/n2.yaml", MC.format("n", "tin")),
        ),
        "full",
    ),
    ("both gone", _both(_drop("clusters/n1.yaml"), _drop("clusters/n2.yaml")), "assemble"),
    (
        "a name moves between files",
        _both(_drop("clusters/c.yaml"), _set("clusters/c2.yaml", CP.format("c"))),
        "patch",
    ),
    ("profile and cluster of one name", _set("clusters/p.yaml", MC.format("p1", "gold")), "full"),
    ("remove it", _drop("clusters/p.yaml"), "assemble"),
    (
        "edit fleet.yaml",
        _set("fleet.yaml", FLEET.format("fleet").replace("a: 1", "a: 2")),
        "assemble",
    ),
    ("a second Fleet", _set("placements/fleet2.yaml", FLEET.format("other")), "assemble"),
    ("edit beside it", _set("resources/w/cm1.yaml", CM.format("cm1", "fourth")), "patch"),
    ("edit the second Fleet", _set("placements/fleet2.yaml", FLEET.format("other2")), "assemble"),
    ("remove the second Fleet", _drop("placements/fleet2.yaml"), "assemble"),
    (
        "allow plaintext",
        _set("fleet.yaml", FLEET.format("fleet") + "  secrets:\n    allowPlaintext: true\n"),
        "assemble",
    ),
    ("another Secret", _set("resources/web/secret2.yaml", SECRET.format("s2")), "patch"),
    ("a template", _set("placements/t.yaml.j2", CRP.format("t", "web")), "full"),
    ("edit beside the template", _set("resources/w/cm1.yaml", CM.format("cm1", "fifth")), "full"),
    ("drop the template", _drop("placements/t.yaml.j2"), "assemble"),
    ("a SOPS file", _set("resources/w/s.yaml", SECRET.format("e") + "sops:\n  mac: x\n"), "full"),
    ("edit beside the SOPS file", _set("resources/w/cm1.yaml", CM.format("cm1", "sixth")), "full"),
    ("drop the SOPS file", _drop("resources/w/s.yaml"), "assemble"),
    (
        "SOPS metadata added to a file",
        _set("resources/w/cm1.yaml", CM.format("cm1", 7) + "sops:\n  mac: x\n"),
        "full",
    ),
    ("and taken away", _set("resources/w/cm1.yaml", CM.format("cm1", 8)), "assemble"),
    ("a partial", _set("templates/p.yaml", CM.format("partial", 1)), "patch"),
    ("move a cluster file", _rename("clusters/a.yaml", "more/a.yaml"), "patch"),
]


def test_every_edit_gives_what_a_fresh_build_gives() -> None:
    files = base_files()
    checked = Checked()
    checked.load(files)
    assert checked.modes == ["assemble"]
    for name, edit, mode in STEPS:
        edit(files)
        checked.load(files)
        assert checked.modes[-1] == mode, name


def test_the_steps_reach_errors_notes_and_every_slot_they_name() -> None:
    """The sequence above is not vacuous: the states it compares hold what it says."""
    files = base_files()
    checked = Checked()
    seen: dict[str, FleetSnapshot] = {}
    checked.load(files)
    for name, edit, _ in STEPS:
        edit(files)
        seen[name] = checked.load(files)
    messages = [str(e) for e in seen["YAML syntax error"].errors]
    assert any(m.startswith("placements/web.yaml:2: YAML syntax error") for m in messages), messages
    assert "placements/web.yaml" in seen["invalid field"].error_files
    assert any(
        "duplicate cluster a" in str(e) for e in seen["duplicate cluster in another file"].errors
    )
    assert any("duplicate object" in str(e) for e in seen["duplicate inside one file"].errors)
    assert seen["invalid Tenant"].unloaded_tenants
    assert not seen["fix the Tenant"].unloaded_tenants
    assert "c" in seen["kind change: cluster to profile"].clusters
    assert seen["edit the mixed file"].notes
    assert seen["another Secret"].notes
    staged = [r for r in seen["add one first in order"].resources if r.origin.file > "r"]
    assert staged[0].name == "first"
    assert next(iter(seen["add one sorted first"].clusters)) == "0"


def test_a_snapshot_handed_out_never_changes_afterwards() -> None:
    files = base_files()
    checked = Checked()
    first = checked.load(files)
    kept = MemTree(dict(files), commit="c1")
    files["clusters/c.yaml"] = MC.format("c", "gold")
    files["resources/w/cm1.yaml"] = CM.format("cm1", "changed")
    del files["resources/w/cm2.yaml"]
    checked.load(files)
    assert checked.modes[-1] == "patch"
    assert_same(first, load_fleet(kept))


OPS = {"edit": 6, "add": 4, "drop": 2, "move": 2, "break": 2, "relabel": 3, "clash": 1, "kind": 1}
"""Random edits and their weights. Duplicates come from `clash` and from `add` after `move`;
`heal` (as often as `clash`) removes the files that make them."""


def _random_edit(files: dict[str, str], rng: random.Random) -> None:
    """One random edit; names are drawn from small pools so that duplicates come and go."""
    op = rng.choices([*OPS, "heal"], weights=[*OPS.values(), 2])[0]
    payload = sorted(p for p in files if p.startswith("resources/"))
    name = f"cm{rng.randrange(30)}"
    if op == "edit" and payload:
        path = rng.choice(payload)
        files[path] = files[path].replace("k: '", f"k: '{rng.randrange(3)}")
    elif op == "add":
        files[f"resources/w/{name}.yaml"] = CM.format(name, 0)
    elif op == "drop" and len(files) > 3:
        del files[rng.choice(sorted(p for p in files if p != "fleet.yaml"))]
    elif op == "move" and payload:
        path = rng.choice(payload)
        files[f"resources/x/{path.rsplit('/', 1)[-1]}"] = files.pop(path)
    elif op == "break" and payload:
        files[rng.choice(payload)] = rng.choice(["kind: [\n", "apiVersion: v1\n", "- 1\n"])
    elif op == "relabel":
        cluster = f"c{rng.randrange(6)}"
        files[f"clusters/{cluster}.yaml"] = MC.format(cluster, rng.choice(["gold", "tin"]))
    elif op == "clash":
        files[f"clusters/x{rng.randrange(2)}.yaml"] = MC.format(f"c{rng.randrange(6)}", "gold")
    elif op == "kind" and payload:
        files[rng.choice(payload)] = CRP.format(name, "web")
    elif op == "heal":
        for path in [p for p in files if p.startswith(("clusters/x", "resources/x/"))]:
            del files[path]


@pytest.mark.parametrize("seed", range(6))
def test_random_edit_sequences_give_what_a_fresh_build_gives(seed: int) -> None:
    rng = random.Random(seed)
    files = base_files()
    checked = Checked()
    checked.load(files)
    for _ in range(60):
        for _ in range(rng.choice([1, 1, 1, 2, 3])):
            _random_edit(files, rng)
        checked.load(files)
    assert checked.modes.count("patch") >= 20, checked.modes
    assert "full" in checked.modes or "assemble" in checked.modes[1:], checked.modes


def test_a_git_commit_is_patched_by_its_blob_ids(tmp_path: Path) -> None:
    files = base_files()
    repo = write_files(tmp_path / "repo", files)
    env = ["-c", "user.name=t", "-c", "user.email=t@example.com"]

    def commit() -> GitTree:
        subprocess.run(["git", "-C", str(repo), "add", "-A"], check=True)
        subprocess.run(["git", "-C", str(repo), *env, "commit", "-qm", "x"], check=True)
        return GitTree.open(repo, "main")

    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    loader = FleetLoader()
    for edit in (
        None,
        _set("resources/w/cm1.yaml", CM.format("cm1", "git")),
        _drop("clusters/b.yaml"),
    ):
        if edit is not None:
            edit(files)
            (repo / "clusters/b.yaml").unlink(missing_ok="clusters/b.yaml" not in files)
            write_files(repo, files)
        with commit() as tree:
            assert_same(loader.load(tree), load_fleet(tree))
    assert loader.mode == "patch"


def test_trees_without_blob_ids_are_loaded_in_full(tmp_path: Path) -> None:
    from gitfleet.repo import WorkdirTree

    tree = WorkdirTree(write_files(tmp_path / "fleet", base_files()))
    loader = FleetLoader()
    for _ in range(2):
        assert_same(loader.load(tree), load_fleet(tree))
        assert loader.mode == "full"


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("a/kustomization.yaml", True),
        ("Kustomization", True),
        ("charts/x/Chart.yaml", True),
        ("placements/a.yaml.j2", True),
        ("templates/a.yaml.j2", False),
        ("resources/a.yaml", False),
    ],
)
def test_structural_paths(path: str, expected: bool) -> None:
    assert structural(path) is expected


def test_changed_paths_are_added_removed_and_edited() -> None:
    old: dict[str, Any] = {"a": ("1", 1), "b": ("2", 1), "c": ("3", 1)}
    new: dict[str, Any] = {"a": ("1", 1), "b": ("9", 1), "d": ("4", 1)}
    assert changed_paths(old, new) == {"b", "c", "d"}
    assert changed_paths(old, dict(old)) == set()


def test_a_held_tree_goes_straight_to_load_fleet(monkeypatch: pytest.MonkeyPatch) -> None:
    """While the two files declaring one name are unchanged, no pass assembles parts again."""
    import renderers.hubload as hubload

    plans: list[int] = []
    plan_units = hubload.plan_units
    monkeypatch.setattr(hubload, "plan_units", lambda *a: plans.append(1) or plan_units(*a))
    files = base_files()
    checked = Checked()
    checked.load(files)
    files["clusters/a2.yaml"] = MC.format("a", "gold")
    checked.load(files)
    assert (checked.modes[-1], len(plans)) == ("full", 2)
    for value in range(3):
        files["resources/w/cm1.yaml"] = CM.format("cm1", value)
        checked.load(files)
    assert (checked.modes[-1], len(plans)) == ("full", 2)
    files["clusters/a2.yaml"] = MC.format("a2", "gold")
    checked.load(files)
    assert (checked.modes[-1], len(plans)) == ("assemble", 3)


def test_contenders_are_the_files_that_try_one_key() -> None:
    from gitfleet.api.limits import DEFAULT_LIMITS
    from gitfleet.load.parts import file_part
    from gitfleet.load.patch import contenders
    from gitfleet.load.snapshot import default_fleet
    from gitfleet.load.yamlio import parse_documents

    fleet = default_fleet()

    def part(path: str, text: str) -> Any:
        docs, errors = parse_documents(path, text, DEFAULT_LIMITS)
        return file_part(path, docs, errors, fleet)

    parts = {
        "clusters/a.yaml": part("clusters/a.yaml", MC.format("a", "gold")),
        "clusters/b.yaml": part("clusters/b.yaml", MC.format("b", "gold")),
        "clusters/c.yaml": part("clusters/c.yaml", MC.format("a", "tin")),
        "resources/x.yaml": part("resources/x.yaml", CM.format("x", 1)),
        "resources/y.yaml": part(
            "resources/y.yaml", CM.format("x", 2) + "---\n" + CM.format("y", 1)
        ),
    }
    assert contenders(parts) == {
        "clusters/a.yaml",
        "clusters/c.yaml",
        "resources/x.yaml",
        "resources/y.yaml",
    }
    del parts["clusters/c.yaml"], parts["resources/y.yaml"]
    assert contenders(parts) == frozenset()
