"""A refused source commit is visible on the output branch: with real signed commits, the real hub
loop and a bare remote, a held tip adds exactly one file, `status/hub.yaml` (HubStatus, condition
`SourceAccepted=False`), in one commit on top of the last render — nothing of the refused commit,
the last reconciled `Gitfleet-Source` kept, signed when the hub signs — recorded once however
often the hub polls or restarts, shown by `gitfleet status hub`, above every `gitfleet status`
view (`updaterun` too) and in `gitfleet history`, and removed by the pass that renders an
accepted source again. A refused first pass (no output yet) is recorded too, as the output
branch's first commit holding only that file. (A rewritten source branch is recorded the same
way: `test_hub_faults`.)"""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import yaml

from gitfleet.api.hubstatus import HUB_STATUS_PATH, HubStatus
from gitfleet.repo.trailers import parse_trailers
from reconciler.loop import Hub, HubConfig
from tests.helpers.signing import git_as_t as git
from tests.helpers.signing import read_verdict
from tests.integration.fleet_helpers import run_cli
from tests.integration.test_signed_commits import NOW, OUTPUT, World, held
from tests.integration.test_signed_commits import world as world  # the same signed fleet

HOUR = timedelta(hours=1)
STAGED = """apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterStagedUpdateStrategy
metadata:
  name: by-region
spec:
  stages:
    - name: eu
      labelSelector: {matchLabels: {region: eu}}
    - name: us
      labelSelector: {matchLabels: {region: us}}
---
apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterStagedUpdateRun
metadata:
  name: release
spec:
  placementName: web
  stagedRolloutStrategyName: by-region
  state: Run
"""


def listing(world: World, ref: str) -> dict[str, str]:
    """path -> blob id of every file at `ref` on the remote."""
    out = git(world.remote, "ls-tree", "-r", ref)
    return {line.split("\t")[1]: line.split()[2] for line in out.splitlines()}


def trailers(world: World, ref: str) -> dict[str, list[str]]:
    return parse_trailers(git(world.remote, "log", "-1", "--format=%B", ref))


def hub_status(world: World) -> HubStatus:
    text = git(world.remote, "show", f"{OUTPUT}:{HUB_STATUS_PATH}")
    return HubStatus.model_validate(yaml.safe_load(text))


def status_cli(world: World, *args: str) -> str:
    done = run_cli(world.tmp, "status", *args, "--repo", str(world.remote), "--cache-dir", "c")
    assert done.code == 0, done.output
    return done.stdout


def test_a_refusal_is_one_status_file_on_the_last_render(world: World) -> None:
    hub = world.hub()
    assert hub.run_once().outcome == "committed"
    world.scale(3)
    signed = world.commit("scale to 3", "alice")
    world.push()
    assert hub.run_once().outcome == "committed"
    good = world.output()
    before = listing(world, good)

    world.scale(7)
    unsigned = world.commit("scale to 7, unsigned")
    world.push()
    report = hub.run_once()
    held(report, unsigned, "not signed")
    recorded = world.output()
    assert report.output == recorded != good
    assert git(world.remote, "rev-parse", f"{recorded}^") == good
    after = listing(world, recorded)
    assert {p: b for p, b in after.items() if p != HUB_STATUS_PATH} == before
    assert HUB_STATUS_PATH in after and HUB_STATUS_PATH not in before
    assert world.rendered_replicas() == "3"

    found = trailers(world, recorded)
    assert found["Gitfleet-Source"] == [signed]
    assert found["Gitfleet-Source-Refused"] == [unsigned]
    assert "Gitfleet-Reports" not in found

    doc = hub_status(world)
    assert (doc.status.refused_source, doc.status.rendered_source) == (unsigned, signed)
    condition = doc.refusal()
    assert condition is not None and condition.reason == "SourceVerificationFailed"
    assert f"commit {unsigned[:12]}: not signed" in condition.message
    assert condition.last_transition_time == "2026-11-21T10:00:00Z"

    # Polling again, or a restarted hub, records nothing new.
    for again in (hub, world.hub("restarted")):
        held(again.run_once(), unsigned, "not signed")
        assert world.output() == recorded


