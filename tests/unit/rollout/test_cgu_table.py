"""The ClusterGroupUpgrade test table (spec/cluster-group-upgrade.md §20), one test per row.

Fixture (cgu_helpers): clusters a..f, placement `web` External with latest snapshot 2 and every
cluster Bound at 1 and available there; CGU `cgu` over [a..f], maxConcurrency 2, timeout 240.
Decision 1 of the spec (enable: false pauses a started CGU) overrides row 38."""

from __future__ import annotations

import pytest

from reconciler.rollout.cgu_base import TIMED_OUT
from reconciler.rollout.cgu_select import build_plan
from tests.unit.rollout.cgu_helpers import CLUSTERS, Fleet, Placement, at, cgu, web

ALL_DONE = "All clusters are compliant with all the managed policies"


def plan(f: Fleet) -> list[list[str]]:
    return list(f.status().get("remediationPlan", []))


def selected_plan(**spec: object) -> list[list[str]]:
    """The plan with maxConcurrency large enough to show the selected list as one batch."""
    f = Fleet([cgu(enable=False, remediationStrategy={"maxConcurrency": 100}, **spec)])
    f.step(at())
    return plan(f)


def test_row01_explicit_first_then_selector_sorted() -> None:
    labels = {c: ({"tier": "x"} if c in "bae" else {}) for c in CLUSTERS}
    f = Fleet(
        [
            cgu(
                enable=False,
                clusters=["c", "a", "c"],
                remediationStrategy={"maxConcurrency": 10},
                clusterLabelSelectors=[{"matchLabels": {"tier": "x"}}],
            )
        ],
        labels=labels,
    )
    f.step(at())
    assert plan(f) == [["c", "a", "b", "e"]]


def test_row02_legacy_selector_key_means_empty_value() -> None:
    labels = {"a": {"env": ""}, "b": {"env": "prod"}, "c": {}, "d": {}, "e": {}, "f": {}}
    f = Fleet([cgu(enable=False, clusters=None, clusterSelector=["env"])], labels=labels)
    f.step(at())
    assert plan(f) == [["a"]]


def test_row03_malformed_legacy_selector_ignored_with_warning() -> None:
    labels = {c: ({"zone": "1"} if c == "d" else {}) for c in CLUSTERS}
    f = Fleet(
        [cgu(enable=False, clusters=None, clusterSelector=["a=b=c", "zone=1"])], labels=labels
    )
    f.step(at())
    assert plan(f) == [["d"]]
    assert any("CguInvalidSelector" in e and "a=b=c" in e for e in f.events())


def test_row04_no_cluster_specified() -> None:
    f = Fleet([cgu(clusters=None)])
    f.step(at())
    assert f.cond("ClustersSelected") == (
        "False",
        "ClusterNotFound",
        "Unable to select clusters: cannot obtain all the details about the clusters in the CR: "
        "no cluster specified for remediation",
    )
    assert f.cond("Validated") is None and f.cond("Progressing") is None


def test_row05_missing_cluster() -> None:
    f = Fleet([cgu(clusters=["a", "zz", "yy"])])
    f.step(at())
    assert f.cond("ClustersSelected") == (
        "False",
        "ClusterNotFound",
        "Unable to select clusters: cluster zz is not a MemberCluster",
    )


def test_row06_canary_not_in_list() -> None:
    f = Fleet([cgu(clusters=["a", "b"], remediationStrategy={"canaries": ["c"]})])
    f.step(at())
    assert f.cond("ClustersSelected") == (
        "False",
        "ClusterNotFound",
        "Unable to select clusters: canary cluster c is not in the list of clusters",
    )


@pytest.mark.parametrize(
    ("m", "clusters", "expected"), [(3, "a", 1), (0, "abcde", 5), (10, "abcd", 4)]
)
def test_row07_computed_max_concurrency(m: int, clusters: str, expected: int) -> None:
    f = Fleet(
        [cgu(enable=False, clusters=list(clusters), remediationStrategy={"maxConcurrency": m})]
    )
    f.step(at())
    assert f.status()["computedMaxConcurrency"] == expected


