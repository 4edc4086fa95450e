"""An override op that fails is reported once, at the override's own file and line (with the
field path of the op and the clusters it failed on), not once per cluster at the placement."""

from __future__ import annotations

import json
from pathlib import Path

from tests.integration.fleet_helpers import NOW, run_cli, write_files

CLUSTERS = [f"c-{i:02d}" for i in range(30)]
OVERRIDE = """# a comment line first, so the document starts on line 2
apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterResourceOverride
metadata:
  name: labels
spec:
  clusterResourceSelectors:
    - {group: "", version: v1, kind: Namespace, name: shop}
  policy:
    overrideRules:
      - clusterSelector:
          clusterSelectorTerms:
            - labelSelector: {matchLabels: {env: prod}}
        jsonPatchOverrides:
          - {op: add, path: /metadata/labels, value: {team: shop}}
          - {op: remove, path: /spec/nothing-here}
"""


def fleet(root: Path) -> None:
    files = {
        "fleet.yaml": "apiVersion: gitfleet.io/v1alpha1\nkind: Fleet\nmetadata:\n  name: f\n",
        "resources/shop.yaml": "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: shop\n",
        "placements/shop.yaml": (
            "apiVersion: placement.kubernetes-fleet.io/v1beta1\nkind: ClusterResourcePlacement\n"
            "metadata:\n  name: shop\nspec:\n  resourceSelectors:\n"
            "    - {group: '', version: v1, kind: Namespace, name: shop}\n"
        ),
        "overrides/labels.yaml": OVERRIDE,
    }
    for name in CLUSTERS:
        files[f"clusters/{name}.yaml"] = (
            "apiVersion: cluster.kubernetes-fleet.io/v1beta1\nkind: MemberCluster\n"
            f"metadata:\n  name: {name}\n  labels: {{env: prod}}\n"
        )
    write_files(root, files)


def test_a_failing_override_op_is_one_error_at_the_override(tmp_path: Path) -> None:
    fleet(tmp_path / "fleet")
    result = run_cli(tmp_path, "validate", "fleet", "--now", NOW, "--output", "json")
    assert result.code == 1
    errors = json.loads(result.stdout)["errors"]
    assert len(errors) == 1, errors
    error = errors[0]
    assert error.startswith(
        "overrides/labels.yaml:2: spec.policy.overrideRules[0].jsonPatchOverrides[1]: "
        'ClusterResourceOverride "labels": remove /spec/nothing-here failed on Namespace "shop"'
    ), error
    assert "placement shop on 30 cluster(s): c-00, c-01" in error and "(+20)" in error
    assert "placements/shop.yaml" not in error
