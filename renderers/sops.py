"""SOPS renderer: files encrypted with SOPS (age) are decrypted by the `sops` program.

A repository file whose YAML documents carry SOPS metadata (a top-level `sops:` mapping; any
name, `<name>.sops.yaml` by convention) is one unit. The hub decrypts it with `sops --decrypt`
and its own age identity (`SOPS_AGE_KEY_FILE`, or `--age-key-file` on the command line) in a
private temporary directory (only that file materialised; environment: PATH, a private HOME and
the key file, nothing else, so no cloud KMS credentials are ever used), under the external-tool
deadline `limits.maxKustomizeSeconds` and output cap `limits.templateMaxOutputBytes`.

Only core `v1` Secrets may be SOPS-encrypted (anything else would reach the output branch in
clear). Each decrypted Secret becomes a document whose values are placeholders
(`SealedValues.seal`); its line numbers and error locations are those of the encrypted file, and
no message ever quotes decrypted text. A missing `sops` binary, a missing or bad key, or a file
the key cannot open is an error naming the file; every other file goes on. Called by
`renderers.load_fleet`.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from gitfleet.api.errors import FleetError
from gitfleet.load.agecrypt import AgeKeyError, read_key
from gitfleet.load.model import SourceDoc
from gitfleet.load.sealedvalues import SealedValues, is_secret
from gitfleet.load.yamlio import decode_text, parse_documents
from renderers.base import RenderContext, RenderResult, Unit, read_source
from renderers.external import Run, materialise, run_tool

NO_KEY = (
    "this file is SOPS-encrypted and the hub has no age key to decrypt it: set "
    "SOPS_AGE_KEY_FILE or pass --age-key-file; the file is not loaded"
)
NO_SOPS = (
    "this file is SOPS-encrypted and the sops program was not found on PATH "
    "(hack/tools.sh builds it); the file is not loaded"
)


def is_sops_document(body: Mapping[str, Any]) -> bool:
    """Whether a parsed document carries SOPS metadata (a `sops:` mapping with a `mac`)."""
    meta = body.get("sops")
    return isinstance(meta, Mapping) and "mac" in meta


class SopsRenderer:
    """SOPS files decrypted with the hub's age key; Secrets sealed into `sealed`."""

    name = "sops"

    def __init__(self, key_file: Path | None, sealed: SealedValues, sops: str | None = None):
        self._key_file = key_file
        self._sealed = sealed
        self._sops = sops

    def render(self, units: Sequence[Unit], ctx: RenderContext) -> RenderResult:
        if not units:
            return [], []
        problem = self._setup()
        if problem:
            return [], [FleetError(u.path, None, "", problem) for u in units]
        sops = self._sops or shutil.which("sops")
        if sops is None:
            return [], [FleetError(u.path, None, "", NO_SOPS) for u in units]
        docs: list[SourceDoc] = []
        errors: list[FleetError] = []
        for unit in units:
            found, failed = self._render_one(sops, unit, ctx)
            docs.extend(found)
            errors.extend(failed)
        return docs, errors

    def _setup(self) -> str:
        """'' when the hub key is ready, else why not."""
        if self._sealed.key is not None:
            return ""
        if self._key_file is None:
            return NO_KEY
        try:
            self._sealed.key = read_key(self._key_file)
        except AgeKeyError as exc:
            return f"this file is SOPS-encrypted and the hub's age key cannot be used: {exc}"
        return ""

    def _render_one(self, sops: str, unit: Unit, ctx: RenderContext) -> RenderResult:
        text, error = read_source(ctx.tree, unit.path, ctx.limits)
        if text is None:
            return [], [error] if error else []
        encrypted, _ = parse_documents(unit.path, text, ctx.limits, renderer=self.name)
        out, reason = self._decrypt(sops, unit.path, ctx)
        if out is None:
            return [], [FleetError(unit.path, None, "", reason)]
        plain, problem = decode_text(unit.path, out)
        if plain is None:
            return [], [problem] if problem else []
        decrypted, faults = parse_documents(unit.path, plain, ctx.limits, renderer=self.name)
        if faults or len(decrypted) != len(encrypted):
            message = "sops decrypted this file into documents gitfleet cannot read"
            return [], [FleetError(unit.path, None, "", message)]
        return self._seal(unit.path, text, encrypted, decrypted)

    def _decrypt(self, sops: str, path: str, ctx: RenderContext) -> tuple[bytes | None, str]:
        key = self._sealed.key
        assert key is not None  # `_setup` read it
        key_file = Path(key.source)
        with tempfile.TemporaryDirectory(prefix="gitfleet-sops-") as tmp:
            root, home = Path(tmp) / "repo", Path(tmp) / "home"
            root.mkdir()
            home.mkdir()
            materialise(ctx.tree, root, ctx.limits, only=[path])
            argv = [sops, "--decrypt", "--input-type", "yaml", "--output-type", "yaml"]
            run = Run(
                [*argv, f"./{path}"],
                cwd=root,
                home=home,
                timeout=ctx.limits.max_kustomize_seconds,
                max_output=ctx.limits.template_max_output_bytes,
                env={"SOPS_AGE_KEY_FILE": str(key_file.resolve())},
            )
            limits = ("limits.maxKustomizeSeconds", "limits.templateMaxOutputBytes")
            return run_tool(run, "sops --decrypt", limits)

    def _seal(
        self, path: str, text: str, encrypted: list[SourceDoc], decrypted: list[SourceDoc]
    ) -> RenderResult:
        docs: list[SourceDoc] = []
        errors: list[FleetError] = []
        for enc, dec in zip(encrypted, decrypted, strict=True):
            if not is_secret(dec.body):
                message = (
                    "only v1 Secret objects may be SOPS-encrypted: this document would reach "
                    "the output branch in clear"
                )
                errors.append(FleetError(path, enc.line, "kind", message, enc.doc))
                continue
            body = self._sealed.seal(dec.body)
            docs.append(SourceDoc(path, enc.doc, enc.line, body, self.name, text))
        return docs, errors
