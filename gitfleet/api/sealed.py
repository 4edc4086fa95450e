"""`EncryptedSecret` (gitfleet.io/v1alpha1): how a Secret travels on the output branch.

The hub never writes a Secret in clear to the output branch: for each cluster a placement sends a
Secret to, it writes this document instead (file and index entry named after the Secret, so
`clusters/<c>/index.yaml` lists the Secret). `spec.ciphertext` is an ASCII-armored age file whose
plaintext is the Secret as canonical JSON, encrypted to the cluster's age recipient (the
MemberCluster annotation `gitfleet.io/age-recipient`) and to the hub's own recipient (so the hub
can reuse the same bytes on the next pass instead of encrypting again). `spec.keys` lists the
key names only. Written by `reconciler.sealing`, read by `gitfleet.agent.desired`.
"""

from __future__ import annotations

from typing import Literal

from gitfleet.api.base import KubeModel

ENCRYPTED_SECRET_KIND = "EncryptedSecret"
AGE_RECIPIENT_ANNOTATION = "gitfleet.io/age-recipient"
"""MemberCluster annotation: the cluster agent's age public key (`age1...`)."""


class EncryptedSecretMeta(KubeModel):
    """The Secret's name and namespace (the index entry repeats them)."""

    name: str
    namespace: str | None = None


class EncryptedSecretSpec(KubeModel):
    """The encrypted Secret: key names, recipients, armored age payload."""

    keys: list[str]
    """Names of the Secret's data/stringData keys, sorted (never their values)."""
    recipients: list[str]
    """age recipients the payload is encrypted to: the cluster's, then the hub's."""
    ciphertext: str
    """ASCII-armored age file; its plaintext is the Secret as canonical JSON."""


class EncryptedSecret(KubeModel):
    """A Secret as the output branch holds it: ciphertext only."""

    api_version: Literal["gitfleet.io/v1alpha1"]
    kind: Literal["EncryptedSecret"]
    metadata: EncryptedSecretMeta
    spec: EncryptedSecretSpec