def test_row08_canary_batches_first() -> None:
    f = Fleet([cgu(enable=False, clusters=list("abcde"), remediationStrategy={"canaries": ["d"]})])
    f.step(at())
    assert plan(f) == [["d"], ["a", "b"], ["c", "e"]]


def test_row09_compliant_canary_gets_no_batch() -> None:
    f = Fleet([cgu(clusters=list("abcd"), remediationStrategy={"canaries": ["a", "c"]})])
    f.done("a")
    f.step(at())
    assert plan(f) == [["c"], ["b", "d"]]
    assert f.status()["clusters"] == [{"name": "a", "state": "complete"}]


def test_row10_missing_managed_policy() -> None:
    f = Fleet([cgu(managedPolicies=["web", "api"])])
    f.step(at())
    assert f.cond("Validated") == (
        "False",
        "NotAllManagedPoliciesExist",
        "Missing managed policies: [api] ",
    )


def test_row11_invalid_replaces_missing() -> None:
    old = Placement("old", strategy="RollingUpdate")
    f = Fleet([cgu(managedPolicies=["web", "api", "old"])], placements=[web(), old])
    f.step(at())
    assert f.cond("Validated") == (
        "False",
        "NotAllManagedPoliciesExist",
        "Invalid managed policies: [old] ",
    )
    assert f.cond("Progressing") is None


def test_row12_not_enabled_shows_plan() -> None:
    f = Fleet([cgu(enable=False)])
    f.step(at())
    assert f.cond("ClustersSelected")[0] == "True"  # type: ignore[index]
    assert f.cond("Validated")[0] == "True"  # type: ignore[index]
    assert f.cond("Progressing") == ("False", "NotEnabled", "Not enabled")
    assert plan(f) == [["a", "b"], ["c", "d"], ["e", "f"]]
    assert "status" not in f.status() and f.moved() == {}


def test_row13_missing_blocker_records_start_time() -> None:
    f = Fleet([cgu(blockingCRs=[{"name": "other"}])])
    f.step(at())
    assert f.cond("Progressing") == ("False", "MissingBlockingCR", "Missing blocking CRs: [other]")
    assert f.status()["status"]["startedAt"] == "2026-01-01T00:00:00Z"
    assert f.moved() == {}


def test_row14_incomplete_blocker() -> None:
    f = Fleet([cgu("other", clusters=["a"]), cgu(clusters=["e"], blockingCRs=[{"name": "other"}])])
    f.step(at())
    assert f.cond("Progressing", "other")[:2] == ("True", "InProgress")  # type: ignore[index]
    assert f.cond("Progressing") == (
        "False",
        "IncompleteBlockingCR",
        "Blocking CRs that are not completed: [other]",
    )


def test_row15_partial_mode_accepts_failed_blocker() -> None:
    partial = {"annotations": {"ran.openshift.io/blocking-cgu-completion-mode": "partial"}}
    f = Fleet(
        [
            cgu("other", clusters=["a"], remediationStrategy={"timeout": 0}),
            cgu(clusters=["e"], blockingCRs=[{"name": "other"}], metadata=partial),
        ]
    )
    f.step(at())
    assert f.cond("Succeeded", "other") == ("False", "TimedOut", TIMED_OUT)
    assert f.cond("Progressing")[:2] == ("True", "InProgress")  # type: ignore[index]


FILTER = {
    "annotations": {
        "ran.openshift.io/blocking-cgu-completion-mode": "partial",
        "ran.openshift.io/blocking-cgu-cluster-filtering": "true",
    }
}


def test_row16_cluster_filtering_keeps_list_order() -> None:
    f = Fleet([cgu("other", clusters=["c", "a"], remediationStrategy={"maxConcurrency": 2})])
    f.step(at())
    f.done("c"), f.done("a")
    f.step(at(1))
    assert f.cond("Succeeded", "other")[0] == "True"  # type: ignore[index]
    f.cgus.append(cgu(clusters=["a", "b", "c"], blockingCRs=[{"name": "other"}], metadata=FILTER))
    for c in "ac":
        f.placement().bindings[c] = web().bindings[c]
    f.step(at(2))
    assert plan(f) == [["a", "c"]]


