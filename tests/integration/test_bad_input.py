"""Every kind of bad input, one table row each, through `gitfleet render` as a real subprocess.

The base fleet (two clusters, namespace `good` with a ConfigMap, a PickAll placement `good`) is
written to tmp for each row; the row adds or replaces files. Each run must exit 1, print one error
line naming the file (and line where the input has one), the field path and the rule, print no
traceback, and still write the good placement's objects, byte-identical to a clean render.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from gitfleet.repo.workdir import WorkdirTree
from renderers import load_fleet
from tests.integration.fleet_helpers import (
    HAS_KUBECTL,
    NOW,
    Result,
    read_tree,
    run_cli,
    write_files,
)

CLUSTERS = ("c-1", "c-2")
GOOD_FILES = ("configmap_good_settings.yaml", "namespace_good.yaml")
SECRET = "hunter2-s3cr3t-value"

FLEET = """\
apiVersion: gitfleet.io/v1alpha1
kind: Fleet
metadata:
  name: base
spec:
  clusterEligibility: AssumeJoined
"""
CLUSTER = """\
apiVersion: cluster.kubernetes-fleet.io/v1beta1
kind: MemberCluster
metadata:
  name: {name}
"""
PLACEMENT = """\
apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterResourcePlacement
metadata:
  name: {name}
spec:
  resourceSelectors:
    - {{group: "", version: v1, kind: Namespace, name: {namespace}}}
"""
CONFIGMAP = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: {name}
  namespace: good
data:
"""
SECRET_HEAD = """\
apiVersion: v1
kind: Secret
metadata:
  name: credentials
  namespace: good
type: Opaque
"""
BASE: dict[str, str | bytes] = {
    "fleet.yaml": FLEET,
    "clusters/c-1.yaml": CLUSTER.format(name="c-1"),
    "clusters/c-2.yaml": CLUSTER.format(name="c-2"),
    "resources/good/namespace.yaml": "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: good\n",
    "resources/good/configmap.yaml": CONFIGMAP.format(name="settings") + '  a: "1"\n',
    "placements/good.yaml": PLACEMENT.format(name="good", namespace="good")
    + "  policy:\n    placementType: PickAll\n",
}
LATIN1 = CONFIGMAP.format(name="latin1").encode() + b'  v: "caf\xe9"\n'
LATIN1_OFFSET = LATIN1.index(b"\xe9")
BIG_FILE = CONFIGMAP.format(name="big") + f'  a: "{"x" * 3000}"\n'
ENDLESS = (
    "{% for i in range(100000) %}{% for j in range(100000) %}{% for k in range(100000) %}"
    "{% endfor %}{% endfor %}{% endfor %}\n"
)


def alias_bomb() -> str:
    """Eight anchors, each a list of ten aliases of the previous one: 10**8 nodes expanded."""
    lines = []
    for name, prev in zip("abcdefgh", ["", *"abcdefg"], strict=True):
        item = f"*{prev}" if prev else '"x"'
        lines.append(f"  {name}: &{name} [{', '.join([item] * 10)}]\n")
    return "".join(lines)


Setup = Callable[[Path], None]


def row(
    id: str,
    expect: str,
    files: dict[str, str | bytes] | None = None,
    *,
    setup: Setup | None = None,
    never: tuple[str, ...] = (),
    kubectl: bool = False,
    bug: str = "",
) -> Any:
    """One table row. `expect` is the error line: `FILE[:LINE]: [field: ]rule`, where `*`
    stands for any text (the line must start with the first piece and hold the others in order).
    `never`: text that must not appear in stdout/stderr (secret values, leaked data)."""
    marks: list[pytest.MarkDecorator] = []
    if kubectl and not HAS_KUBECTL:
        marks.append(pytest.mark.skip(reason="kustomize rows need kubectl, which is not on PATH"))
    if bug:
        marks.append(pytest.mark.xfail(strict=True, reason=f"BUG: {bug}"))
    return pytest.param(files or {}, expect, setup, never, id=id, marks=marks)


def symlink(link: str, target: str) -> Setup:
    def make(fleet: Path) -> None:
        (fleet / link).parent.mkdir(parents=True, exist_ok=True)
        os.symlink(target, fleet / link)

    return make


