"""gitfleet: multi-cluster placement for Kubernetes with Git as the hub.

The package holds the product's base (kinds in `api`, the fleet loader in `load`, the only
git-running code in `repo`, the member agent in `agent`) and the `gitfleet` command (`cli`).
"""

__version__ = "0.1.0"