def test_row17_cluster_filtering_leaves_nothing() -> None:
    f = Fleet(
        [
            cgu("other", clusters=["d"], remediationStrategy={"timeout": 0}),
            cgu(clusters=["a", "b", "c"], blockingCRs=[{"name": "other"}], metadata=FILTER),
        ]
    )
    f.step(at())
    message = (
        "No clusters available for remediation after filtering out non-completed clusters "
        "from blocking CGUs"
    )
    assert f.cond("Progressing") == ("False", "Completed", message)
    assert f.cond("Succeeded") == ("False", "Failed", message)
    assert f.status()["status"]["completedAt"] == "2026-01-01T00:00:00Z"


def test_row18_all_compliant_completes_at_start() -> None:
    f = Fleet([cgu(actions={"afterCompletion": {"addClusterLabels": {"upgraded": "yes"}}})])
    for c in CLUSTERS:
        f.done(c)
    r = f.step(at())
    assert f.cond("Progressing") == ("False", "Completed", ALL_DONE)
    assert f.cond("Succeeded") == (
        "True",
        "Completed",
        "All clusters already compliant with the specified managed policies",
    )
    inner = f.status()["status"]
    assert inner["startedAt"] == inner["completedAt"] == "2026-01-01T00:00:00Z"
    assert [c["state"] for c in f.status()["clusters"]] == ["complete"] * 6
    assert r.wakeup == at()
    from reconciler.rollout.cgu import effective_labels

    labels = effective_labels(f.snapshot(), f.labels, f.output)
    assert all(labels[c] == {"upgraded": "yes"} for c in CLUSTERS)


def test_row19_before_enable_only_for_planned_clusters() -> None:
    f = Fleet(
        [
            cgu(
                clusters=["a", "b"],
                actions={"beforeEnable": {"addClusterLabels": {"upgrading": "true"}}},
            )
        ]
    )
    f.done("b")
    f.step(at())
    assert plan(f) == [["a"]]
    assert f.status()["clusters"] == [{"name": "b", "state": "complete"}]
    from reconciler.rollout.cgu import effective_labels

    labels = effective_labels(f.snapshot(), f.labels, f.output)
    assert labels["a"] == {"upgrading": "true"} and labels["b"] == {}


def test_rows20_21_22_batches_roll_in_order() -> None:
    f = Fleet([cgu(clusters=["a", "b", "c"])])
    f.step(at())
    assert f.cond("Progressing") == ("True", "InProgress", "Remediating non-compliant policies")
    assert f.status()["status"]["currentBatch"] == 1
    assert f.moved() == {"a": 2, "b": 2} and f.index_of("c") == 1
    f.done("a"), f.done("b")
    f.step(at(10))
    inner = f.status()["status"]
    assert (inner["currentBatch"], inner["currentBatchStartedAt"]) == (2, "2026-01-01T00:10:00Z")
    assert f.moved() == {"c": 2}
    assert f.status()["clusters"] == [
        {"name": "a", "state": "complete"},
        {"name": "b", "state": "complete"},
    ]
    f.done("c")
    f.step(at(20))
    assert f.cond("Succeeded") == ("True", "Completed", ALL_DONE)
    assert "currentBatch" not in f.status()["status"]
    assert f.status()["status"]["completedAt"] == "2026-01-01T00:20:00Z"


def test_row23_policies_one_after_another() -> None:
    crds = Placement("crds", 5, bindings={c: web(bound_at=4).bindings[c] for c in CLUSTERS})
    crds.bindings = {c: web(bound_at=4, latest=5).bindings[c] for c in CLUSTERS}
    f = Fleet([cgu(clusters=["a"], managedPolicies=["crds", "web"])], placements=[crds, web()])
    f.step(at())
    assert f.moved("crds") == {"a": 5} and f.moved("web") == {}
    assert f.status()["status"]["currentBatchRemediationProgress"]["a"]["policyIndex"] == 0
    f.done("a", 5, "crds")
    f.step(at(5))
    assert f.status()["status"]["currentBatchRemediationProgress"]["a"]["policyIndex"] == 1
    assert f.moved("web") == {"a": 2}