def symlink_loop(fleet: Path) -> None:
    os.symlink("loop-b", fleet / "resources/loop-a")
    os.symlink("loop-a", fleet / "resources/loop-b")


def placement(name: str, extra: str = "", namespace: str = "good") -> str:
    return PLACEMENT.format(name=name, namespace=namespace) + extra


def kustomization(body: str) -> dict[str, str | bytes]:
    return {"resources/app/kustomization.yaml": body}


def configmap(path: str, name: str, data: str) -> dict[str, str | bytes]:
    return {path: CONFIGMAP.format(name=name) + data}


def secret(body: str) -> dict[str, str | bytes]:
    return {"resources/secret.yaml": SECRET_HEAD + body}


def limits(**settings: int) -> dict[str, str | bytes]:
    lines = "".join(f"    {key}: {value}\n" for key, value in settings.items())
    return {"fleet.yaml": FLEET + "  limits:\n" + lines}


K = "resources/app/kustomization.yaml"
LINK = "symbolic links are not allowed"
PICKN = '  policy:\n    placementType: PickN\n    numberOfClusters: "two"\n'
FIXED_N = (
    "  policy:\n    placementType: PickFixed\n    clusterNames: [c-1]\n    numberOfClusters: 1\n"
)
PY_TAG = '!!python/object/apply:os.system ["touch PWNED"]'
META = "metadata:\n  name: {name}\n  namespace: good\n"
OTHER_NS = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: other\n"

