"""Deterministic synthetic fleet generator for benchmarks: same arguments, byte-identical files.

`python benchmarks/generate.py --size fleet-1k --seed 1 --out /tmp/fleet-1k` (or explicit
`--clusters/--placements/--resources/--overrides`) writes a fleet repository: MemberClusters with
region/env/tier labels, one namespace per placement with a Namespace plus ConfigMap/Deployment/
Service apps, ClusterResourcePlacements (fleet-wide PickAll for platform namespaces, PickAll with a
required region/env affinity, PickFixed, and ~20% PickN with affinity and topology spread), and
ClusterResourceOverride/ResourceOverride objects using KubeFleet's variables. Every namespace is
selected by exactly one placement, so placements never conflict. Called from the command line,
by `benchmarks/bench_render.py` and by `tests/unit/bench/test_generate.py`.
"""

from __future__ import annotations

import argparse
import random
import sys
from dataclasses import dataclass
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make `benchmarks` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import manifests as m

REGIONS = ("eastus", "westus2", "westeurope", "northeurope", "southeastasia", "japaneast")
ENVS, ENV_WEIGHTS = ("prod", "staging", "dev"), (5, 3, 2)
TIERS, TIER_WEIGHTS = ("gold", "silver", "bronze"), (2, 4, 4)
HEARTBEATS = (15, 30, 60, 60, 60, 120)
TEAMS = (
    "payments", "checkout", "catalog", "search", "identity", "orders", "inventory", "shipping",
    "analytics", "reporting", "notify", "billing", "pricing", "reviews", "media", "ledger",
)  # fmt: skip
PLATFORM = ("monitoring", "logging", "ingress", "certs", "dns", "policy", "secrets", "backup")
APPS = ("api", "web", "worker", "cache", "gateway", "scheduler", "indexer", "consumer", "admin")


@dataclass(frozen=True)
class FleetSize:
    """How many of each thing a generated fleet has."""

    clusters: int
    placements: int
    resources: int
    overrides: int


SIZES = {
    "fleet-1k": FleetSize(clusters=1000, placements=200, resources=2000, overrides=100),
    "fleet-5k": FleetSize(clusters=5000, placements=200, resources=2000, overrides=100),
    "fleet-10k": FleetSize(clusters=10000, placements=200, resources=2000, overrides=100),
}


@dataclass(frozen=True)
class Cluster:
    """A drawn member cluster."""

    name: str
    labels: dict[str, str]
    heartbeat: int


@dataclass(frozen=True)
class Namespace:
    """A namespace, the placement that selects it and its payload objects."""

    name: str
    team: str
    policy: str
    """platform (fleet-wide PickAll) | affinity (PickAll) | fixed (PickFixed) | pickn (PickN)."""
    objects: tuple[tuple[str, m.Obj], ...]
    """(file name under resources/<name>/, object); the Namespace first."""


@dataclass(frozen=True)
class GeneratedFleet:
    """The fleet as files (repository path -> bytes) plus what was drawn."""

    files: dict[str, bytes]
    clusters: tuple[Cluster, ...]
    namespaces: tuple[Namespace, ...]

    def policy_counts(self) -> dict[str, int]:
        """Placements per policy kind, sorted by kind."""
        counts: dict[str, int] = {}
        for ns in self.namespaces:
            counts[ns.policy] = counts.get(ns.policy, 0) + 1
        return dict(sorted(counts.items()))


def check_size(size: FleetSize) -> None:
    """Raise ValueError when the numbers cannot make a conflict-free fleet."""
    if size.clusters < 3 or size.placements < 1:
        raise ValueError("need at least 3 clusters and 1 placement")
    if size.clusters > 99999:
        raise ValueError("at most 99999 clusters")
    if size.resources < size.placements:
        raise ValueError("need at least one resource (its Namespace) per placement")
    if size.overrides < 0:
        raise ValueError("overrides cannot be negative")


def draw_clusters(rng: random.Random, count: int) -> list[Cluster]:
    """Clusters `<region>-<env>-<nnnnn>` with region, env and tier labels."""
    out = []
    for i in range(1, count + 1):
        region = rng.choice(REGIONS)
        env = rng.choices(ENVS, ENV_WEIGHTS)[0]
        tier = rng.choices(TIERS, TIER_WEIGHTS)[0]
        labels = {"region": region, "env": env, "tier": tier}
        out.append(Cluster(f"{region}-{env}-{i:05d}", labels, rng.choice(HEARTBEATS)))
    return out


