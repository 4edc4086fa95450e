"""Governance rules the hub enforces before anything reaches the output branch.

`tenancy`: tenants own paths of the fleet repository and may only place what their Tenant allows.
`deletion`: the mass-deletion guard (Fleet.spec.deletionBudget, DeletionHeld, approvals).
Pure; called by `reconciler.placement` and `reconciler.pass_`.
"""