# fmt: off
ROWS = [
    # paths, names and files
    row("kustomize-path-traversal", f"{K}:2: resources[0]: path escapes the repository",
        kustomization("resources:\n  - ../../../etc/passwd\n"), kubectl=True),
    row("kustomize-absolute-path", f"{K}:2: resources[0]: absolute paths are not allowed",
        kustomization("resources:\n  - /etc/passwd\n"), kubectl=True),
    row("kustomize-remote-base", f"{K}:2: resources[0]: remote resources are not allowed",
        kustomization("resources:\n  - github.com/org/repo//base?ref=v1\n"), kubectl=True),
    row("kustomize-helm-charts", f"{K}:1: helmCharts: Helm charts are not supported",
        kustomization("helmCharts:\n  - name: web\n    repo: https://charts.example.com\n"),
        kubectl=True),
    row("symlink-to-file", f"resources/good/link.yaml: {LINK}",
        setup=symlink("resources/good/link.yaml", "namespace.yaml")),
    row("symlink-outside-the-repo", f"resources/passwd.yaml: {LINK}",
        setup=symlink("resources/passwd.yaml", "/etc/passwd"), never=("root:",)),
    row("symlink-to-directory", f"resources/alias: {LINK}",
        setup=symlink("resources/alias", "good")),
    row("symlink-loop", f"resources/loop-a: {LINK}", setup=symlink_loop),
    row("symlink-dangling", f"resources/dangling.yaml: {LINK}",
        setup=symlink("resources/dangling.yaml", "missing.yaml")),
    row("cluster-name-not-dns1123",
        'clusters/bad.yaml:4: metadata.name: must be a DNS-1123 label*"Bad_Name"',
        {"clusters/bad.yaml": CLUSTER.format(name="Bad_Name")}),
    row("placement-name-not-dns1123-label",
        "placements/bad.yaml:4: metadata.name: must be a DNS-1123 label",
        {"placements/bad.yaml": placement("bad.name")}),
    row("same-object-in-two-files",
        "resources/zz-copy.yaml:4: metadata.name: duplicate object*resources/good/configmap.yaml",
        configmap("resources/zz-copy.yaml", "settings", '  a: "2"\n')),
    row("two-placements-same-object",
        "placements/other-b.yaml:1: spec.resourceSelectors: conflict: Namespace other*other-a",
        {"resources/other.yaml": OTHER_NS,
         "placements/other-a.yaml": placement("other-a", namespace="other"),
         "placements/other-b.yaml": placement("other-b", namespace="other")}),
    row("file-larger-than-maxFileBytes", "resources/big.yaml: file is*larger than limits.",
        {**limits(maxFileBytes=2000), "resources/big.yaml": BIG_FILE}),
    row("not-utf8", f"resources/latin1.yaml:7: not valid UTF-8 text*offset {LATIN1_OFFSET}",
        {"resources/latin1.yaml": LATIN1}),
    # YAML
    row("alias-bomb", "resources/bomb.yaml:12: data.f[7]: *limits.maxYamlNodes",
        configmap("resources/bomb.yaml", "bomb", alias_bomb())),
    row("nesting-10000-deep",
        "resources/deep.yaml:1: a" + "[0]" * 63 + ": nesting is deeper than 64*limits.maxYamlDepth",
        {"resources/deep.yaml": "a: " + "[" * 10_000 + "]" * 10_000 + "\n"}),
    row("custom-tag", "resources/tag.yaml:7: data.a: tag !foo is not allowed",
        configmap("resources/tag.yaml", "tagged", "  a: !foo bar\n")),
    row("python-object-tag",
        "resources/py.yaml:7: data.a: tag !!python/object/apply:os.system is not allowed",
        configmap("resources/py.yaml", "py", f"  a: {PY_TAG}\n")),
    row("missing-apiVersion", "resources/noapi.yaml:1: apiVersion: required field is missing",
        {"resources/noapi.yaml": "kind: ConfigMap\n" + META.format(name="no-api")}),
    row("missing-kind", "resources/nokind.yaml:1: kind: required field is missing",
        {"resources/nokind.yaml": "apiVersion: v1\n" + META.format(name="no-kind")}),
    row("document-is-a-list", "resources/list.yaml:6: document is a sequence, not a mapping",
        {"resources/list.yaml": OTHER_NS + "---\n- a\n- b\n"}),
    row("yaml-syntax-error", "resources/broken.yaml:8: YAML syntax error",
        configmap("resources/broken.yaml", "broken", "  a: [unclosed\n")),
    # placements
    row("placement-unknown-field", 'placements/typo.yaml:8: spec.polcy: unknown field "polcy"',
        {"placements/typo.yaml": placement("typo", "  polcy:\n    placementType: PickAll\n")}),
    row("placement-wrong-type",
        "placements/pickn.yaml:10: spec.policy.numberOfClusters: must be an integer",
        {"placements/pickn.yaml": placement("pickn", PICKN)}),
    row("pickfixed-with-numberOfClusters",
        "placements/fixed.yaml:11: spec.policy.numberOfClusters: "
        "number of clusters must be nil for policy type PickFixed",
        {"placements/fixed.yaml": placement("fixed", FIXED_N)}),
    # templates
    row("jinja-sandbox-escape", "resources/evil.yaml.j2:7: refused by the template sandbox",
        configmap("resources/evil.yaml.j2", "evil",
                  "  a: \"{{ ''.__class__.__mro__[1].__subclasses__() }}\"\n"),
        never=("<class 'subprocess", "<class 'os.")),
    row("jinja-infinite-loop", "resources/loop.yaml.j2: rendering took longer than",
        {**limits(templateTimeoutSeconds=1), "resources/loop.yaml.j2": ENDLESS}),
    row("jinja-undefined-variable", "resources/undef.yaml.j2:7: undefined value*nope",
        configmap("resources/undef.yaml.j2", "undef", '  a: "{{ values.nope }}"\n')),
    row("jinja-include-outside-templates",
        "resources/inc.yaml.j2:1: *may only name files under templates/",
        {"resources/inc.yaml.j2": "{% include '../fleet.yaml' %}\n"}),
    # Secrets: the value never appears
    row("secret-custom-tag", "resources/secret.yaml:8: stringData.password: tag !vault",
        secret(f"stringData:\n  password: !vault {SECRET}\n"), never=(SECRET,)),
    row("secret-syntax-error", "resources/secret.yaml:9: YAML syntax error",
        secret(f'stringData:\n  password: "{SECRET}\n'), never=(SECRET,)),
    row("secret-duplicate-key", "resources/secret.yaml:9: stringData.password: duplicate key",
        secret(f"stringData:\n  password: {SECRET}\n  password: {SECRET}-2\n"), never=(SECRET,)),
    row("secret-larger-than-maxObjectBytes", "resources/secret.yaml:1: *limits.maxObjectBytes",
        {**limits(maxObjectBytes=300), **secret(f"stringData:\n  password: {SECRET * 20}\n")},
        never=(SECRET,)),
    row("secret-data-not-base64", "resources/secret.yaml:8: data.password: *base64",
        secret(f"data:\n  password: {SECRET}!\n"), never=(SECRET,)),
]
# fmt: on


