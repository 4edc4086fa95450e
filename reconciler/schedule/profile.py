"""The default scheduling profile: which plugin runs at which extension point, in order (§1.3).

PostBatch: TopologySpreadConstraints. PreFilter: ClusterAffinity, NamespaceAffinity,
TopologySpreadConstraints. Filter (first failure wins): ClusterAffinity, ClusterEligibility,
NamespaceAffinity, TaintToleration, SamePlacementAffinity, TopologySpreadConstraints.
PreScore: ClusterAffinity, TopologySpreadConstraints. Score (summed): ClusterAffinity,
SamePlacementAffinity, TopologySpreadConstraints. Used by `cycle`.
"""

from __future__ import annotations

from .clusteraffinity import ClusterAffinityPlugin
from .clustereligibility import ClusterEligibilityPlugin
from .framework import Profile
from .namespaceaffinity import NamespaceAffinityPlugin
from .sameplacementaffinity import SamePlacementAffinityPlugin
from .tainttoleration import TaintTolerationPlugin
from .topologyspreadconstraints import TopologySpreadConstraintsPlugin


def default_profile() -> Profile:
    """KubeFleet's default profile."""
    affinity = ClusterAffinityPlugin()
    eligibility = ClusterEligibilityPlugin()
    namespace = NamespaceAffinityPlugin()
    taints = TaintTolerationPlugin()
    same = SamePlacementAffinityPlugin()
    spread = TopologySpreadConstraintsPlugin()
    return Profile(
        name="default",
        post_batch=(spread,),
        pre_filter=(affinity, namespace, spread),
        filter=(affinity, eligibility, namespace, taints, same, spread),
        pre_score=(affinity, spread),
        score=(affinity, same, spread),
    )


DEFAULT_PROFILE = default_profile()
