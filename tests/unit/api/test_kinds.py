"""Overrides, staged rollouts, evictions/budgets, Fleet and the cluster inventory kinds."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from gitfleet.api import (
    ClusterApprovalRequest,
    ClusterProfile,
    ClusterResourceOverride,
    ClusterResourcePlacement,
    ClusterResourcePlacementDisruptionBudget,
    Fleet,
    Limits,
    MemberCluster,
    ResourceOverride,
    check_budget_for_placement,
    check_override_conflicts,
    parse_object,
    to_member_cluster,
)
from gitfleet.api.errors import FieldIssue

PLACEMENT = "placement.kubernetes-fleet.io/v1beta1"
RULE_OK = {
    "clusterSelector": {},
    "jsonPatchOverrides": [
        {"op": "add", "path": "/metadata/labels/env", "value": "${MEMBER-CLUSTER-NAME}"}
    ],
}


def issues_of(body: dict[str, Any]) -> list[tuple[str, str]]:
    model, issues = parse_object(body)
    assert (model is None) == bool(issues)
    return [(i.field, i.message) for i in issues]


def cro(
    name: str = "cro",
    selectors: list[dict[str, Any]] | None = None,
    rules: list[dict[str, Any]] | None = None,
    **spec: Any,
) -> dict[str, Any]:
    return {
        "apiVersion": PLACEMENT,
        "kind": "ClusterResourceOverride",
        "metadata": {"name": name},
        "spec": {
            "clusterResourceSelectors": selectors
            or [{"group": "", "version": "v1", "kind": "Namespace", "name": "app"}],
            "policy": {"overrideRules": rules or [RULE_OK]},
            **spec,
        },
    }


def ro(
    name: str = "ro", namespace: str = "apps", rules: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    return {
        "apiVersion": PLACEMENT,
        "kind": "ResourceOverride",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "resourceSelectors": [
                {"group": "apps", "version": "v1", "kind": "Deployment", "name": "web"}
            ],
            "policy": {"overrideRules": rules or [RULE_OK]},
        },
    }


def patch_rule(*ops: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {
            "clusterSelector": {"clusterSelectorTerms": [{"labelSelector": {}}]},
            "jsonPatchOverrides": list(ops),
        }
    ]


PATCH = "spec.policy.overrideRules[0].jsonPatchOverrides[0]"


@pytest.mark.parametrize(
    ("path", "problem"),
    [
        ("/spec/replicas", None),
        ("/metadata/labels/x", None),
        ("/metadata/annotations", None),
        ("/Kind", None),
        ("/apiVersionabc", None),
        ("/metadata/labels/apiVersion", None),
        ("", "path cannot be empty"),
        ("spec", "path must start with /"),
        ("/kind", "cannot override typeMeta fields"),
        ("/apiVersion", "cannot override typeMeta fields"),
        ("/metadata", "cannot override field metadata"),
        ("/metadata/name", "cannot override metadata fields except annotations and labels"),
        ("/metadata/finalizers/0", "cannot override metadata fields except annotations and labels"),
        ("/status/x", "cannot override status fields"),
        ("/spec//x", "path cannot contain empty string"),
        ("/", "path cannot contain empty string"),
        ("/spec/ ", "path cannot contain empty string"),
    ],
)
def test_override_paths(path: str, problem: str | None) -> None:
    body = cro(rules=patch_rule({"op": "replace", "path": path, "value": 1}))
    expected = (
        []
        if problem is None
        else [(f"{PATCH}.path", f"invalid JSONPatchOverride {{op:replace path:{path}}}: {problem}")]
    )
    assert issues_of(body) == expected


RULE_CASES: list[tuple[str, dict[str, Any], list[tuple[str, str]]]] = [
    ("ok", cro(), []),
    (
        "remove-with-value",
        cro(rules=patch_rule({"op": "remove", "path": "/spec/x", "value": None})),
        [
            (
                f"{PATCH}.value",
                "invalid JSONPatchOverride {op:remove path:/spec/x}: remove operation "
                "cannot have value",
            )
        ],
    ),
    ("remove-without-value", cro(rules=patch_rule({"op": "remove", "path": "/spec/x"})), []),
    (
        "delete-with-patches",
        cro(rules=[{**RULE_OK, "overrideType": "Delete"}]),
        [
            (
                "spec.policy.overrideRules[0].jsonPatchOverrides",
                "invalid JSONPatchOverrides: "
                "JSONPatchOverrides cannot be set when the override type is Delete",
            )
        ],
    ),
    ("delete", cro(rules=[{"clusterSelector": {}, "overrideType": "Delete"}]), []),
    (
        "patch-empty",
        cro(rules=[{"clusterSelector": {}}]),
        [
            (
                "spec.policy.overrideRules[0].jsonPatchOverrides",
                "invalid JSONPatchOverrides: JSONPatchOverrides cannot be empty",
            )
        ],
    ),
    (
        "property-selector",
        cro(
            rules=[
                {
                    **RULE_OK,
                    "clusterSelector": {
                        "clusterSelectorTerms": [
                            {"labelSelector": {}, "propertySelector": {"matchExpressions": []}}
                        ]
                    },
                }
            ]
        ),
        [
            (
                "spec.policy.overrideRules[0].clusterSelector.clusterSelectorTerms[0]",
                "invalid clusterSelector: only labelSelector is supported",
            )
        ],
    ),
    (
        "label-selector-required",
        cro(rules=[{**RULE_OK, "clusterSelector": {"clusterSelectorTerms": [{}]}}]),
        [
            (
                "spec.policy.overrideRules[0].clusterSelector.clusterSelectorTerms[0]",
                "invalid clusterSelector: labelSelector is required",
            )
        ],
    ),
    (
        "cro-label-selector",
        cro(selectors=[{"group": "", "version": "v1", "kind": "Namespace", "labelSelector": {}}]),
        [
            (
                "spec.clusterResourceSelectors[0]",
                "label selector is not supported for resource "
                "selection {Group: Version:v1 Kind:Namespace Name:}",
            )
        ],
    ),
    (
        "cro-name-required",
        cro(selectors=[{"group": "", "version": "v1", "kind": "Namespace"}]),
        [
            (
                "spec.clusterResourceSelectors[0]",
                "resource name is required for resource selection "
                "{Group: Version:v1 Kind:Namespace Name:}",
            )
        ],
    ),
    (
        "cro-duplicate",
        cro(selectors=[{"group": "", "version": "v1", "kind": "Namespace", "name": "a"}] * 2),
        [
            (
                "spec.clusterResourceSelectors[1]",
                "resource selector {Group: Version:v1 "
                "Kind:Namespace Name:a} already exists, and must be unique",
            )
        ],
    ),
    (
        "cro-namespaced-placement",
        cro(placement={"name": "p", "scope": "Namespaced"}),
        [
            (
                "spec.placement.scope",
                "clusterResourceOverride placement reference cannot be Namespaced scope",
            )
        ],
    ),
    ("ro-ok", ro(), []),
    (
        "ro-bad-namespace",
        ro(namespace="Apps"),
        [
            (
                "metadata.namespace",
                "must be a DNS-1123 label (lowercase alphanumerics and '-', at "
                'most 63 characters): "Apps"',
            )
        ],
    ),
]


@pytest.mark.parametrize(
    ("body", "expected"), [c[1:] for c in RULE_CASES], ids=[c[0] for c in RULE_CASES]
)
def test_override_rules(body: dict[str, Any], expected: list[tuple[str, str]]) -> None:
    assert issues_of(body) == expected


def test_override_value_keeps_any_json() -> None:
    value = {"a": [1, 2.5, True, None, "x"]}
    model, _ = parse_object(cro(rules=patch_rule({"op": "add", "path": "/spec/x", "value": value})))
    assert isinstance(model, ClusterResourceOverride)
    patches = model.spec.policy.override_rules[0].json_patch_overrides or []
    assert patches[0].value == value


def test_check_override_conflicts() -> None:
    models = [
        parse_object(b)[0]
        for b in (cro("b"), cro("a"), ro("r2"), ro("r1"), ro("r3", namespace="other"))
    ]
    cros = [m for m in models if isinstance(m, ClusterResourceOverride)]
    ros = [m for m in models if isinstance(m, ResourceOverride)]
    assert check_override_conflicts(cros, ros) == [
        (
            ("ClusterResourceOverride", "", "b"),
            FieldIssue(
                "spec.clusterResourceSelectors[0]",
                "invalid resource selector {Group: Version:v1 "
                "Kind:Namespace Name:app}: the resource has been selected by both b and a, "
                "which is not supported",
            ),
        ),
        (
            ("ResourceOverride", "apps", "r2"),
            FieldIssue(
                "spec.resourceSelectors[0]",
                "invalid resource selector {Group:apps Version:v1 "
                "Kind:Deployment Name:web}: the resource has been selected by both r2 and r1, "
                "which is not supported",
            ),
        ),
    ]


def strategy(*stages: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": PLACEMENT,
        "kind": "ClusterStagedUpdateStrategy",
        "metadata": {"name": "s"},
        "spec": {"stages": list(stages)},
    }


STAGE_CASES: list[tuple[str, list[dict[str, Any]], list[tuple[str, str]]]] = [
    (
        "ok",
        [
            {
                "name": "canary",
                "maxConcurrency": "50%",
                "beforeStageTasks": [{"type": "Approval"}],
                "afterStageTasks": [
                    {"type": "TimedWait", "waitTime": "1h30m"},
                    {"type": "Approval"},
                ],
            }
        ],
        [],
    ),
    (
        "bad-name",
        [{"name": "Canary-1"}],
        [
            (
                "spec.stages[0].name",
                "should match '^[a-z0-9]+$' and be at most 63 characters: \"Canary-1\"",
            )
        ],
    ),
    (
        "duplicate",
        [{"name": "a"}, {"name": "a"}],
        [("spec.stages[1].name", 'stage name "a" is not unique')],
    ),
    (
        "concurrency-zero",
        [{"name": "a", "maxConcurrency": 0}],
        [("spec.stages[0].maxConcurrency", "maxConcurrency must be at least 1")],
    ),
    (
        "concurrency-pattern",
        [{"name": "a", "maxConcurrency": "0%"}],
        [("spec.stages[0].maxConcurrency", "should match '^(100|[1-9][0-9]?)%$'")],
    ),
    (
        "before-two",
        [{"name": "a", "beforeStageTasks": [{"type": "Approval"}] * 2}],
        [("spec.stages[0].beforeStageTasks", "beforeStageTasks can have at most one task")],
    ),
    (
        "before-timedwait",
        [{"name": "a", "beforeStageTasks": [{"type": "TimedWait", "waitTime": "1m"}]}],
        [
            (
                "spec.stages[0].beforeStageTasks[0].type",
                "task 0 of type TimedWait is not allowed in "
                "beforeStageTasks, allowed type: Approval",
            )
        ],
    ),
    (
        "before-approval-wait",
        [{"name": "a", "beforeStageTasks": [{"type": "Approval", "waitTime": "1m"}]}],
        [
            (
                "spec.stages[0].beforeStageTasks[0].waitTime",
                "task 0 of type Approval cannot have wait duration set",
            )
        ],
    ),
    (
        "after-same-type",
        [{"name": "a", "afterStageTasks": [{"type": "Approval"}] * 2}],
        [
            (
                "spec.stages[0].afterStageTasks[1].type",
                "afterStageTasks cannot have two tasks of the same type: Approval",
            )
        ],
    ),
    (
        "after-nil-wait",
        [{"name": "a", "afterStageTasks": [{"type": "TimedWait"}]}],
        [
            (
                "spec.stages[0].afterStageTasks[0].waitTime",
                "task 0 of type TimedWait has wait duration set to nil",
            )
        ],
    ),
    (
        "after-zero-wait",
        [{"name": "a", "afterStageTasks": [{"type": "TimedWait", "waitTime": "0s"}]}],
        [
            (
                "spec.stages[0].afterStageTasks[0].waitTime",
                "task 0 of type TimedWait has wait duration <= 0",
            )
        ],
    ),
    (
        "after-bad-wait",
        [{"name": "a", "afterStageTasks": [{"type": "TimedWait", "waitTime": "5ms"}]}],
        [
            (
                "spec.stages[0].afterStageTasks[0].waitTime",
                "should match '^(?:[0-9]+(\\.[0-9]+)?(?:s|m|h))+$'",
            )
        ],
    ),
    (
        "after-approval-wait",
        [{"name": "a", "afterStageTasks": [{"type": "Approval", "waitTime": "1m"}]}],
        [
            (
                "spec.stages[0].afterStageTasks[0].waitTime",
                "AfterStageTaskType is Approval, waitTime is not allowed",
            )
        ],
    ),
]


@pytest.mark.parametrize(
    ("stages", "expected"), [c[1:] for c in STAGE_CASES], ids=[c[0] for c in STAGE_CASES]
)
def test_stage_rules(stages: list[dict[str, Any]], expected: list[tuple[str, str]]) -> None:
    assert issues_of(strategy(*stages)) == expected


def test_too_many_stages() -> None:
    stages = [{"name": f"s{i}"} for i in range(32)]
    assert issues_of(strategy(*stages)) == [("spec.stages", "must have at most 31 item(s)")]


def run(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": PLACEMENT,
        "kind": "ClusterStagedUpdateRun",
        "metadata": {"name": "r"},
        "spec": {"placementName": "web", "stagedRolloutStrategyName": "s", **spec},
    }


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ({}, []),
        ({"resourceSnapshotIndex": "3", "state": "Run"}, []),
        (
            {"resourceSnapshotIndex": "-1"},
            [
                (
                    "spec.resourceSnapshotIndex",
                    "invalid resource snapshot index `-1` provided, expected an integer >= 0",
                )
            ],
        ),
        ({"state": "Go"}, [("spec.state", "must be one of: Initialize, Run, Stop")]),
        ({"placementName": ""}, [("spec.placementName", "required field is missing")]),
    ],
)
def test_update_run_rules(spec: dict[str, Any], expected: list[tuple[str, str]]) -> None:
    assert issues_of(run(**spec)) == expected


def test_update_run_default_state() -> None:
    model, _ = parse_object(run())
    assert model is not None and model.dump()["spec"]["state"] == "Initialize"


@pytest.mark.parametrize(
    ("status", "approved"),
    [
        (None, False),
        ({"conditions": [{"type": "Approved", "status": "True"}]}, True),
        ({"conditions": [{"type": "Approved", "status": "False"}]}, False),
        ({"conditions": [{"type": "ApprovalAccepted", "status": "True"}]}, False),
    ],
)
def test_approval(status: dict[str, Any] | None, approved: bool) -> None:
    body: dict[str, Any] = {
        "apiVersion": PLACEMENT,
        "kind": "ClusterApprovalRequest",
        "metadata": {"name": "r-before-canary"},
        "spec": {"parentStageRollout": "r", "targetStage": "canary"},
    }
    if status is not None:
        body["status"] = status
    model, issues = parse_object(body)
    assert issues == [] and isinstance(model, ClusterApprovalRequest)
    assert model.is_approved() is approved


def eviction(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": PLACEMENT,
        "kind": "ClusterResourcePlacementEviction",
        "metadata": {"name": "ev"},
        "spec": {"placementName": "web", "clusterName": "m1", **spec},
    }


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ({}, []),
        (
            {"placementName": ""},
            [("spec.placementName", "cluster resource placement name is required")],
        ),
        ({"clusterName": ""}, [("spec.clusterName", "cluster name is required")]),
    ],
)
def test_eviction_rules(spec: dict[str, Any], expected: list[tuple[str, str]]) -> None:
    assert issues_of(eviction(**spec)) == expected


def budget(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": PLACEMENT,
        "kind": "ClusterResourcePlacementDisruptionBudget",
        "metadata": {"name": "web"},
        "spec": spec,
    }


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ({"maxUnavailable": 1}, []),
        ({"minAvailable": "50%"}, []),
        (
            {"maxUnavailable": 1, "minAvailable": 1},
            [("spec", "Both MaxUnavailable and MinAvailable cannot be specified")],
        ),
        ({"maxUnavailable": -1}, [("spec.maxUnavailable", "must be greater than or equal to 0")]),
        (
            {"minAvailable": "5"},
            [("spec.minAvailable", "should match '^(100|[0-9]{1,2})%$' or be an integer")],
        ),
        (
            {"minAvailable": "101%"},
            [("spec.minAvailable", "should match '^(100|[0-9]{1,2})%$' or be an integer")],
        ),
    ],
)
def test_budget_rules(spec: dict[str, Any], expected: list[tuple[str, str]]) -> None:
    assert issues_of(budget(**spec)) == expected


@pytest.mark.parametrize(
    ("policy", "spec", "expected"),
    [
        (None, {"minAvailable": 1}, []),
        (
            None,
            {"maxUnavailable": 1},
            [
                (
                    "spec.maxUnavailable",
                    "cluster resource placement "
                    "policy type PickAll is not supported with any "
                    "specified max unavailable 1",
                )
            ],
        ),
        (
            None,
            {"minAvailable": "10%"},
            [
                (
                    "spec.minAvailable",
                    "cluster resource placement "
                    "policy type PickAll is not supported with min "
                    "available as a percentage 10%",
                )
            ],
        ),
        ({"placementType": "PickN", "numberOfClusters": 2}, {"maxUnavailable": "10%"}, []),
    ],
)
def test_budget_for_placement(
    policy: dict[str, Any] | None, spec: dict[str, Any], expected: list[tuple[str, str]]
) -> None:
    crp_body: dict[str, Any] = {
        "apiVersion": PLACEMENT,
        "kind": "ClusterResourcePlacement",
        "metadata": {"name": "web"},
        "spec": {
            "resourceSelectors": [{"group": "", "version": "v1", "kind": "Namespace", "name": "a"}]
        },
    }
    if policy:
        crp_body["spec"]["policy"] = policy
    placement, _ = parse_object(crp_body)
    pdb, _ = parse_object(budget(**spec))
    assert isinstance(placement, ClusterResourcePlacement)
    assert isinstance(pdb, ClusterResourcePlacementDisruptionBudget)
    assert [(i.field, i.message) for i in check_budget_for_placement(pdb, placement)] == expected


def fleet(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "gitfleet.io/v1alpha1",
        "kind": "Fleet",
        "metadata": {"name": "fleet"},
        "spec": spec,
    }


def test_fleet_defaults_and_limits() -> None:
    model, issues = parse_object(fleet(limits={"maxFileBytes": 1024, "templateTimeoutSeconds": 2}))
    assert issues == [] and isinstance(model, Fleet)
    assert model.spec.output_branch == "gitfleet/rendered"
    assert model.spec.cluster_eligibility == "RequireAgent"
    assert model.heartbeat_timeout() == timedelta(minutes=5)
    assert model.health_timeout() == timedelta(minutes=5)
    assert model.spec.heartbeat_timeout_delta() == timedelta(minutes=5)
    assert model.spec.cluster_status_record_interval_delta() == timedelta(minutes=5)
    assert model.limits() == Limits(max_file_bytes=1024, template_timeout_seconds=2.0)
    plain, _ = parse_object(fleet())
    assert isinstance(plain, Fleet) and plain.limits() == Limits()


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ({"outputBranch": "main", "heartbeatTimeout": "90s", "healthTimeout": "1h"}, []),
        ({"outputBranch": "release/v1.2"}, []),
        (
            {"outputBranch": "-x"},
            [
                (
                    "spec.outputBranch",
                    "must be a valid branch name (letters, "
                    "digits, '.', '_', '-' and '/'-separated parts; no leading "
                    "'-', no '..', no part starting with '.'): \"-x\"",
                )
            ],
        ),
        (
            {"outputBranch": "a..b"},
            [
                (
                    "spec.outputBranch",
                    "must be a valid branch name (letters, "
                    "digits, '.', '_', '-' and '/'-separated parts; no leading "
                    "'-', no '..', no part starting with '.'): \"a..b\"",
                )
            ],
        ),
        (
            {"heartbeatTimeout": "5"},
            [("spec.heartbeatTimeout", 'time: missing unit in duration "5"')],
        ),
        ({"healthTimeout": "-1m"}, [("spec.healthTimeout", 'must be a positive duration: "-1m"')]),
        ({"clusterStatusRecordInterval": "0s"}, []),
        ({"clusterStatusRecordInterval": "90s"}, []),
        (
            {"clusterStatusRecordInterval": "-1s"},
            [("spec.clusterStatusRecordInterval", 'must be a duration >= 0: "-1s"')],
        ),
        (
            {"clusterStatusRecordInterval": "soon"},
            [("spec.clusterStatusRecordInterval", 'time: invalid duration "soon"')],
        ),
        (
            {"heartbeatTimeout": "0s"},
            [("spec.heartbeatTimeout", 'must be a positive duration: "0s"')],
        ),
        ({"limits": {"maxYamlDepth": 0}}, [("spec.limits.maxYamlDepth", "must be > 0")]),
        (
            {"clusterEligibility": "Maybe"},
            [("spec.clusterEligibility", "must be one of: RequireAgent, AssumeJoined")],
        ),
    ],
)
def test_fleet_rules(spec: dict[str, Any], expected: list[tuple[str, str]]) -> None:
    assert issues_of(fleet(**spec)) == expected


def member(name: str = "m1", **extra: Any) -> dict[str, Any]:
    return {
        "apiVersion": "cluster.kubernetes-fleet.io/v1beta1",
        "kind": "MemberCluster",
        "metadata": {"name": name, "labels": {"env": "prod"}},
        **extra,
    }


def test_member_cluster_defaults() -> None:
    model, issues = parse_object(member())
    assert issues == [] and isinstance(model, MemberCluster)
    assert model.dump()["spec"] == {"heartbeatPeriodSeconds": 60}
    assert model.taints == [] and model.labels == {"env": "prod"}


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (
            member("Member.1"),
            [
                (
                    "metadata.name",
                    "must be a DNS-1123 label (lowercase "
                    "alphanumerics and '-', at most 63 characters): \"Member.1\"",
                )
            ],
        ),
        (
            member(spec={"heartbeatPeriodSeconds": 601}),
            [("spec.heartbeatPeriodSeconds", "must be <= 600")],
        ),
        (
            member(spec={"taints": [{"key": "k", "effect": "NoExecute"}]}),
            [("spec.taints[0].effect", "must be one of: NoSchedule")],
        ),
        (
            member(status={"resourceUsage": {"available": {"memory": "1 Gi"}}}),
            [("status.resourceUsage.available.memory", "unable to parse quantity's suffix")],
        ),
        (
            member(
                status={
                    "agentStatus": [{"type": "MemberAgent", "lastReceivedHeartbeat": "yesterday"}]
                }
            ),
            [
                (
                    "status.agentStatus[0].lastReceivedHeartbeat",
                    'must be an RFC 3339 timestamp such as "2026-11-21T10:00:00Z": "yesterday"',
                )
            ],
        ),
    ],
)
def test_member_cluster_rules(body: dict[str, Any], expected: list[tuple[str, str]]) -> None:
    assert issues_of(body) == expected


def profile(status: dict[str, Any] | None) -> ClusterProfile:
    body: dict[str, Any] = {
        "apiVersion": "multicluster.x-k8s.io/v1alpha1",
        "kind": "ClusterProfile",
        "metadata": {
            "name": "east",
            "namespace": "fleet-system",
            "labels": {"x-k8s.io/cluster-manager": "ocm"},
        },
        "spec": {"displayName": "East", "clusterManager": {"name": "ocm"}},
    }
    if status is not None:
        body["status"] = status
    model, issues = parse_object(body)
    assert issues == [] and isinstance(model, ClusterProfile)
    return model


def test_to_member_cluster_with_health() -> None:
    model = to_member_cluster(
        profile(
            {
                "conditions": [
                    {
                        "type": "ControlPlaneHealthy",
                        "status": "True",
                        "reason": "Ok",
                        "lastTransitionTime": "2026-11-21T09:00:00Z",
                    }
                ],
                "version": {"kubernetes": "1.31"},
                "properties": [
                    {
                        "name": "kubernetes-fleet.io/node-count",
                        "value": "3",
                        "lastObservedTime": "2026-11-21T09:30:00Z",
                    }
                ],
            }
        )
    )
    dumped = model.dump()
    assert dumped["metadata"] == {"name": "east", "labels": {"x-k8s.io/cluster-manager": "ocm"}}
    assert dumped["status"]["properties"] == {
        "kubernetes-fleet.io/node-count": {"value": "3", "observationTime": "2026-11-21T09:30:00Z"}
    }
    agent = model.status.agent() if model.status else None
    assert agent is not None and agent.last_received_heartbeat == "2026-11-21T09:30:00Z"
    assert [(c.type, c.status) for c in agent.conditions or []] == [
        ("Joined", "True"),
        ("Healthy", "True"),
    ]
    again, issues = parse_object(dumped)
    assert issues == [] and again == model


@pytest.mark.parametrize("status", [None, {"properties": []}])
def test_to_member_cluster_without_health_has_no_agent(status: dict[str, Any] | None) -> None:
    model = to_member_cluster(profile(status))
    assert model.status is None or model.status.agent() is None


def test_unhealthy_profile_maps_to_unhealthy_agent() -> None:
    model = to_member_cluster(
        profile(
            {
                "conditions": [
                    {
                        "type": "ControlPlaneHealthy",
                        "status": "False",
                        "reason": "Down",
                        "lastTransitionTime": "2026-11-21T09:00:00Z",
                    }
                ]
            }
        )
    )
    agent = model.status.agent() if model.status else None
    assert agent is not None
    assert [(c.type, c.status, c.reason) for c in agent.conditions or []] == [
        ("Joined", "True", "ClusterProfile"),
        ("Healthy", "False", "Down"),
    ]


NAMESPACED_STAGED = [
    ("StagedUpdateStrategy", {"stages": [{"name": "canary", "labelSelector": {}}]}),
    ("StagedUpdateRun", {"placementName": "web", "stagedRolloutStrategyName": "s", "state": "Run"}),
    ("ApprovalRequest", {"parentStageRollout": "run", "targetStage": "canary"}),
]


@pytest.mark.parametrize(("kind", "spec"), NAMESPACED_STAGED)
def test_namespaced_staged_kinds(kind: str, spec: dict[str, Any]) -> None:
    body = {
        "apiVersion": "placement.kubernetes-fleet.io/v1beta1",
        "kind": kind,
        "metadata": {"name": "x", "namespace": "team-a"},
        "spec": spec,
    }
    model, issues = parse_object(body)
    assert issues == [] and model is not None and model.kind == kind
    _, missing = parse_object({**body, "metadata": {"name": "x"}})
    assert [(i.field, i.message) for i in missing] == [
        ("metadata.namespace", "required field is missing")
    ]
    _, v1 = parse_object({**body, "apiVersion": "placement.kubernetes-fleet.io/v1"})
    assert v1 and v1[0].field == "apiVersion"