def write_fleet(root: Path, files: dict[str, str | bytes]) -> Path:
    fleet = root / "fleet"
    write_files(fleet, {**BASE, **files})
    return fleet


def render(cwd: Path, fleet: Path, out: Path, now: str = NOW) -> Result:
    return run_cli(cwd, "render", fleet, "--out", out, "--now", now)


def good_objects(out: Path) -> dict[str, bytes]:
    return {
        f"{cluster}/{name}": (out / "clusters" / cluster / "good" / name).read_bytes()
        for cluster in CLUSTERS
        for name in GOOD_FILES
        if (out / "clusters" / cluster / "good" / name).is_file()
    }


@pytest.fixture(scope="module")
def clean_objects(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    """The good placement's objects from a render of the base fleet without bad input."""
    root = tmp_path_factory.mktemp("clean")
    result = render(root, write_fleet(root, {}), root / "out")
    assert result.code == 0 and result.stderr == "", result.output
    objects = good_objects(root / "out")
    assert len(objects) == len(CLUSTERS) * len(GOOD_FILES)
    return objects


def matches(line: str, expect: str) -> bool:
    """`line` starts with the first `*`-separated piece of `expect` and holds the rest in order."""
    first, *rest = expect.split("*")
    if not line.startswith(first):
        return False
    at = len(first)
    for piece in rest:
        found = line.find(piece, at)
        if found < 0:
            return False
        at = found + len(piece)
    return True


@pytest.mark.parametrize(("files", "expect", "setup", "never"), ROWS)
def test_bad_input_is_reported_and_fails_alone(
    tmp_path: Path,
    files: dict[str, str | bytes],
    expect: str,
    setup: Setup | None,
    never: tuple[str, ...],
    clean_objects: dict[str, bytes],
) -> None:
    fleet = write_fleet(tmp_path, files)
    if setup is not None:
        setup(fleet)
    out = tmp_path / "out"
    result = render(tmp_path, fleet, out)
    assert result.code == 1, result.output
    lines = result.stderr.splitlines()
    assert any(matches(line, expect) for line in lines), f"{expect!r} not in:\n{result.stderr}"
    for text in never:
        assert text not in result.output
    assert good_objects(out) == clean_objects
    assert not (tmp_path / "PWNED").exists()
    assert not (fleet / "PWNED").exists()


def test_a_broken_file_keeps_the_objects_already_rendered_from_it(tmp_path: Path) -> None:
    fleet = write_fleet(tmp_path, {})
    out = tmp_path / "out"
    first = render(tmp_path, fleet, out)
    assert first.code == 0, first.output
    before = read_tree(out)
    (fleet / "resources/good/configmap.yaml").write_text(
        CONFIGMAP.format(name="settings") + "  a: [unclosed\n"
    )
    second = render(tmp_path, fleet, out, now="2026-11-21T11:00:00Z")
    assert second.code == 1
    assert "resources/good/configmap.yaml:8: YAML syntax error" in second.stderr
    assert "placements/good.yaml" in second.stderr and "previous output" in second.stderr
    after = read_tree(out)
    kept = [p for p in before if p.startswith("clusters/")]
    assert len(kept) == 3 * len(CLUSTERS) + len(CLUSTERS)  # 2 objects, 2 indexes a cluster
    assert {p: after.get(p) for p in kept} == {p: before[p] for p in kept}
    assert after["state/placements/good.yaml"] == before["state/placements/good.yaml"]


def test_limit_errors_name_the_fleet_yaml_setting(tmp_path: Path) -> None:
    files = {
        **limits(maxFileBytes=2000, templateTimeoutSeconds=1),
        "resources/big.yaml": BIG_FILE,
        "resources/loop.yaml.j2": ENDLESS,
    }
    snapshot = load_fleet(WorkdirTree(write_fleet(tmp_path, files)))
    messages = {e.file: e.message for e in snapshot.errors}
    assert "limits.maxFileBytes" in messages["resources/big.yaml"]
    assert "limits.templateTimeoutSeconds" in messages["resources/loop.yaml.j2"]
