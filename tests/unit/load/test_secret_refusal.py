"""Plaintext Secrets are refused wherever they come from; SOPS files fail alone without a key.

Each row writes a fleet and loads it like `gitfleet render`: a plaintext `v1/Secret` (plain
YAML, a List item, a Jinja template, a kustomize secretGenerator, a Helm chart, a mixed file
outside resources/) is an error naming file, line and field, never the value; with
`spec.secrets.allowPlaintext: true` it is a note instead. SOPS files without the hub key, with
a bad key or without the `sops` program are an error naming the file, and the rest goes on.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from gitfleet.load.agecrypt import generate_identity
from gitfleet.load.builder import PLAINTEXT_RULE
from gitfleet.load.model import FleetSnapshot
from tests.unit.override.override_helpers import PLAINTEXT_FLEET, load

VALUE = "giraffe-hush-4471"
SECRET = f"""apiVersion: v1
kind: Secret
metadata:
  name: db
  namespace: app
type: Opaque
stringData:
  password: {VALUE}
"""
DATA_SECRET = """apiVersion: v1
kind: Secret
metadata:
  name: db
  namespace: app
data:
  password: Z2lyYWZmZS1odXNoLTQ0NzE=
"""
EMPTY_SECRET = """apiVersion: v1
kind: Secret
metadata:
  name: token
  namespace: app
  annotations: {kubernetes.io/service-account.name: app}
type: kubernetes.io/service-account-token
"""
LIST = f"""apiVersion: v1
kind: List
items:
  - apiVersion: v1
    kind: ConfigMap
    metadata: {{name: settings, namespace: app}}
  - apiVersion: v1
    kind: Secret
    metadata: {{name: db, namespace: app}}
    stringData:
      password: {VALUE}
"""
JINJA = """{% for n in ["a", "b"] %}
---
apiVersion: v1
kind: Secret
metadata:
  name: db-{{ n }}
  namespace: app
stringData:
  password: {{ values.pw }}
{% endfor %}
"""
FLEET_VALUES = f"""apiVersion: gitfleet.io/v1alpha1
kind: Fleet
metadata:
  name: fleet
spec:
  values:
    pw: {VALUE}
"""
ALLOW = PLAINTEXT_FLEET
MIXED = f"""apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterResourcePlacement
metadata:
  name: app
spec:
  resourceSelectors:
    - {{group: "", version: v1, kind: Namespace, name: app}}
---
{SECRET}"""
KUSTOMIZATION = f"""apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
namespace: app
generatorOptions:
  disableNameSuffixHash: true
secretGenerator:
  - name: generated
    literals:
      - password={VALUE}
"""
CHART = "apiVersion: v2\nname: db\nversion: 0.1.0\n"
CHART_SECRET = """apiVersion: v1
kind: Secret
metadata:
  name: chart-db
  namespace: app
stringData:
  password: {{ .Values.password }}
"""
ENVELOPE = f"""apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ResourceEnvelope
metadata:
  name: wrapped
  namespace: app
data:
  "db.yaml":
    apiVersion: v1
    kind: Secret
    metadata: {{name: db, namespace: app}}
    stringData:
      password: {VALUE}
"""
SOPS_LOOKING = f"""{SECRET}sops:
  mac: ENC[AES256_GCM,data:abc,iv:def,tag:ghi,type:str]
  version: 3.13.3
