"""Shared pieces of the test suite's fixtures, with real Git and real tools (no mocks).

- `gitrepo`: run git with a fixed identity, make bare remotes and working repositories, commit
  and push, read files and messages of the output branch.
- `hubs`: a settable `Clock` and a hub that never really sleeps.
- `agents`: an agent for an in-memory cluster that never really sleeps.
- `fleetfiles`: write fleet trees and format the small YAML documents most fixtures repeat
  (MemberCluster, Namespace + ConfigMap, ClusterResourcePlacement, staged strategy and run).
- `signing`: ed25519 SSH keys (`ssh-keygen`), allowed-signers lines, signed commits
  (`git commit -S`) and git's verdict on a signature.
- `manifests`: the `Widget` custom resource kind and object the agent tests apply.
- `counting`: a cluster name that counts its equality comparisons (linear-time lookups).

Used by tests/integration (test_hub_agent, test_staged_e2e, test_staged_plan, test_rollback_hub,
test_rollback, test_hub_faults, test_hub_race, test_deletion_guard, test_plan_scale,
test_secrets_roundtrip, test_apply_strategies, test_replay_protection, test_loops_survive,
test_signed_commits), tests/unit/reconciler/test_history.py, tests/unit/agent/conftest.py,
tests/unit/rollout/test_rolling.py, tests/unit/distribute/test_allocate.py and
tests/kube/test_kube_apply.py. Import as `tests.helpers.<module>`: pytest runs with
`pythonpath = ["."]` and `--import-mode=importlib` (pyproject.toml), and `make types` checks
this package with mypy --strict. CLI subprocess runs and output-tree readers stay in
tests/integration/fleet_helpers.py.
"""
