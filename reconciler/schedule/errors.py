"""The error a scheduling plugin raises when a cycle cannot be computed at all.

KubeFleet aborts the whole cycle on a plugin error (an unparsable property value, a bad property
name): it does not filter the single cluster. Raised by plugins, caught by `cycle`.
"""


class ScheduleError(Exception):
    """A scheduling cycle failed; the placement keeps its previous bindings."""