"""

ROWS = [
    ("stringData", {"resources/db.yaml": SECRET}, "resources/db.yaml:7: stringData: "),
    ("data", {"resources/db.yaml": DATA_SECRET}, "resources/db.yaml:6: data: "),
    ("list-item", {"resources/list.yaml": LIST}, "resources/list.yaml:10: items[1].stringData: "),
    (
        "jinja",
        {"fleet.yaml": FLEET_VALUES, "resources/db.yaml.j2": JINJA},
        "resources/db.yaml.j2:",
    ),
    ("mixed-file", {"placements/app.yaml": MIXED}, "placements/app.yaml:15: stringData: "),
    (
        "envelope",
        {"resources/env.yaml": ENVELOPE},
        'resources/env.yaml:11: data["db.yaml"].stringData: ',
    ),
]


def errors_of(fleet: FleetSnapshot) -> list[str]:
    return [str(e) for e in fleet.errors]


def assert_never_shown(texts: list[str]) -> None:
    for text in texts:
        assert VALUE not in text and "Z2lyYWZmZS1odXNoLTQ0NzE" not in text


@pytest.mark.parametrize(("files", "where"), [r[1:] for r in ROWS], ids=[r[0] for r in ROWS])
def test_plaintext_secret_is_refused(tmp_path: Path, files: dict[str, str], where: str) -> None:
    fleet = load(tmp_path, files)
    errors = errors_of(fleet)
    assert any(e.startswith(where) and PLAINTEXT_RULE in e for e in errors), errors
    assert not any(r.kind in ("Secret", "ResourceEnvelope") for r in fleet.resources)
    assert_never_shown(errors)


@pytest.mark.parametrize(("files", "where"), [r[1:] for r in ROWS], ids=[r[0] for r in ROWS])
def test_opt_in_makes_it_a_note(tmp_path: Path, files: dict[str, str], where: str) -> None:
    files = dict(files)
    fleet_yaml = files.pop("fleet.yaml", ALLOW)
    if "allowPlaintext" not in fleet_yaml:
        fleet_yaml += "  secrets:\n    allowPlaintext: true\n"
    fleet = load(tmp_path, {"fleet.yaml": fleet_yaml, **files})
    assert not fleet.errors, errors_of(fleet)
    notes = [str(n) for n in fleet.notes]
    assert any(n.startswith(where) and "allowPlaintext is true" in n for n in notes), notes
    assert any(r.kind in ("Secret", "ResourceEnvelope") for r in fleet.resources)
    assert_never_shown(notes)


def test_secret_without_values_is_accepted(tmp_path: Path) -> None:
    fleet = load(tmp_path, {"resources/token.yaml": EMPTY_SECRET})
    assert not fleet.errors and not fleet.notes
    assert [r.name for r in fleet.resources] == ["token"]


def test_one_refused_secret_fails_alone(tmp_path: Path) -> None:
    cm = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ok, namespace: app}\n"
    fleet = load(tmp_path, {"resources/db.yaml": SECRET, "resources/ok.yaml": cm})
    assert [r.name for r in fleet.resources] == ["ok"]
    assert fleet.error_files == frozenset({"resources/db.yaml"})


@pytest.mark.skipif(
    not (shutil.which("kustomize") or shutil.which("kubectl")),
    reason="neither kustomize nor kubectl is installed (hack/tools.sh builds them)",
)
def test_kustomize_secret_generator_is_refused(tmp_path: Path) -> None:
    fleet = load(tmp_path, {"resources/gen/kustomization.yaml": KUSTOMIZATION})
    errors = errors_of(fleet)
    assert any(
        e.startswith("resources/gen/kustomization.yaml:") and PLAINTEXT_RULE in e for e in errors
    ), errors
    assert_never_shown(errors)


@pytest.mark.skipif(
    shutil.which("helm") is None, reason="helm is not installed (hack/tools.sh builds it)"
)
def test_helm_rendered_secret_is_refused(tmp_path: Path) -> None:
    files = {
        "resources/db/Chart.yaml": CHART,
        "resources/db/values.yaml": f"password: {VALUE}\n",
        "resources/db/templates/secret.yaml": CHART_SECRET,
    }
    errors = errors_of(load(tmp_path, files))
    assert any(e.startswith("resources/db/Chart.yaml:") and PLAINTEXT_RULE in e for e in errors), (
        errors
    )
    assert_never_shown(errors)


def test_sops_file_without_hub_key_fails_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SOPS_AGE_KEY_FILE", raising=False)
    cm = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ok, namespace: app}\n"
    fleet = load(tmp_path, {"resources/db.sops.yaml": SOPS_LOOKING, "resources/ok.yaml": cm})
    errors = errors_of(fleet)
    assert errors == [
        "resources/db.sops.yaml: this file is SOPS-encrypted and the hub has no age key to "
        "decrypt it: set SOPS_AGE_KEY_FILE or pass --age-key-file; the file is not loaded"
    ]
    assert [r.name for r in fleet.resources] == ["ok"]


def test_sops_file_with_a_bad_key_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bad = tmp_path / "bad.key"
    bad.write_text("not a key\n")
    monkeypatch.setenv("SOPS_AGE_KEY_FILE", str(bad))
    errors = errors_of(load(tmp_path, {"resources/db.sops.yaml": SOPS_LOOKING}))
    assert len(errors) == 1 and "must hold AGE-SECRET-KEY-1" in errors[0], errors
    assert "not a key" not in errors[0]


def test_sops_file_without_the_sops_program(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = tmp_path / "hub.key"
    key.write_text(generate_identity()[0] + "\n")
    monkeypatch.setenv("SOPS_AGE_KEY_FILE", str(key))
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    errors = errors_of(load(tmp_path, {"resources/db.sops.yaml": SOPS_LOOKING}))
    assert len(errors) == 1 and "the sops program was not found on PATH" in errors[0], errors


def test_bad_cluster_recipient_is_a_note(tmp_path: Path) -> None:
    cluster = (
        "apiVersion: cluster.kubernetes-fleet.io/v1beta1\nkind: MemberCluster\nmetadata:\n"
        "  name: c1\n  annotations:\n    gitfleet.io/age-recipient: age1oops\n"
    )
    fleet = load(tmp_path, {"clusters/c1.yaml": cluster})
    assert not fleet.errors and list(fleet.clusters) == ["c1"]
    assert [str(n) for n in fleet.notes] == [
        'clusters/c1.yaml:6: metadata.annotations["gitfleet.io/age-recipient"]: is not an age '
        "X25519 recipient (age1... as `age-keygen -y` prints it): this cluster is sent no Secret"
    ]
