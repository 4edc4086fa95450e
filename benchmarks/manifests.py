"""Builders of the objects in a synthetic benchmark fleet, plus the YAML writer they share.

Each function turns a few already-drawn values (names, labels, numbers) into one plain dict in
KubeFleet's or Kubernetes' shape: MemberCluster, the payload objects of a namespace (Namespace,
ConfigMap, Deployment, Service), placements (PickAll, PickFixed, PickN) and overrides
(ClusterResourceOverride, ResourceOverride). No randomness here: `benchmarks.generate` draws every
value from its seeded generator and calls these, so the same draws give the same bytes.
"""

from __future__ import annotations

from typing import Any

import yaml

PLACEMENT_API = "placement.kubernetes-fleet.io/v1beta1"
CLUSTER_API = "cluster.kubernetes-fleet.io/v1beta1"
LABEL_PREFIX = "fleet.example.com"

Obj = dict[str, Any]


class _Dumper(yaml.CSafeDumper if hasattr(yaml, "CSafeDumper") else yaml.SafeDumper):  # type: ignore[misc]
    """Safe dumper that writes multi-line strings as literal blocks."""


def _str_representer(dumper: yaml.SafeDumper, data: str) -> yaml.ScalarNode:
    style = "|" if "\n" in data else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)


_Dumper.add_representer(str, _str_representer)


def dump_yaml(obj: Obj) -> bytes:
    """One YAML document, keys in insertion order, block style."""
    text = yaml.dump(obj, Dumper=_Dumper, sort_keys=False, default_flow_style=False, width=100)
    return text.encode("utf-8")


def member_cluster(name: str, labels: dict[str, str], heartbeat: int) -> Obj:
    """A MemberCluster with labels and a heartbeat period."""
    return {
        "apiVersion": CLUSTER_API,
        "kind": "MemberCluster",
        "metadata": {"name": name, "labels": labels},
        "spec": {"heartbeatPeriodSeconds": heartbeat},
    }


def fleet_settings(name: str) -> Obj:
    """fleet.yaml: every declared cluster is taken as joined (no agents in a benchmark)."""
    return {
        "apiVersion": "gitfleet.io/v1alpha1",
        "kind": "Fleet",
        "metadata": {"name": name},
        "spec": {"outputBranch": "gitfleet/rendered", "clusterEligibility": "AssumeJoined"},
    }


def _meta(name: str, namespace: str | None, team: str, app: str | None = None) -> Obj:
    labels = {"app.kubernetes.io/part-of": team, "app.kubernetes.io/managed-by": "gitfleet"}
    if app is not None:
        labels["app.kubernetes.io/name"] = app
    meta: Obj = {"name": name}
    if namespace is not None:
        meta["namespace"] = namespace
    meta["labels"] = labels
    meta["annotations"] = {f"{LABEL_PREFIX}/owner": f"team-{team}"}
    return meta


def namespace(name: str, team: str) -> Obj:
    """A Namespace with team labels."""
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": _meta(name, None, team)}


def config_map(ns: str, app: str, team: str, settings: dict[str, str]) -> Obj:
    """The configuration of one app: a few keys and a properties file."""
    props = "".join(f"{key}={value}\n" for key, value in settings.items())
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": _meta(f"{app}-config", ns, team, app),
        "data": {"LOG_LEVEL": settings.get("log.level", "info"), "application.properties": props},
    }


def _container(ns: str, app: str, image: str, port: int, cpu_m: int, mem_mi: int) -> Obj:
    return {
        "name": app,
        "image": image,
        "imagePullPolicy": "IfNotPresent",
        "ports": [{"name": "http", "containerPort": port, "protocol": "TCP"}],
        "env": [
            {"name": "APP_NAME", "value": app},
            {"name": "APP_NAMESPACE", "value": ns},
            {
                "name": "LOG_LEVEL",
                "valueFrom": {"configMapKeyRef": {"name": f"{app}-config", "key": "LOG_LEVEL"}},
            },
        ],
        "resources": {
            "requests": {"cpu": f"{cpu_m}m", "memory": f"{mem_mi}Mi"},
            "limits": {"cpu": f"{cpu_m * 2}m", "memory": f"{mem_mi * 2}Mi"},
        },
        "readinessProbe": {
            "httpGet": {"path": "/healthz/ready", "port": "http"},
            "periodSeconds": 10,
        },
        "livenessProbe": {
            "httpGet": {"path": "/healthz/live", "port": "http"},
            "initialDelaySeconds": 15,
        },
        "securityContext": {
            "runAsNonRoot": True,
            "allowPrivilegeEscalation": False,
            "readOnlyRootFilesystem": True,
            "capabilities": {"drop": ["ALL"]},
        },
        "volumeMounts": [{"name": "config", "mountPath": "/etc/app", "readOnly": True}],
    }