def test_status_and_history_show_the_refusal(world: World) -> None:
    hub = world.hub()
    assert hub.run_once().outcome == "committed"
    good_source = git(world.work, "rev-parse", "HEAD")
    assert "no refused source commit" in status_cli(world, "hub")
    world.scale(4)
    mallory = world.commit("scale by mallory", "mallory")
    world.push()
    held(hub.run_once(), mallory, "signed by a key that is not allowed")

    text = status_cli(world, "hub")
    assert f"REFUSING source commit {mallory[:12]} (SourceVerificationFailed" in text
    assert f"still renders source {good_source[:12]}" in text
    assert "signed by a key that is not allowed" in text
    doc = json.loads(status_cli(world, "hub", "--output", "json"))
    assert doc["status"]["status"]["refusedSource"] == mallory
    placement = status_cli(world, "placement", "web")
    assert placement.startswith(f"Hub: REFUSING source commit {mallory[:12]}")
    cluster = status_cli(world, "cluster", "eu-1")
    assert cluster.startswith("Hub: REFUSING")
    as_json = json.loads(status_cli(world, "placement", "web", "--output", "json"))
    assert as_json["hub"]["status"]["refusedSource"] == mallory
    history = run_cli(world.tmp, "history", "--repo", str(world.remote), "--cache-dir", "c")
    assert f"source {mallory[:12]} refused (SourceVerificationFailed)" in history.stdout


def test_status_updaterun_shows_the_refusal_too(world: World) -> None:
    placement = world.work / "placements/web.yaml"
    placement.write_text(placement.read_text() + "  strategy:\n    type: External\n")
    (world.work / "rollouts").mkdir()
    (world.work / "rollouts/release.yaml").write_text(STAGED)
    world.commit("web rolls out by a staged run", "alice")
    world.push()
    hub = world.hub()
    assert hub.run_once().outcome == "committed"
    before = status_cli(world, "updaterun", "release")
    assert "Stage eu  [Started]" in before and "eu-1: updating" in before, before
    assert "Hub:" not in before
    assert "hub" not in json.loads(status_cli(world, "updaterun", "release", "--output", "json"))

    world.scale(4)
    unsigned = world.commit("scale, unsigned")
    world.push()
    held(hub.run_once(), unsigned, "not signed")
    text = status_cli(world, "updaterun", "release")
    hub_line = f"Hub: REFUSING source commit {unsigned[:12]} (SourceVerificationFailed"
    assert text.startswith(hub_line), text
    assert text.endswith("\n\n" + before)  # the Hub lines, a blank line, the same view
    as_json = json.loads(status_cli(world, "updaterun", "release", "--output", "json"))
    assert as_json["hub"]["status"]["refusedSource"] == unsigned
    assert as_json["status"]["metadata"]["name"] == "release"


def test_the_next_accepted_render_removes_the_record(world: World) -> None:
    hub = world.hub()
    assert hub.run_once().outcome == "committed"
    signed = git(world.work, "rev-parse", "HEAD")
    world.scale(6)
    first = world.commit("unsigned")
    world.push()
    held(hub.run_once(), first, "not signed")
    # A second refused tip replaces the record (a new commit, a new transition time).
    world.scale(8)
    second = world.commit("unsigned again")
    world.push()
    later = Hub(HubConfig(str(world.remote), world.tmp / "later"), clock=lambda: NOW + HOUR)
    held(later.run_once(), first, "not signed")  # the oldest unverified commit is named
    doc = hub_status(world)
    condition = doc.refusal()
    assert doc.status.refused_source == second and condition is not None
    assert condition.last_transition_time == "2026-11-21T11:00:00Z"

    # Back to the last reconciled commit (not a rewrite): rendered again, the record removed.
    git(world.work, "reset", "-q", "--hard", signed)
    world.push()
    report = hub.run_once()
    assert report.outcome == "committed", report
    assert HUB_STATUS_PATH not in listing(world, OUTPUT)
    assert "no refused source commit" in status_cli(world, "hub")
    assert "Gitfleet-Source-Refused" not in trailers(world, OUTPUT)
    assert hub.run_once().outcome == "skipped"


