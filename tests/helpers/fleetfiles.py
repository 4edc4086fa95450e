"""Fleet trees for test fixtures: write files into a folder, and build the small YAML documents
most fixtures repeat (a MemberCluster, a Namespace with its `settings` ConfigMap, a
ClusterResourcePlacement of that Namespace, a two-stage strategy, a staged update run).

Every builder returns exactly the text the tests wrote by hand before (same keys, same order),
so a fixture written with them is byte for byte what it was. Called by the integration tests
and tests/unit/reconciler/test_history.py.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

CRP_API = "placement.kubernetes-fleet.io/v1beta1"


def write_tree(root: Path, files: Mapping[str, str | None]) -> None:
    """Write `files` (path relative to `root` -> text; None deletes the file) under `root`."""
    for rel, text in files.items():
        target = root / rel
        if text is None:
            target.unlink()
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)


def format_cluster(name: str, env: str | None = None, api: str = "v1beta1") -> str:
    """A MemberCluster `name`, labelled `env: <env>` when `env` is given."""
    text = f"apiVersion: cluster.kubernetes-fleet.io/{api}\nkind: MemberCluster\n"
    text += f"metadata:\n  name: {name}\n"
    return text + (f"  labels: {{env: {env}}}\n" if env is not None else "")


def format_settings(namespace: str, key: str, value: str) -> str:
    """Namespace `namespace` and, in it, ConfigMap `settings` with the one entry `key: value`."""
    return (
        f"apiVersion: v1\nkind: Namespace\nmetadata:\n  name: {namespace}\n---\n"
        f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n"
        f"  namespace: {namespace}\ndata:\n  {key}: {value}\n"
    )


def format_placement(
    name: str, strategy: str | None = None, annotations: str = "", spec: str = ""
) -> str:
    """ClusterResourcePlacement `name` selecting Namespace `name`; `strategy` is its
    `strategy.type` when given; `annotations` is text put right after the name line; `spec` is
    more of the spec (indented YAML lines, e.g. a policy) put after the selectors."""
    text = f"apiVersion: {CRP_API}\nkind: ClusterResourcePlacement\n"
    text += f"metadata:\n  name: {name}{annotations}\nspec:\n  resourceSelectors:\n"
    text += f'    - {{group: "", version: v1, kind: Namespace, name: {name}}}\n{spec}'
    return text + (f"  strategy:\n    type: {strategy}\n" if strategy is not None else "")


def format_pin(key: str, value: str) -> str:
    """The `annotations` text for `format_placement` that holds the one annotation `key`."""
    return f'\n  annotations:\n    {key}: "{value}"'


def format_two_stages(wait: str | None = None) -> str:
    """ClusterStagedUpdateStrategy `two-stages`: stage `staging` (env staging), then `prod`
    (env prod); with `wait`, a TimedWait of that long after staging."""
    text = f"apiVersion: {CRP_API}\nkind: ClusterStagedUpdateStrategy\n"
    text += "metadata:\n  name: two-stages\nspec:\n  stages:\n    - name: staging\n"
    text += "      labelSelector: {matchLabels: {env: staging}}\n"
    if wait is not None:
        text += f"      afterStageTasks:\n        - type: TimedWait\n          waitTime: {wait}\n"
    return text + "    - name: prod\n      labelSelector: {matchLabels: {env: prod}}\n"


def format_run(
    name: str,
    strategy: str = "two-stages",
    index: str | None = None,
    state: str | None = "Run",
) -> str:
    """ClusterStagedUpdateRun `name` of placement `app` with `strategy`, in `state` (no state
    line when None), on resource snapshot `index` when given."""
    text = f"apiVersion: {CRP_API}\nkind: ClusterStagedUpdateRun\n"
    text += f"metadata:\n  name: {name}\nspec:\n  placementName: app\n"
    text += f"  stagedRolloutStrategyName: {strategy}\n"
    text += f"  state: {state}\n" if state is not None else ""
    return text + (f"  resourceSnapshotIndex: '{index}'\n" if index is not None else "")
