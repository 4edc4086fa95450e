"""`status/hub.yaml` on the output branch: the hub's own report on its source branch (HubStatus).

While the hub refuses the source branch's tip — a commit whose signature does not verify
(`SourceVerificationFailed`, README "Signed commits"), or a rewritten (force-pushed) history no
operator accepted yet (`SourceRewritten`) — it keeps enforcing the last render and
writes this one document, holding the refused commit id, the source commit the output still
renders and a `SourceAccepted=False` condition with the verdict; nothing of the refused commit
is written. The next pass that renders an accepted source removes the file (the pass writes the
whole output tree, and this file is not part of it), so its presence means "the hub is holding
the source". Written by `reconciler.sourcehold`, read by `gitfleet status` (`gitfleet.service`).
"""

from __future__ import annotations

from typing import Final, Literal

from pydantic import Field

from gitfleet.api.base import KubeModel
from gitfleet.api.conditions import Condition, find_condition

HUB_STATUS_PATH = "status/hub.yaml"
HUB_STATUS_KIND: Final = "HubStatus"
HUB_STATUS_API_VERSION: Final = "gitfleet.io/v1alpha2"
SOURCE_ACCEPTED = "SourceAccepted"
"""The condition type: False while the hub refuses the tip of the source branch."""
COMMIT_PATTERN = r"^([0-9a-f]{40}|[0-9a-f]{64})$"


class HubStatusMeta(KubeModel):
    """metadata: always the name `hub`."""

    name: Literal["hub"]


class HubSourceStatus(KubeModel):
    """status: which source commit the hub refuses, which one the output still renders."""

    refused_source: str = Field(pattern=COMMIT_PATTERN)
    """The tip of the source branch the hub did not reconcile."""
    rendered_source: str | None = Field(default=None, pattern=COMMIT_PATTERN)
    """The last reconciled source commit: what the output branch still renders."""
    conditions: list[Condition] = Field(default_factory=list)


class HubStatus(KubeModel):
    """`status/hub.yaml`: the hub's report on its source branch (present only while it holds)."""

    api_version: Literal["gitfleet.io/v1alpha2"]
    kind: Literal["HubStatus"]
    metadata: HubStatusMeta
    status: HubSourceStatus

    def refusal(self) -> Condition | None:
        """The `SourceAccepted=False` condition, or None when the document records none."""
        found = find_condition(self.status.conditions, SOURCE_ACCEPTED)
        return found if found is not None and found.status == "False" else None
