"""Placement kinds: §2.1 defaults and every KubeFleet webhook rule with its exact message."""

from __future__ import annotations

from typing import Any

import pytest

from gitfleet.api import ClusterResourcePlacement, parse_object

V1BETA1 = "placement.kubernetes-fleet.io/v1beta1"
NS_SELECTOR = {"group": "", "version": "v1", "kind": "Namespace", "name": "app"}
REQUIRED = "spec.policy.affinity.clusterAffinity.requiredDuringSchedulingIgnoredDuringExecution"
PREFERRED = "spec.policy.affinity.clusterAffinity.preferredDuringSchedulingIgnoredDuringExecution"


def crp(name: str = "web", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": V1BETA1,
        "kind": "ClusterResourcePlacement",
        "metadata": {"name": name},
        "spec": {"resourceSelectors": [NS_SELECTOR], **spec},
    }


def issues_of(body: dict[str, Any]) -> list[tuple[str, str]]:
    model, issues = parse_object(body)
    assert (model is None) == bool(issues)
    return [(i.field, i.message) for i in issues]


def test_minimal_crp_dump_shows_defaults() -> None:
    model, issues = parse_object(crp())
    assert issues == [] and isinstance(model, ClusterResourcePlacement)
    assert model.dump()["spec"] == {
        "resourceSelectors": [{**NS_SELECTOR, "selectionScope": "NamespaceWithResources"}],
        "policy": {"placementType": "PickAll"},
        "strategy": {
            "type": "RollingUpdate",
            "rollingUpdate": {
                "maxUnavailable": "25%",
                "maxSurge": "25%",
                "unavailablePeriodSeconds": 60,
            },
            "applyStrategy": {
                "type": "ClientSideApply",
                "comparisonOption": "PartialComparison",
                "whenToApply": "Always",
                "whenToTakeOver": "Always",
                "serverSideApplyConfig": {"force": False},
            },
        },
        "revisionHistoryLimit": 10,
        "statusReportingScope": "ClusterScopeOnly",
    }


