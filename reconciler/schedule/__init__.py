"""Scheduling: which member clusters a placement picks (KubeFleet spec §1).

`cycle.schedule` runs KubeFleet's PickAll / PickN / PickFixed cycles for one placement from its
prior bindings and the cluster views. `framework` holds the typed plugin statuses and the runner,
`profile` the default profile, and there is one module per plugin (`clusteraffinity`,
`clustereligibility`, `namespaceaffinity`, `tainttoleration`, `sameplacementaffinity`,
`topologyspreadconstraints`). `inventory` builds the `clusters.ClusterView`s once per pass
(eligibility from `eligibility`). Called by `reconciler.pass_` and `reconciler.placement`.
"""
