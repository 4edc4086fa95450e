"""Scheduling: which member clusters a placement picks (KubeFleet spec §1).

`cycle.schedule` runs one scheduling cycle for a placement from its prior bindings and the
cluster views; `clusters.ClusterView` is what every plugin reads; one module per plugin
(`eligibility`, `clusteraffinity`, `tainttoleration`). Called by `reconciler.pass_`.
"""
