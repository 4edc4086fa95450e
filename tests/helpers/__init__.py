"""Shared pieces of the test suite's real-Git fixtures (no mocks: real git, real ssh-keygen).

- `gitrepo`: run git with a fixed identity, make bare remotes and working repositories, commit
  and push, read files and messages of the output branch.
- `hubs`: a settable `Clock` and a hub that never really sleeps.
- `agents`: an agent for an in-memory cluster that never really sleeps.
- `fleetfiles`: write fleet trees and the small YAML documents most fixtures repeat
  (MemberCluster, Namespace + ConfigMap, ClusterResourcePlacement, staged strategy and run).
- `signing`: ed25519 SSH keys, allowed-signers lines, signed commits and signature verdicts.

Used by tests/integration (test_hub_agent, test_staged_e2e, test_staged_plan, test_rollback_hub,
test_rollback, test_hub_faults, test_hub_race, test_deletion_guard, test_secrets_roundtrip,
test_apply_strategies, test_replay_protection, test_loops_survive, test_signed_commits) and
tests/unit/reconciler/test_history.py. Imported as `tests.helpers.<module>` (pytest runs with
`pythonpath = ["."]` and `--import-mode=importlib`, see pyproject.toml).
"""
