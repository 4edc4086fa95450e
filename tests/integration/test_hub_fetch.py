"""The hub's fetch after its own push on a real remote: the push moves the mirror's
remote-tracking ref of the output branch (`Mirror.push_fast_forward`), so the next fetch finds
the output where the hub left it instead of downloading the hub's own commit again and checking
its connectivity against the previous output tip (a walk of that whole tree; benchmarks/README.md
"Push cost at fleet-1k")."""

from __future__ import annotations

from pathlib import Path

from tests.helpers.hubs import Clock
from tests.integration.test_hub_faults import OUTPUT, World, rev


def test_the_output_tracking_ref_follows_the_hubs_own_push(tmp_path: Path) -> None:
    world, clock = World.create(tmp_path), Clock()
    hub = world.hub("hub", clock)
    tracking = f"refs/remotes/origin/{OUTPUT}"
    first = hub.run_once()
    assert first.outcome == "committed"
    assert hub.mirror.resolve(tracking) == first.output == rev(world.remote, OUTPUT)
    world.edit(1)
    second = hub.run_once()
    assert second.outcome == "committed" and second.output != first.output
    assert hub.mirror.resolve(tracking) == second.output == rev(world.remote, OUTPUT)
    assert hub.run_once().outcome == "skipped"
    other = world.hub("other", clock)  # another hub's mirror sees the same tip after its fetch
    assert other.run_once().outcome == "skipped"
    assert other.mirror.resolve(tracking) == second.output