@pytest.mark.parametrize(
    ("spec", "path", "expected"),
    [
        (
            {
                "policy": {
                    "placementType": "PickN",
                    "numberOfClusters": 2,
                    "topologySpreadConstraints": [{"topologyKey": "zone"}],
                }
            },
            ("policy", "topologySpreadConstraints", 0),
            {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"},
        ),
        (
            {"policy": {"tolerations": [{"key": "k", "value": "v"}]}},
            ("policy", "tolerations", 0),
            {"key": "k", "operator": "Equal", "value": "v"},
        ),
        (
            {"strategy": {"type": "External"}},
            ("strategy",),
            {
                "type": "External",
                "applyStrategy": {
                    "type": "ClientSideApply",
                    "comparisonOption": "PartialComparison",
                    "whenToApply": "Always",
                    "whenToTakeOver": "Always",
                    "serverSideApplyConfig": {"force": False},
                },
            },
        ),
        (
            {"strategy": {"rollingUpdate": {"maxSurge": 1}}},
            ("strategy", "rollingUpdate"),
            {"maxUnavailable": "25%", "maxSurge": 1, "unavailablePeriodSeconds": 60},
        ),
        (
            {
                "strategy": {
                    "applyStrategy": {
                        "type": "ServerSideApply",
                        "serverSideApplyConfig": {"force": True},
                    }
                }
            },
            ("strategy", "applyStrategy", "serverSideApplyConfig"),
            {"force": True},
        ),
    ],
)
def test_defaults(spec: dict[str, Any], path: tuple[Any, ...], expected: Any) -> None:
    model, issues = parse_object(crp(**spec))
    assert issues == [] and model is not None
    node: Any = model.dump()["spec"]
    for key in path:
        node = node[key]
    assert node == expected


def test_force_conflicts_spelling_is_accepted() -> None:
    body = crp(
        strategy={
            "applyStrategy": {
                "type": "ServerSideApply",
                "serverSideApplyConfig": {"forceConflicts": True},
            }
        }
    )
    model, _ = parse_object(body)
    assert isinstance(model, ClusterResourcePlacement)
    assert model.spec.strategy.apply_strategy.server_side_apply_config.force_conflicts is True


RULES: list[tuple[str, dict[str, Any], list[tuple[str, str]]]] = [
    (
        "pickfixed-empty",
        {"policy": {"placementType": "PickFixed"}},
        [("spec.policy.clusterNames", "cluster names cannot be empty for policy type PickFixed")],
    ),
    (
        "pickfixed-duplicate",
        {"policy": {"placementType": "PickFixed", "clusterNames": ["a", "a"]}},
        [("spec.policy.clusterNames[1]", "cluster names must be unique for policy type PickFixed")],
    ),
    (
        "pickfixed-not-a-label",
        {"policy": {"placementType": "PickFixed", "clusterNames": ["a.b"]}},
        [
            (
                "spec.policy.clusterNames[0]",
                "must be a DNS-1123 label (lowercase alphanumerics and "
                "'-', at most 63 characters): \"a.b\"",
            )
        ],
    ),
    (
        "pickfixed-forbidden-fields",
        {
            "policy": {
                "placementType": "PickFixed",
                "clusterNames": ["a"],
                "numberOfClusters": 1,
                "affinity": {},
                "topologySpreadConstraints": [{"topologyKey": "z"}],
                "tolerations": [],
            }
        },
        [
            (
                "spec.policy.numberOfClusters",
                "number of clusters must be nil for policy type "
                "PickFixed, only valid for PickN placement policy type",
            ),
            (
                "spec.policy.affinity",
                "affinity must be nil for policy type PickFixed, only valid "
                "for PickAll/PickN placement policy types",
            ),
            (
                "spec.policy.topologySpreadConstraints",
                "topology spread constraints needs to be "
                "empty for policy type PickFixed, only valid for PickN policy type",
            ),
            (
                "spec.policy.tolerations",
                "tolerations needs to be empty for policy type PickFixed, "
                "only valid for PickAll/PickN",
            ),
        ],
    ),
    (
        "pickall-forbidden-fields",
        {
            "policy": {
                "clusterNames": ["a"],
                "numberOfClusters": 1,
                "topologySpreadConstraints": [{"topologyKey": "z"}],
            }
        },
        [
            (
                "spec.policy.clusterNames",
                "cluster names needs to be empty for policy type "
                "PickAll, only valid for PickFixed policy type",
            ),
            (
                "spec.policy.numberOfClusters",
                "number of clusters must be nil for policy type "
                "PickAll, only valid for PickN placement policy type",
            ),
            (
                "spec.policy.topologySpreadConstraints",
                "topology spread constraints needs to be "
                "empty for policy type PickAll, only valid for PickN policy type",
            ),
        ],
    ),
    (
        "pickall-preferred",
        {
            "policy": {
                "affinity": {
                    "clusterAffinity": {
                        "preferredDuringSchedulingIgnoredDuringExecution": [
                            {"weight": 1, "preference": {"labelSelector": {}}}
                        ]
                    }
                }
            }
        },
        [
            (
                PREFERRED.removeprefix("spec.").join(["spec.", ""]),
                "PreferredDuringSchedulingIgnored"
                "DuringExecution will be ignored for placement policy type PickAll",
            )
        ],
    ),
    (
        "pickn-missing-count",
        {"policy": {"placementType": "PickN"}},
        [("spec.policy.numberOfClusters", "number of cluster cannot be nil for policy type PickN")],
    ),
    (
        "pickn-negative-count",
        {"policy": {"placementType": "PickN", "numberOfClusters": -1}},
        [("spec.policy.numberOfClusters", "number of clusters cannot be -1 for policy type PickN")],
    ),
    (
        "pickn-cluster-names",
        {"policy": {"placementType": "PickN", "numberOfClusters": 1, "clusterNames": ["a"]}},
        [
            (
                "spec.policy.clusterNames",
                "cluster names needs to be empty for policy type PickN, "
                "only valid for PickFixed policy type",
            )
        ],
    ),
    (
        "required-sorter",
        {
            "policy": {
                "affinity": {
                    "clusterAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": {
                            "clusterSelectorTerms": [
                                {
                                    "propertySorter": {
                                        "name": "kubernetes-fleet.io/node-count",
                                        "sortOrder": "Ascending",
                                    }
                                }
                            ]
                        }
                    }
                }
            }
        },
        [
            (
                f"{REQUIRED}.clusterSelectorTerms[0].propertySorter",
                "PropertySorter is not allowed "
                "for RequiredDuringSchedulingIgnoredDuringExecution affinity",
            )
        ],
    ),
    (
        "preferred-selector",
        {
            "policy": {
                "placementType": "PickN",
                "numberOfClusters": 1,
                "affinity": {
                    "clusterAffinity": {
                        "preferredDuringSchedulingIgnoredDuringExecution": [
                            {
                                "weight": 5,
                                "preference": {
                                    "propertySelector": {
                                        "matchExpressions": [
                                            {"name": "a", "operator": "Gt", "values": ["1"]}
                                        ]
                                    }
                                },
                            }
                        ]
                    }
                },
            }
        },
        [
            (
                f"{PREFERRED}[0].preference.propertySelector",
                "PropertySelector is not allowed for "
                "PreferredDuringSchedulingIgnoredDuringExecution affinity",
            )
        ],
    ),
    (
        "property-values",
        {
            "policy": {
                "affinity": {
                    "clusterAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": {
                            "clusterSelectorTerms": [
                                {
                                    "propertySelector": {
                                        "matchExpressions": [
                                            {
                                                "name": "cost",
                                                "operator": "Gt",
                                                "values": ["1", "2"],
                                            },
                                            {"name": "cpu", "operator": "Lt", "values": ["x"]},
                                        ]
                                    }
                                }
                            ]
                        }
                    }
                }
            }
        },
        [
            (
                f"{REQUIRED}.clusterSelectorTerms[0].propertySelector.matchExpressions[0].values",
                "invalid requirement on property cost: operator Gt requires exactly one value, "
                "got 2",
            ),
            (
                f"{REQUIRED}.clusterSelectorTerms[0].propertySelector.matchExpressions[1].values[0]",
                'invalid requirement on property cpu: value "x" is not a valid resource.Quantity: '
                "quantities must match the regular expression "
                "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
            ),
        ],
    ),
    (
        "property-name",
        {
            "policy": {
                "affinity": {
                    "clusterAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": {
                            "clusterSelectorTerms": [
                                {
                                    "propertySelector": {
                                        "matchExpressions": [
                                            {
                                                "name": "resources.kubernetes-fleet.io/used-cpu",
                                                "operator": "Gt",
                                                "values": ["1"],
                                            }
                                        ]
                                    }
                                }
                            ]
                        }
                    }
                }
            }
        },
        [
            (
                f"{REQUIRED}.clusterSelectorTerms[0].propertySelector.matchExpressions[0].name",
                "invalid property name resources.kubernetes-fleet.io/used-cpu: invalid capacity "
                "type in resource property name resources.kubernetes-fleet.io/used-cpu, "
                "supported values are [allocatable available total]",
            )
        ],
    ),
    (
        "property-inconsistent",
        {
            "policy": {
                "affinity": {
                    "clusterAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": {
                            "clusterSelectorTerms": [
                                {
                                    "propertySelector": {
                                        "matchExpressions": [
                                            {"name": "n", "operator": "Gt", "values": ["10"]},
                                            {"name": "n", "operator": "Lt", "values": ["5"]},
                                        ]
                                    }
                                }
                            ]
                        }
                    }
                }
            }
        },
        [
            (
                f"{REQUIRED}.clusterSelectorTerms[0].propertySelector.matchExpressions",
                "inconsistent requirements on property n: lower bound (10) and upper bound (5) "
                "exclude all values",
            )
        ],
    ),
    (
        "property-eq-ne",
        {
            "policy": {
                "affinity": {
                    "clusterAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": {
                            "clusterSelectorTerms": [
                                {
                                    "propertySelector": {
                                        "matchExpressions": [
                                            {"name": "n", "operator": "Eq", "values": ["1"]},
                                            {"name": "n", "operator": "Ne", "values": ["1000m"]},
                                        ]
                                    }
                                }
                            ]
                        }
                    }
                }
            }
        },
        [
            (
                f"{REQUIRED}.clusterSelectorTerms[0].propertySelector.matchExpressions",
                "inconsistent requirements on property n: conflicting Eq and Ne on same value 1",
            )
        ],
    ),
    (
        "toleration-exists-value",
        {"policy": {"tolerations": [{"key": "k", "operator": "Exists", "value": "v"}]}},
        [
            (
                "spec.policy.tolerations[0]",
                "invalid toleration {Key:k Operator:Exists Value:v "
                "Effect:}: toleration value needs to be empty, when operator is Exists",
            )
        ],
    ),
    (
        "external-with-rolling",
        {"strategy": {"type": "External", "rollingUpdate": {}}},
        [
            (
                "spec.strategy.rollingUpdate",
                "rollingUpdateConifg is not valid for ExternalRollout strategy type",
            )
        ],
    ),
    (
        "negative-period",
        {"strategy": {"rollingUpdate": {"unavailablePeriodSeconds": -1}}},
        [
            (
                "spec.strategy.rollingUpdate.unavailablePeriodSeconds",
                "unavailablePeriodSeconds must be greater than or equal to 0, got -1",
            )
        ],
    ),
    (
        "intstr-pattern",
        {"strategy": {"rollingUpdate": {"maxUnavailable": "101%"}}},
        [
            (
                "spec.strategy.rollingUpdate.maxUnavailable",
                "should match '^((100|[0-9]{1,2})%|[0-9]+)$'",
            )
        ],
    ),
    (
        "intstr-not-percent",
        {"strategy": {"rollingUpdate": {"maxSurge": "5"}}},
        [
            (
                "spec.strategy.rollingUpdate.maxSurge",
                'maxSurge "5" is invalid: invalid type: string is not a percentage',
            )
        ],
    ),
    (
        "intstr-negative",
        {"strategy": {"rollingUpdate": {"maxSurge": -2}}},
        [
            (
                "spec.strategy.rollingUpdate.maxSurge",
                "maxSurge must be greater than or equal to 0, got `-2`",
            )
        ],
    ),
    (
        "ssa-config-without-ssa",
        {"strategy": {"applyStrategy": {"serverSideApplyConfig": {"force": True}}}},
        [
            (
                "spec.strategy.applyStrategy.serverSideApplyConfig",
                "serverSideApplyConfig is only valid for ServerSideApply strategy type",
            )
        ],
    ),
    (
        "mirror-without-destination",
        {"strategy": {"reportBackStrategy": {"type": "Mirror"}}},
        [
            (
                "spec.strategy.reportBackStrategy.destination",
                "when reportBackStrategy.type is 'Mirror', a destination must be specified",
            )
        ],
    ),
    (
        "namespace-accessible",
        {
            "statusReportingScope": "NamespaceAccessible",
            "resourceSelectors": [{"group": "", "version": "v1", "kind": "ConfigMap"}],
        },
        [
            (
                "spec.statusReportingScope",
                "when statusReportingScope is NamespaceAccessible, "
                "exactly one resourceSelector with kind 'Namespace' is required",
            )
        ],
    ),
    (
        "selector-name-and-labels",
        {"resourceSelectors": [{**NS_SELECTOR, "labelSelector": {}}]},
        [
            (
                "spec.resourceSelectors[0]",
                "the labelSelector and name fields are mutually "
                "exclusive in selector {Group: Version:v1 Kind:Namespace Name:app}",
            )
        ],
    ),
    (
        "selector-label-rules",
        {
            "resourceSelectors": [
                {
                    "group": "",
                    "version": "v1",
                    "kind": "Namespace",
                    "labelSelector": {"matchExpressions": [{"key": "a", "operator": "In"}]},
                }
            ]
        },
        [
            (
                "spec.resourceSelectors[0].labelSelector.matchExpressions[0].values",
                "for 'in', 'notin' operators, values set can't be empty",
            )
        ],
    ),
]