def deployment(
    ns: str, app: str, team: str, image: str, replicas: int, sizing: tuple[int, int, int]
) -> Obj:
    """A Deployment of one container reading its ConfigMap (~1.5 KB of YAML).

    `sizing` is (port, cpu millicores, memory MiB).
    """
    port, cpu_m, mem_mi = sizing
    selector = {"app.kubernetes.io/name": app}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": _meta(app, ns, team, app),
        "spec": {
            "replicas": replicas,
            "revisionHistoryLimit": 5,
            "strategy": {
                "type": "RollingUpdate",
                "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 0},
            },
            "selector": {"matchLabels": selector},
            "template": {
                "metadata": {
                    "labels": dict(selector),
                    "annotations": {f"{LABEL_PREFIX}/team": team},
                },
                "spec": {
                    "serviceAccountName": "default",
                    "terminationGracePeriodSeconds": 30,
                    "containers": [_container(ns, app, image, port, cpu_m, mem_mi)],
                    "volumes": [
                        {"name": "config", "configMap": {"name": f"{app}-config", "optional": True}}
                    ],
                },
            },
        },
    }


def service(ns: str, app: str, team: str, port: int) -> Obj:
    """A ClusterIP Service in front of the app's Deployment."""
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": _meta(app, ns, team, app),
        "spec": {
            "type": "ClusterIP",
            "selector": {"app.kubernetes.io/name": app},
            "ports": [{"name": "http", "port": 80, "targetPort": port, "protocol": "TCP"}],
        },
    }


def _placement(name: str, ns: str, policy: Obj) -> Obj:
    return {
        "apiVersion": PLACEMENT_API,
        "kind": "ClusterResourcePlacement",
        "metadata": {"name": name},
        "spec": {
            "resourceSelectors": [{"group": "", "version": "v1", "kind": "Namespace", "name": ns}],
            "policy": policy,
            "strategy": {
                "type": "RollingUpdate",
                "rollingUpdate": {
                    "maxUnavailable": "25%",
                    "maxSurge": "25%",
                    "unavailablePeriodSeconds": 60,
                },
            },
            "revisionHistoryLimit": 10,
        },
    }


def _required(term: Obj) -> Obj:
    return {"requiredDuringSchedulingIgnoredDuringExecution": {"clusterSelectorTerms": [term]}}


def pick_all(name: str, ns: str, label_selector: Obj | None) -> Obj:
    """PickAll of one namespace, fleet-wide when `label_selector` is None."""
    policy: Obj = {"placementType": "PickAll"}
    if label_selector is not None:
        policy["affinity"] = {"clusterAffinity": _required({"labelSelector": label_selector})}
    return _placement(name, ns, policy)


def pick_fixed(name: str, ns: str, clusters: list[str]) -> Obj:
    """PickFixed of one namespace onto the named clusters."""
    return _placement(name, ns, {"placementType": "PickFixed", "clusterNames": clusters})


def pick_n(name: str, ns: str, count: int, envs: list[str], when: str, weight: int) -> Obj:
    """PickN with required env affinity, a preferred tier, and spread over regions."""
    affinity = _required(
        {"labelSelector": {"matchExpressions": [{"key": "env", "operator": "In", "values": envs}]}}
    )
    affinity["preferredDuringSchedulingIgnoredDuringExecution"] = [
        {"weight": weight, "preference": {"labelSelector": {"matchLabels": {"tier": "gold"}}}}
    ]
    policy = {
        "placementType": "PickN",
        "numberOfClusters": count,
        "affinity": {"clusterAffinity": affinity},
        "topologySpreadConstraints": [
            {"maxSkew": 1, "topologyKey": "region", "whenUnsatisfiable": when}
        ],
    }
    return _placement(name, ns, policy)