def _policies(rng: random.Random, count: int) -> list[str]:
    """Platform namespaces first (2%, at least 1), then a shuffled mix: ~20% PickN, ~10%
    PickFixed, the rest PickAll with affinity (each at least 1 when there is room)."""
    platform = max(1, count // 50)
    rest = count - platform
    pickn = min(rest, max(1, round(count * 0.2)))
    fixed = min(rest - pickn, max(1, round(count * 0.1)))
    mix = ["pickn"] * pickn + ["fixed"] * fixed + ["affinity"] * (rest - pickn - fixed)
    rng.shuffle(mix)
    return ["platform"] * platform + mix


def _ns_name(index: int, policy: str) -> tuple[str, str]:
    """(namespace name, team)."""
    if policy == "platform":
        word = PLATFORM[index % len(PLATFORM)]
        suffix = "" if index < len(PLATFORM) else f"-{index // len(PLATFORM)}"
        return f"platform-{word}{suffix}", "platform"
    team = TEAMS[index % len(TEAMS)]
    return f"{team}-{index:03d}", team


def _app_objects(rng: random.Random, ns: str, team: str, count: int) -> list[tuple[str, m.Obj]]:
    """`count` objects cycling ConfigMap, Deployment, Service per app."""
    out: list[tuple[str, m.Obj]] = []
    offset = rng.randrange(len(APPS))
    port, cpu, mem, replicas, image = 8080, 100, 128, 2, ""
    for j in range(count):
        k = j // 3
        app = APPS[(offset + k) % len(APPS)] + ("" if k < len(APPS) else f"-{k // len(APPS)}")
        if j % 3 == 0:
            port = rng.choice((8080, 8443, 9090, 3000))
            cpu, mem = rng.choice((50, 100, 250, 500)), rng.choice((64, 128, 256, 512))
            replicas = rng.randint(1, 4)
            image = f"registry.example.com/{team}/{app}:1.{rng.randint(0, 30)}.{rng.randint(0, 9)}"
            settings = {
                "log.level": rng.choice(("info", "warn")),
                "server.port": str(port),
                "cache.ttl.seconds": str(rng.choice((30, 60, 300))),
                "feature.new-ui": rng.choice(("true", "false")),
            }
            out.append((f"configmap-{app}-config.yaml", m.config_map(ns, app, team, settings)))
        elif j % 3 == 1:
            obj = m.deployment(ns, app, team, image, replicas, (port, cpu, mem))
            out.append((f"deployment-{app}.yaml", obj))
        else:
            out.append((f"service-{app}.yaml", m.service(ns, app, team, port)))
    return out


def draw_namespaces(rng: random.Random, size: FleetSize) -> list[Namespace]:
    """One namespace per placement; resources spread evenly, the remainder at random."""
    counts = [size.resources // size.placements] * size.placements
    for i in sorted(rng.sample(range(size.placements), size.resources % size.placements)):
        counts[i] += 1
    out = []
    for i, policy in enumerate(_policies(rng, size.placements)):
        name, team = _ns_name(i, policy)
        objects = [("namespace.yaml", m.namespace(name, team))]
        objects += _app_objects(rng, name, team, counts[i] - 1)
        out.append(Namespace(name, team, policy, tuple(objects)))
    return out


def _affinity_selector(rng: random.Random) -> m.Obj:
    roll = rng.random()
    if roll < 0.5:
        return {"matchLabels": {"region": rng.choice(REGIONS)}}
    if roll < 0.85:
        envs = sorted(rng.sample(ENVS, rng.randint(1, 2)), key=ENVS.index)
        return {"matchExpressions": [{"key": "env", "operator": "In", "values": envs}]}
    return {"matchLabels": {"region": rng.choice(REGIONS), "env": rng.choice(ENVS)}}


def draw_placement(rng: random.Random, ns: Namespace, clusters: list[Cluster]) -> m.Obj:
    """The ClusterResourcePlacement (named like its namespace) selecting `ns`."""
    if ns.policy == "platform":
        return m.pick_all(ns.name, ns.name, None)
    if ns.policy == "affinity":
        return m.pick_all(ns.name, ns.name, _affinity_selector(rng))
    if ns.policy == "fixed":
        picked = rng.sample(clusters, min(len(clusters), rng.randint(3, 10)))
        return m.pick_fixed(ns.name, ns.name, sorted(c.name for c in picked))
    envs = ["prod"] if rng.random() < 0.6 else ["prod", "staging"]
    when = rng.choice(("DoNotSchedule", "ScheduleAnyway"))
    return m.pick_n(ns.name, ns.name, rng.randint(3, 25), envs, when, rng.choice((20, 50, 80)))


def _objects_of_kind(namespaces: list[Namespace], kind: str) -> list[tuple[Namespace, m.Obj]]:
    return [(ns, obj) for ns in namespaces for _, obj in ns.objects if obj["kind"] == kind]


def draw_overrides(rng: random.Random, namespaces: list[Namespace], count: int) -> list[m.Obj]:
    """Half CROs (one namespace each), half ROs (one Deployment or ConfigMap each); every
    resource is selected by at most one override (KubeFleet's rule)."""
    cros = min(count // 2, len(namespaces))
    targets = _objects_of_kind(namespaces, "Deployment") + _objects_of_kind(namespaces, "ConfigMap")
    if count - cros > len(targets):
        raise ValueError(f"{count} overrides need more resources: only {len(targets)} targets")
    out = []
    for ns in rng.sample(namespaces, cros):
        placement = ns.name if rng.random() < 0.5 else None
        out.append(m.cluster_resource_override(f"{ns.name}-cluster-labels", ns.name, placement))
    for ns, obj in rng.sample(targets, count - cros):
        name = obj["metadata"]["name"]
        if obj["kind"] == "Deployment":
            out.append(
                m.deployment_override(f"{name}-per-cluster", ns.name, name, rng.randint(3, 6))
            )
        else:
            out.append(m.config_map_override(f"{name}-per-env", ns.name, name))
    return out


def _override_path(obj: m.Obj) -> str:
    meta = obj["metadata"]
    if "namespace" in meta:
        return f"overrides/{meta['namespace']}.{meta['name']}.yaml"
    return f"overrides/{meta['name']}.yaml"


def build_fleet(size: FleetSize, seed: int, name: str = "bench") -> GeneratedFleet:
    """The whole fleet in memory; deterministic in (size, seed, name)."""
    check_size(size)
    rng = random.Random(seed)
    clusters = draw_clusters(rng, size.clusters)
    namespaces = draw_namespaces(rng, size)
    files = {"fleet.yaml": m.dump_yaml(m.fleet_settings(name))}
    for c in clusters:
        files[f"clusters/{c.name}.yaml"] = m.dump_yaml(
            m.member_cluster(c.name, c.labels, c.heartbeat)
        )
    for ns in namespaces:
        for file_name, obj in ns.objects:
            files[f"resources/{ns.name}/{file_name}"] = m.dump_yaml(obj)
        files[f"placements/{ns.name}.yaml"] = m.dump_yaml(draw_placement(rng, ns, clusters))
    for obj in draw_overrides(rng, namespaces, size.overrides):
        files[_override_path(obj)] = m.dump_yaml(obj)
    return GeneratedFleet(dict(sorted(files.items())), tuple(clusters), tuple(namespaces))


def write_fleet(fleet: GeneratedFleet, out: Path) -> None:
    """Write the files under `out`, which must be missing or empty (stale files would make
    two runs differ)."""
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise ValueError(f"{out} exists and is not an empty directory")
    for rel, data in fleet.files.items():
        target = out / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)


def resolve_size(args: argparse.Namespace) -> FleetSize:
    """The named size with explicit counts on top."""
    base = SIZES[args.size]
    return FleetSize(
        clusters=args.clusters if args.clusters is not None else base.clusters,
        placements=args.placements if args.placements is not None else base.placements,
        resources=args.resources if args.resources is not None else base.resources,
        overrides=args.overrides if args.overrides is not None else base.overrides,
    )


def add_size_options(p: argparse.ArgumentParser) -> None:
    """Add --size, the per-count overrides `resolve_size` reads, and --seed to `p` (the generator
    and the benchmarks that generate their fleet share them)."""
    p.add_argument("--size", choices=sorted(SIZES), default="fleet-1k")
    for flag in ("clusters", "placements", "resources", "overrides"):
        p.add_argument(f"--{flag}", type=int, help=f"number of {flag} (default: from --size)")
    p.add_argument("--seed", type=int, default=1)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """Command-line arguments of the generator."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_size_options(p)
    p.add_argument("--out", type=Path, required=True)
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Generate the fleet; exit 2 on bad arguments."""
    args = parse_args(argv)
    size = resolve_size(args)
    try:
        fleet = build_fleet(size, args.seed)
        write_fleet(fleet, args.out)
    except ValueError as exc:
        print(f"generate: {exc}", file=sys.stderr)
        return 2
    total = sum(len(b) for b in fleet.files.values())
    print(
        f"wrote {args.out}: {len(fleet.files)} files, {total} bytes; {size.clusters} clusters, "
        f"placements {fleet.policy_counts()}, {size.resources} resources, {size.overrides} overrides"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
