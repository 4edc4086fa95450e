"""The rollout stage (DESIGN.md §3): which bound clusters get a placement's latest content this
pass — rolling updates, External placements driven by staged update runs and cluster group
upgrades, evictions and disruption budgets. `model` holds the vocabulary every driver shares."""