def _selector(match_labels: dict[str, str] | None) -> Obj:
    if match_labels is None:
        return {}
    return {"clusterSelectorTerms": [{"labelSelector": {"matchLabels": match_labels}}]}


def cluster_resource_override(name: str, ns: str, placement: str | None) -> Obj:
    """Labels every object of namespace `ns` with its cluster's name and region; prod gets a
    pager annotation naming the tier."""
    label = f"/metadata/labels/{LABEL_PREFIX}~1"
    rules: list[Obj] = [
        {
            "clusterSelector": _selector(None),
            "jsonPatchOverrides": [
                {"op": "add", "path": f"{label}cluster", "value": "${MEMBER-CLUSTER-NAME}"},
                {
                    "op": "add",
                    "path": f"{label}region",
                    "value": "${MEMBER-CLUSTER-LABEL-KEY-region}",
                },
            ],
        },
        {
            "clusterSelector": _selector({"env": "prod"}),
            "jsonPatchOverrides": [
                {
                    "op": "add",
                    "path": f"/metadata/annotations/{LABEL_PREFIX}~1pager",
                    "value": "oncall-${MEMBER-CLUSTER-LABEL-KEY-tier}",
                }
            ],
        },
    ]
    spec: Obj = {}
    if placement is not None:
        spec["placement"] = {"name": placement, "scope": "Cluster"}
    spec["clusterResourceSelectors"] = [
        {"group": "", "version": "v1", "kind": "Namespace", "name": ns}
    ]
    spec["policy"] = {"overrideRules": rules}
    return {
        "apiVersion": PLACEMENT_API,
        "kind": "ClusterResourceOverride",
        "metadata": {"name": name},
        "spec": spec,
    }


def deployment_override(name: str, ns: str, app: str, prod_replicas: int) -> Obj:
    """More replicas in prod; gold/silver clusters get the cluster name in the environment."""
    rules: list[Obj] = [
        {
            "clusterSelector": _selector({"env": "prod"}),
            "jsonPatchOverrides": [
                {"op": "replace", "path": "/spec/replicas", "value": prod_replicas}
            ],
        },
        {
            "clusterSelector": {
                "clusterSelectorTerms": [
                    {
                        "labelSelector": {
                            "matchExpressions": [
                                {"key": "tier", "operator": "In", "values": ["gold", "silver"]}
                            ]
                        }
                    }
                ]
            },
            "jsonPatchOverrides": [
                {
                    "op": "add",
                    "path": "/spec/template/spec/containers/0/env/-",
                    "value": {"name": "CLUSTER_NAME", "value": "${MEMBER-CLUSTER-NAME}"},
                },
                {
                    "op": "add",
                    "path": "/spec/template/spec/containers/0/env/-",
                    "value": {
                        "name": "CLUSTER_REGION",
                        "value": "${MEMBER-CLUSTER-LABEL-KEY-region}",
                    },
                },
            ],
        },
    ]
    selector = {"group": "apps", "version": "v1", "kind": "Deployment", "name": app}
    return _resource_override(name, ns, selector, rules)


def config_map_override(name: str, ns: str, config: str) -> Obj:
    """Dev clusters do not get the ConfigMap (Delete); staging logs at debug level."""
    rules: list[Obj] = [
        {"clusterSelector": _selector({"env": "dev"}), "overrideType": "Delete"},
        {
            "clusterSelector": _selector({"env": "staging"}),
            "jsonPatchOverrides": [{"op": "replace", "path": "/data/LOG_LEVEL", "value": "debug"}],
        },
    ]
    selector = {"group": "", "version": "v1", "kind": "ConfigMap", "name": config}
    return _resource_override(name, ns, selector, rules)


def _resource_override(name: str, ns: str, selector: Obj, rules: list[Obj]) -> Obj:
    return {
        "apiVersion": PLACEMENT_API,
        "kind": "ResourceOverride",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"resourceSelectors": [selector], "policy": {"overrideRules": rules}},
    }