@pytest.mark.parametrize(("spec", "expected"), [r[1:] for r in RULES], ids=[r[0] for r in RULES])
def test_webhook_rules(spec: dict[str, Any], expected: list[tuple[str, str]]) -> None:
    assert issues_of(crp(**spec)) == expected


@pytest.mark.parametrize(
    ("name", "message"),
    [
        (
            "Web",
            "must be a DNS-1123 label (lowercase alphanumerics and '-', at most 63 "
            'characters): "Web"',
        ),
        (
            "a" * 64,
            "must be a DNS-1123 label (lowercase alphanumerics and '-', at most 63 "
            f'characters): "{"a" * 64}"',
        ),
    ],
)
def test_placement_name_rule(name: str, message: str) -> None:
    assert issues_of(crp(name=name)) == [("metadata.name", message)]


def rp(namespace: str | None, **spec: Any) -> dict[str, Any]:
    body = crp(**spec) | {"kind": "ResourcePlacement"}
    if namespace is not None:
        body["metadata"] = {"name": "web", "namespace": namespace}
    return body


@pytest.mark.parametrize(
    ("namespace", "spec", "expected"),
    [
        (
            "apps",
            {"resourceSelectors": [{"group": "apps", "version": "v1", "kind": "Deployment"}]},
            [],
        ),
        (
            None,
            {"resourceSelectors": [{"group": "", "version": "v1", "kind": "ConfigMap"}]},
            [("metadata.namespace", "required field is missing")],
        ),
        (
            "Apps",
            {"resourceSelectors": [{"group": "", "version": "v1", "kind": "ConfigMap"}]},
            [
                (
                    "metadata.namespace",
                    "must be a DNS-1123 label (lowercase alphanumerics and '-', at "
                    'most 63 characters): "Apps"',
                )
            ],
        ),
        (
            "apps",
            {},
            [
                (
                    "spec.resourceSelectors[0].kind",
                    "the resource is not found in schema (please "
                    "retry) or it is a cluster scoped resource: /v1, Kind=Namespace",
                )
            ],
        ),
    ],
)
def test_resource_placement_rules(
    namespace: str | None, spec: dict[str, Any], expected: list[tuple[str, str]]
) -> None:
    assert issues_of(rp(namespace, **spec)) == expected


def test_v1_crp_and_v1_rp_are_accepted() -> None:
    assert issues_of(crp() | {"apiVersion": "placement.kubernetes-fleet.io/v1"}) == []
    deployments = [{"group": "apps", "version": "v1", "kind": "Deployment"}]
    body = rp("apps", resourceSelectors=deployments)
    assert issues_of(body | {"apiVersion": "placement.kubernetes-fleet.io/v1"}) == []


def test_status_is_accepted_and_ignored() -> None:
    body = crp() | {"status": {"conditions": [{"type": "x"}], "observedResourceIndex": "0"}}
    model, issues = parse_object(body)
    assert issues == [] and model is not None
