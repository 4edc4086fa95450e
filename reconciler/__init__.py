"""The hub side of gitfleet: from a validated fleet snapshot to the output tree.

`reconciler.pass_.reconcile` is the pure reconcile pass (DESIGN.md §3); `select/` selects and
snapshots resources, `schedule/` picks clusters, `status` builds KubeFleet-shaped status, `state`
holds the pass's memory and `output` lays out the canonical output tree. Called by the CLI.
"""
