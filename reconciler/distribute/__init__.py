"""Replica distribution across clusters (ReplicaDistribution, spec/replica-distribution.md):
validation, UnitedDeployment's allocator over subsets of clusters, subset patches and the
per-cluster rendering of the workload. Pure modules; the pass glue is `reconciler.distributions`.
"""