def test_row24_stale_report_is_not_compliance() -> None:
    f = Fleet([cgu(clusters=["a"])])
    f.step(at())
    f.done("a", ok=False)  # the hub's view of a report about older content: not available
    f.step(at(5))
    assert f.status()["status"]["currentBatchRemediationProgress"]["a"] == {
        "state": "InProgress",
        "policyIndex": 0,
    }


@pytest.mark.parametrize(
    ("t", "batches", "b", "offset", "budget"),
    [
        (100, 1, 1, 0, 100),
        (200, 2, 1, 0, 100),
        (200, 2, 2, 100, 100),
        (240, 5, 1, 0, 48),
        (240, 5, 2, 40, 50),
        (240, 5, 5, 100, 140),
        (100, 100, 100, 50, 50),
    ],
)
def test_row25_batch_budget(t: int, batches: int, b: int, offset: int, budget: int) -> None:
    remaining = t * 60 - offset * 60
    rb = batches - (b - 1)
    deadline = -(-remaining // rb) if rb > 1 else remaining
    assert deadline == budget * 60
    # the integer expiry rule agrees at the boundary
    assert (budget * 60) * rb >= remaining and (budget * 60 - 1) * rb < remaining


def two(**spec: object) -> Fleet:
    f = Fleet([cgu(clusters=["a", "b"], remediationStrategy={"maxConcurrency": 1}, **spec)])
    f.step(at())
    return f


def test_row26_batch_timeout_continue() -> None:
    f = two()
    f.step(at(120))
    assert f.status()["clusters"] == [
        {
            "name": "a",
            "state": "timedout",
            "currentPolicy": {"name": "web", "status": "NonCompliant"},
        }
    ]
    assert any("RemediationInBatchTimeout" in e for e in f.events())
    inner = f.status()["status"]
    assert (inner["currentBatch"], inner["currentBatchStartedAt"]) == (2, "2026-01-01T02:00:00Z")
    assert f.moved() == {"b": 2}


def test_row27_not_expired_one_second_before() -> None:
    f = two()
    before = f.output
    r = f.step(at(119, 59))
    assert f.status()["status"]["currentBatch"] == 1
    assert r.wakeup == at(120)
    assert f.output == before


def test_row28_abort() -> None:
    f = two(batchTimeoutAction="Abort")
    f.step(at(120))
    message = f"{TIMED_OUT} on some clusters"
    assert f.cond("Progressing") == ("False", "TimedOut", message)
    assert f.cond("Succeeded") == ("False", "TimedOut", message)
    assert f.moved() == {} and f.index_of("b") == 1
    assert f.status()["status"]["completedAt"] == "2026-01-01T02:00:00Z"


def test_row29_canary_timeout_always_stops() -> None:
    f = Fleet(
        [
            cgu(
                clusters=["a", "b", "c"],
                batchTimeoutAction="Continue",
                remediationStrategy={"canaries": ["a"], "maxConcurrency": 2},
            )
        ]
    )
    f.step(at())
    f.step(at(120))
    assert f.cond("Succeeded") == ("False", "TimedOut", f"{TIMED_OUT} on canary clusters")
    assert f.status()["clusters"][0]["state"] == "timedout"
    assert f.index_of("b") == 1 and f.index_of("c") == 1


def test_row30_regular_batch_after_compliant_canary() -> None:
    f = Fleet([cgu(clusters=list("abcde"), remediationStrategy={"canaries": ["a", "c"]})])
    f.done("a")
    f.step(at())
    assert plan(f) == [["c"], ["b", "d"], ["e"]]
    f.done("c")
    f.step(at(10))
    assert f.status()["status"]["currentBatch"] == 2
    f.step(at(124, 59))
    assert f.status()["status"]["currentBatch"] == 2
    f.step(at(125))
    assert f.status()["status"]["currentBatch"] == 3
    assert [c["name"] for c in f.status()["clusters"] if c["state"] == "timedout"] == ["b", "d"]
    assert f.cond("Progressing")[0] == "True"  # type: ignore[index]


def test_row31_earlier_timed_out_cluster_keeps_cgu_running() -> None:
    f = two()
    f.step(at(120))
    f.done("b")
    f.step(at(130))
    assert f.cond("Progressing")[:2] == ("True", "InProgress")  # type: ignore[index]
    f.step(at(240))
    assert f.cond("Succeeded") == ("False", "TimedOut", TIMED_OUT)
    assert [c["name"] for c in f.status()["clusters"]] == ["a", "b"]


def test_row32_late_compliance_completes() -> None:
    f = two()
    f.step(at(120))
    f.done("b")
    f.step(at(130))
    f.done("a")
    f.step(at(200))
    assert f.cond("Succeeded") == ("True", "Completed", ALL_DONE)


def test_row33_timeout_zero() -> None:
    f = Fleet(
        [
            cgu(
                remediationStrategy={"timeout": 0},
                actions={"beforeEnable": {"addClusterLabels": {"u": "1"}}},
            )
        ]
    )
    f.step(at())
    assert f.cond("Succeeded") == ("False", "TimedOut", TIMED_OUT)
    assert f.moved() == {}
    assert "clusters" not in f.status()
    state = f.output["state/clustergroupupgrades/default/cgu.yaml"].decode()
    assert state.count("phase: beforeEnable") == 6


def soaking() -> Fleet:
    p = web()
    p.annotations["ran.openshift.io/soak-seconds"] = "600"
    f = Fleet([cgu(clusters=["a"])], placements=[p])
    f.step(at())
    return f


def test_row34_soak() -> None:
    f = soaking()
    f.done("a")
    f.step(at(10))
    entry = f.status()["status"]["currentBatchRemediationProgress"]["a"]
    assert entry["firstCompliantAt"] == "2026-01-01T00:10:00Z" and entry["state"] == "InProgress"
    r = f.step(at(19, 59))
    assert f.status()["status"]["currentBatchRemediationProgress"]["a"]["state"] == "InProgress"
    assert r.wakeup == at(20)
    f.step(at(20))
    assert f.cond("Succeeded") == ("True", "Completed", ALL_DONE)


def test_row35_soak_restarts_after_unavailable() -> None:
    f = soaking()
    f.done("a")
    f.step(at(10))
    f.done("a", ok=False)
    f.step(at(15))
    assert "firstCompliantAt" not in f.status()["status"]["currentBatchRemediationProgress"]["a"]
    f.done("a")
    f.step(at(16))
    assert (
        f.status()["status"]["currentBatchRemediationProgress"]["a"]["firstCompliantAt"]
        == "2026-01-01T00:16:00Z"
    )


def test_row36_invalid_soak_ignored_with_warning() -> None:
    p = web()
    p.annotations["ran.openshift.io/soak-seconds"] = "ten"
    f = Fleet([cgu(clusters=["a", "b"])], placements=[p])
    f.step(at())
    f.done("a"), f.done("b")
    f.step(at(1))
    assert f.cond("Succeeded") == ("True", "Completed", ALL_DONE)
    p2 = web()
    p2.annotations["ran.openshift.io/soak-seconds"] = "ten"
    f2 = Fleet([cgu(clusters=["a"])], placements=[p2])
    f2.step(at())
    assert any("CguInvalidSoakAnnotation" in e for e in f2.events())


def test_row37_frozen_plan_live_timeout() -> None:
    f = Fleet([cgu(clusters=["a", "b", "c"])])
    f.step(at())
    f.cgus = [cgu(clusters=["f"], remediationStrategy={"timeout": 10})]
    r = f.step(at(5))
    assert plan(f) == [["a", "b"], ["c"]]
    assert r.wakeup == at(10)
    f.step(at(10))
    assert f.cond("Succeeded") == ("False", "TimedOut", TIMED_OUT)


def test_row38_enable_false_pauses_started_cgu_decision1() -> None:
    f = two()
    f.cgus = [cgu(clusters=["a", "b"], remediationStrategy={"maxConcurrency": 1}, enable=False)]
    f.done("a")
    f.step(at(10))
    assert f.cond("Progressing")[:2] == ("True", "Paused")  # type: ignore[index]
    assert f.moved() == {} and f.index_of("b") == 1
    f.cgus = [cgu(clusters=["a", "b"], remediationStrategy={"maxConcurrency": 1})]
    f.step(at(11))
    assert f.cond("Progressing")[:2] == ("True", "InProgress")  # type: ignore[index]
    assert f.moved() == {"b": 2}


def test_row39_implicit_blocker_overlapping_cgus() -> None:
    f = Fleet([cgu("cgu-a", clusters=["a", "b"]), cgu("cgu-b", clusters=["b", "c"])])
    f.step(at())
    assert f.cond("Progressing", "cgu-a")[:2] == ("True", "InProgress")  # type: ignore[index]
    assert f.cond("Progressing", "cgu-b") == (
        "False",
        "IncompleteBlockingCR",
        "Blocking CRs that are not completed: [cgu-a]",
    )
    assert f.moved() == {"a": 2, "b": 2}


def test_row40_unsupported_fields() -> None:
    f = Fleet([cgu(backup=True, preCaching=True)])
    r = f.step(at())
    assert f.cond("Validated") == (
        "False",
        "UnsupportedField",
        "Unsupported fields: [spec.backup spec.preCaching]",
    )
    assert f.cond("ClustersSelected") is None and f.moved() == {}
    assert {e[2] for e in r.errors} == {"spec.backup", "spec.preCaching"}


def test_row41_bad_batch_timeout_action() -> None:
    f = Fleet([cgu(batchTimeoutAction="abort")])
    r = f.step(at())
    status, reason, message = f.cond("Validated")  # type: ignore[misc]
    assert (status, reason) == ("False", "InvalidSpec") and "spec.batchTimeoutAction" in message
    assert message.startswith("rollouts/cgu.yaml:")
    assert r.errors[0][:3] == ("rollouts/cgu.yaml", 1, "spec.batchTimeoutAction")


def test_row42_empty_managed_policies_runs_actions() -> None:
    f = Fleet(
        [
            cgu(
                managedPolicies=[],
                clusters=["a", "b"],
                actions={"afterCompletion": {"addClusterLabels": {"ztp-done": ""}}},
            )
        ]
    )
    f.step(at())
    assert f.cond("Succeeded")[0] == "True"  # type: ignore[index]
    from reconciler.rollout.cgu import effective_labels

    labels = effective_labels(f.snapshot(), f.labels, f.output)
    assert labels["a"] == {"ztp-done": ""} and labels["b"] == {"ztp-done": ""}


def test_row43_deleting_cgu_drops_overlay() -> None:
    f = Fleet(
        [
            cgu(
                managedPolicies=[],
                clusters=["a", "b"],
                actions={"afterCompletion": {"addClusterLabels": {"ztp-done": ""}}},
            )
        ]
    )
    f.step(at())
    f.cgus = []
    from reconciler.rollout.cgu import effective_labels

    assert effective_labels(f.snapshot(), f.labels, f.output)["a"] == {}
    f.step(at(1))
    assert not any(p.startswith("state/clustergroupupgrades/") for p in f.output)


def test_row44_add_and_remove_same_key() -> None:
    f = Fleet(
        [
            cgu(
                managedPolicies=[],
                clusters=["a"],
                actions={
                    "afterCompletion": {
                        "addClusterLabels": {"k": "v"},
                        "removeClusterLabels": ["k"],
                    }
                },
            )
        ],
        labels={c: {"k": "g"} for c in CLUSTERS},
    )
    f.step(at())
    from reconciler.rollout.cgu import effective_labels

    assert "k" not in effective_labels(f.snapshot(), f.labels, f.output)["a"]


def test_row45_deleted_placement_mid_run_completes() -> None:
    f = Fleet([cgu(clusters=["a"])])
    f.step(at())
    f.placements = []
    f.step(at(5))
    assert f.cond("Succeeded") == ("True", "Completed", ALL_DONE)


def test_row46_cluster_not_selected_by_placement_is_compliant() -> None:
    f = Fleet([cgu()], placements=[web(clusters="abcde")])
    f.step(at())
    assert all("f" not in batch for batch in plan(f))
    assert f.status()["clusters"] == [{"name": "f", "state": "complete"}]


def test_row47_newer_snapshot_counts_and_never_moves_back() -> None:
    f = Fleet([cgu(clusters=["a", "b"])])
    f.step(at())
    f.done("b", 3)
    f.step(at(5))
    assert f.status()["status"]["currentBatchRemediationProgress"]["b"] == {"state": "Completed"}
    assert "b" not in f.moved() and f.index_of("b") == 3


def test_row48_reconciler_down_past_deadline() -> None:
    f = Fleet([cgu(clusters=["a", "b"])])
    f.step(at())
    f.step(at(5))
    f.done("a"), f.done("b")
    f.step(at(300))
    assert f.cond("Succeeded") == ("False", "TimedOut", TIMED_OUT)


def test_plan_builder_examples() -> None:
    p = build_plan(["spoke1", "spoke2", "spoke5", "spoke6", "spoke3", "spoke4"], [], 2, {"spoke3"})
    assert [list(b) for b in p.batches] == [["spoke1", "spoke2"], ["spoke5", "spoke6"], ["spoke4"]]


def test_no_op_pass_is_byte_identical() -> None:
    f = Fleet([cgu(clusters=["a", "b"])])
    f.step(at())
    first = dict(f.output)
    f.step(at(1))
    assert f.output == first


def test_overlay_reaches_the_fleet_snapshot() -> None:
    f = Fleet(
        [
            cgu(
                managedPolicies=[],
                clusters=["a"],
                actions={
                    "afterCompletion": {
                        "addClusterLabels": {"done": "yes"},
                        "addClusterAnnotations": {"note": "x"},
                    }
                },
            )
        ]
    )
    f.step(at())
    from reconciler.rollout.cgu import with_label_overlay

    snap = f.snapshot()
    import yaml

    cluster_doc = {
        "apiVersion": "cluster.kubernetes-fleet.io/v1",
        "kind": "MemberCluster",
        "metadata": {"name": "a", "labels": {"env": "p"}},
        "spec": {},
    }
    from gitfleet.api.limits import Limits
    from gitfleet.load.snapshot import build_snapshot
    from gitfleet.load.yamlio import parse_documents

    docs, _ = parse_documents("rollouts/cgu.yaml", yaml.safe_dump_all(f.cgus), Limits())
    more, _ = parse_documents("clusters/a.yaml", yaml.safe_dump(cluster_doc), Limits())
    snap = build_snapshot([*docs, *more], [])
    out = with_label_overlay(snap, f.output)
    assert out.clusters["a"].metadata.labels == {"env": "p", "done": "yes"}
    assert out.clusters["a"].metadata.annotations == {"note": "x"}
    assert with_label_overlay(snap, {}) is snap


def test_started_cgu_keeps_running_while_its_file_fails_to_load() -> None:
    f = Fleet([cgu(clusters=["a", "b"], remediationStrategy={"maxConcurrency": 1})])
    f.step(at())
    broken = cgu(clusters=["a", "b"], remediationStrategy={"maxConcurrency": 1})
    broken["spec"]["bogus"] = 1
    f.cgus = [broken]
    f.done("a")
    f.step(at(5))
    assert f.status()["status"]["currentBatch"] == 2
    assert f.moved() == {"b": 2}


def test_refused_field_after_start_keeps_last_valid_spec() -> None:
    f = Fleet([cgu(clusters=["a", "b"], remediationStrategy={"maxConcurrency": 1})])
    f.step(at())
    f.cgus = [
        cgu(clusters=["a", "b"], remediationStrategy={"maxConcurrency": 1}, batchTimeoutAction="x")
    ]
    f.step(at(120))
    assert f.status()["status"]["currentBatch"] == 2
    assert any("CguValidationFailure" in e for e in f.events())
    assert f.cond("Validated")[:2] == ("True", "ValidationCompleted")  # type: ignore[index]


def staged_run(state: str = "Run") -> dict[str, object]:
    return {
        "apiVersion": "placement.kubernetes-fleet.io/v1beta1",
        "kind": "ClusterStagedUpdateRun",
        "metadata": {"name": "run1"},
        "spec": {"placementName": "web", "stagedRolloutStrategyName": "s", "state": state},
    }


def staged_status(finished: bool = False) -> bytes:
    import yaml

    conds = [
        {"type": "Initialized", "status": "True", "reason": "UpdateRunInitializedSuccessfully"}
    ]
    if finished:
        conds.append({"type": "Succeeded", "status": "True", "reason": "UpdateRunSucceeded"})
    doc = {
        "status": {
            "conditions": conds,
            "stagesStatus": [{"stageName": "s1", "clusters": [{"clusterName": "a"}]}],
        }
    }
    return yaml.safe_dump(doc).encode()


@pytest.mark.parametrize(
    ("state", "finished", "blocked"),
    [("Run", False, True), ("Stop", False, False), ("Run", True, False)],
)
def test_decision3_staged_run_blocks_overlapping_cgu(
    state: str, finished: bool, blocked: bool
) -> None:
    f = Fleet([cgu(clusters=["a", "b"])])
    f.extra = [staged_run(state)]
    f.output = {"status/updateruns/run1.yaml": staged_status(finished)}
    f.step(at())
    if blocked:
        assert f.cond("Progressing") == (
            "False",
            "IncompleteBlockingCR",
            "Blocking CRs that are not completed: [ClusterStagedUpdateRun/run1]",
        )
        assert f.moved() == {}
    else:
        assert f.cond("Progressing")[:2] == ("True", "InProgress")  # type: ignore[index]


def test_namespaced_entry_names_a_resource_placement() -> None:
    rp = Placement(
        "api",
        4,
        namespace="shop",
        bindings={c: web(bound_at=3, latest=4).bindings[c] for c in "ab"},
    )
    f = Fleet([cgu(clusters=["a", "b"], managedPolicies=["shop/api"])], placements=[rp])
    f.step(at())
    assert f.status()["managedPoliciesForUpgrade"] == [
        {
            "name": "api",
            "namespace": "shop",
            "kind": "ResourcePlacement",
            "resourceSnapshotIndex": 4,
        }
    ]
    assert f.moved("shop.api") == {"a": 4, "b": 4}


def test_cluster_status_lists_overlay_entries_with_origin() -> None:
    import yaml

    from reconciler.rollout.cgu import overlay_entries, with_overlay_status

    f = Fleet(
        [
            cgu(
                managedPolicies=[],
                clusters=["a"],
                actions={"afterCompletion": {"addClusterLabels": {"k": "v"}}},
            )
        ]
    )
    f.step(at())
    entries = overlay_entries(f.snapshot(), f.output)
    assert entries == {
        "a": [
            {
                "origin": "ClusterGroupUpgrade/default/cgu",
                "at": "2026-01-01T00:00:00Z",
                "phase": "afterCompletion",
                "addLabels": {"k": "v"},
            }
        ]
    }
    files = {
        "status/clusters/a.yaml": yaml.safe_dump({"metadata": {"name": "a"}, "status": {}}).encode()
    }
    out = with_overlay_status(files, entries)
    assert yaml.safe_load(out["status/clusters/a.yaml"])["status"]["labelOverlay"] == entries["a"]