def test_the_record_is_signed_by_a_signing_hub(world: World) -> None:
    hub_key = world.key("hub")
    signers = world.tmp / "hub_signers"
    signers.write_text(world.signer_line("hub"))
    hub = world.hub(sign_key=hub_key)
    assert hub.run_once().outcome == "committed"
    world.scale(2)
    unsigned = world.commit("unsigned")
    world.push()
    held(hub.run_once(), unsigned, "not signed")
    assert trailers(world, OUTPUT)["Gitfleet-Source-Refused"] == [unsigned]
    assert read_verdict(world.remote, signers, OUTPUT) == "G"


def test_a_refused_first_pass_records_only_the_refusal(world: World) -> None:
    accepted = git(world.work, "rev-parse", "HEAD")
    world.scale(4)
    unsigned = world.commit("unsigned first commit the hub sees")
    world.push()
    hub = world.hub()
    report = hub.run_once()
    held(report, unsigned, "not signed")
    recorded = world.output()
    assert report.output == recorded
    assert list(listing(world, recorded)) == [HUB_STATUS_PATH]  # no clusters/, no state/
    assert git(world.remote, "rev-list", "--count", recorded) == "1"
    found = trailers(world, recorded)
    assert found["Gitfleet-Source-Refused"] == [unsigned]
    assert "Gitfleet-Source" not in found and "Gitfleet-Reports" not in found
    doc = hub_status(world)
    assert (doc.status.refused_source, doc.status.rendered_source) == (unsigned, None)
    condition = doc.refusal()
    assert condition is not None and condition.reason == "SourceVerificationFailed"
    assert f"commit {unsigned[:12]}: not signed" in condition.message
    assert condition.last_transition_time == "2026-11-21T10:00:00Z"
    text = status_cli(world, "hub")
    assert text.startswith(
        f"Hub: REFUSING source commit {unsigned[:12]} (SourceVerificationFailed, since "
        "2026-11-21T10:00:00Z); nothing is rendered yet"
    ), text
    history = run_cli(world.tmp, "history", "--repo", str(world.remote), "--cache-dir", "c")
    assert f"source {unsigned[:12]} refused (SourceVerificationFailed)" in history.stdout

    # The same refusal again (polling, a restarted hub, an hour later) commits nothing.
    later = Hub(HubConfig(str(world.remote), world.tmp / "later"), clock=lambda: NOW + HOUR)
    for again in (hub, world.hub("restarted"), later):
        held(again.run_once(), unsigned, "not signed")
        assert world.output() == recorded

    # The first accepted source is rendered on top of the record, which it removes.
    git(world.work, "reset", "-q", "--hard", accepted)
    world.push()
    report = hub.run_once()
    assert report.outcome == "committed", report
    assert git(world.remote, "rev-parse", f"{OUTPUT}^") == recorded
    files = listing(world, OUTPUT)
    assert HUB_STATUS_PATH not in files and any(p.startswith("clusters/eu-1/") for p in files)
    assert trailers(world, OUTPUT)["Gitfleet-Source"] == [accepted]
    assert "no refused source commit" in status_cli(world, "hub")
    assert hub.run_once().outcome == "skipped"


def test_status_still_needs_a_name_except_for_hub(tmp_path: Path) -> None:
    done = run_cli(tmp_path, "status", "placement", "--repo", str(tmp_path))
    assert done.code == 2 and "Missing argument 'NAME'" in done.stderr, done.output
