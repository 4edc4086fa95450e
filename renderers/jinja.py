"""Jinja2 renderer: `*.j2` templates rendered in a sandbox, then parsed as YAML.

Templates run in `ImmutableSandboxedEnvironment` with `StrictUndefined`, no autoescaping, and a
loader confined to the repository's top-level `templates/` folder (read through the Tree, so a Git
commit works like a working directory). They see `values` (Fleet spec.values), `clusters` (the
inventory, sorted by name) and `fleet` (the Fleet object). Data is inserted as data, never as
YAML text: each interpolated value becomes a slot marker in the rendered text, and the YAML
builder puts the value itself in its place (`gitfleet.load.yamlbuild`: a plain scalar that is
exactly one value gets it typed, any other scalar gets its text), so `web, labels: {x: 1}` stays
one string wherever it lands. An interpolated value whose text holds a line break is refused
unless it came through the `toyaml` or `tojson` filters (which insert YAML text on purpose). Each template runs in a killable worker process (`jinja_worker`) with a
wall-clock deadline, an output cap and a memory cap. Called by `load_fleet` through the registry.
"""

from __future__ import annotations

import json
import re
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

from jinja2 import BaseLoader, Environment, StrictUndefined, Template, TemplateNotFound
from jinja2.exceptions import SecurityError, TemplateSyntaxError, UndefinedError
from jinja2.filters import do_indent
from jinja2.runtime import Macro
from jinja2.sandbox import ImmutableSandboxedEnvironment

from gitfleet.api.errors import FleetError
from gitfleet.load.model import SourceDoc
from gitfleet.load.yamlbuild import slot_marker
from gitfleet.load.yamlio import dump_yaml, parse_documents
from renderers.base import RenderContext, RenderResult, TemplateContext, Unit, read_source
from renderers.jinja_worker import DeadlineWorker

PARTIALS_DIR = "templates/"
"""Top-level folder of partials: usable by include/import/extends, never rendered alone."""
SUFFIX = ".j2"
_LINE_BREAK = re.compile("[\n\r\x85\u2028\u2029]")


def is_partial(path: str) -> bool:
    """True for files under the top-level `templates/` folder."""
    return path.startswith(PARTIALS_DIR)


def claims(path: str) -> bool:
    """True for `*.j2` files outside `templates/`."""
    return path.endswith(SUFFIX) and not is_partial(path)


class Data(str):
    """Text made by `toyaml`/`tojson`: already-serialised data, allowed to span lines."""

    __slots__ = ()


class LineBreakError(Exception):
    """An interpolated value would have inserted a line break (raw YAML) into the output."""


class OutputTooLarge(Exception):
    """The rendered text grew past `limits.template_max_output_bytes`."""


@dataclass(frozen=True)
class Outcome:
    """The result of one template run in the worker: text, or an error message and line."""

    text: str | None
    message: str = ""
    line: int | None = None
    slots: tuple[Any, ...] = ()
    """The interpolated values, in marker order (`yamlbuild.slot_marker`)."""


_SLOTS: list[Any] = []
"""Values interpolated by the template being rendered (one render at a time per process)."""


def _finalize(value: Any) -> Any:
    if isinstance(value, Data):
        return value
    text = value if isinstance(value, str) else str(value)
    if _LINE_BREAK.search(text):
        raise LineBreakError(
            "an interpolated value contains a line break; values are inserted as data, not as "
            "YAML text: use '| toyaml' (with '| indent') or '| tojson' to insert structures"
        )
    _SLOTS.append(_plain(value))
    return slot_marker(len(_SLOTS) - 1)


def _plain(value: Any) -> Any:
    """`value` as plain data (Jinja strings such as Markup become str)."""
    if isinstance(value, str):
        return str(value)
    if value is None or isinstance(value, bool | int | float | dict | list):
        return value
    return str(value)


def _require_defined(value: Any) -> None:
    if isinstance(value, StrictUndefined):
        value._fail_with_undefined_error()


def to_json(value: Any) -> Data:
    """Filter `tojson`: JSON text (valid YAML flow), keys sorted, ASCII only, on one line."""
    _require_defined(value)
    return Data(json.dumps(value, sort_keys=True, ensure_ascii=True, allow_nan=False))


def to_yaml(value: Any) -> Data:
    """Filter `toyaml`: canonical block YAML of a value, without the trailing newline."""
    _require_defined(value)
    text = dump_yaml(value)
    if text.endswith("\n...\n"):
        text = text[: -len("...\n")]
    return Data(text.rstrip("\n"))


def indent(value: str, width: int | str = 4, first: bool = False, blank: bool = False) -> str:
    """Filter `indent`, as Jinja's, but keeping the `toyaml`/`tojson` mark; marked text is split
    on LF only, so a U+2028/U+0085 inside a quoted scalar stays data (Jinja's splits on it)."""
    if not isinstance(value, Data):
        return do_indent(value, width, first, blank)
    pad = width if isinstance(width, str) else " " * width
    lines = str(value).split("\n")
    return Data(
        "\n".join(
            pad + line if (first if i == 0 else bool(line) or blank) else line
            for i, line in enumerate(lines)
        )
    )


def _partial_path(name: str) -> str:
    """Repository path of a template name, which must name a file under `templates/`."""
    parts = name.split("/")
    if name.startswith("/") or "\\" in name or any(p in ("", ".", "..") for p in parts):
        raise SecurityError(
            f"template name {name!r} is refused: include/import/extends may only name files "
            f"under {PARTIALS_DIR} (relative names, no '..')"
        )
    return PARTIALS_DIR + name


class PartialsLoader(BaseLoader):
    """Serves the pre-read sources of `templates/**` by name relative to that folder."""

    def __init__(self, sources: Mapping[str, str]) -> None:
        self._sources = dict(sources)

    def get_source(
        self, environment: Environment, template: str
    ) -> tuple[str, str, Callable[[], bool]]:
        path = _partial_path(template)
        if path not in self._sources:
            raise TemplateNotFound(
                template, f"template {path} not found (names are under templates/)"
            )
        return self._sources[path], path, lambda: True

    def list_templates(self) -> list[str]:
        return sorted(p[len(PARTIALS_DIR) :] for p in self._sources)


class _Environment(ImmutableSandboxedEnvironment):
    """The sandbox, where a macro's output counts as template text (its own interpolations are
    already markers), not as one data value."""

    def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:
        result = super().call(__context, __obj, *args, **kwargs)
        if isinstance(__obj, Macro) and isinstance(result, str):
            return Data(result)
        return result


def build_environment(partials: Mapping[str, str]) -> ImmutableSandboxedEnvironment:
    """The sandboxed environment every template is rendered with."""
    env = _Environment(
        loader=PartialsLoader(partials),
        undefined=StrictUndefined,
        autoescape=False,
        keep_trailing_newline=True,
        finalize=_finalize,
        auto_reload=False,
    )
    env.filters.update(toyaml=to_yaml, tojson=to_json, indent=indent)
    return env


def _generate(template: Template, context: Mapping[str, Any], max_bytes: int) -> str:
    chunks: list[str] = []
    size = 0
    for chunk in template.generate(context):
        size += len(chunk.encode("utf-8", "surrogatepass"))
        if size > max_bytes:
            raise OutputTooLarge(
                f"rendered output exceeds limits.templateMaxOutputBytes ({max_bytes} bytes)"
            )
        chunks.append(chunk)
    return "".join(chunks)


def _template_frames(exc: BaseException, path: str) -> tuple[int | None, str]:
    """(line in `path`, "in templates/x.j2:N: " when the innermost template frame is a partial)."""
    frames = [
        f
        for f in traceback.extract_tb(exc.__traceback__)
        if f.filename == path or f.filename.startswith(PARTIALS_DIR)
    ]
    own = [f.lineno for f in frames if f.filename == path]
    line = own[-1] if own else None
    if frames and frames[-1].filename != path:
        return line, f"in {frames[-1].filename}:{frames[-1].lineno}: "
    return line, ""


def _explain(exc: BaseException) -> str:
    if isinstance(exc, SecurityError):
        return f"refused by the template sandbox: {exc}"
    if isinstance(exc, UndefinedError):
        return f"undefined value: {exc}"
    if isinstance(exc, TemplateNotFound):
        return str(exc.message or f"template {exc.name} not found")
    if isinstance(exc, LineBreakError | OutputTooLarge):
        return str(exc)
    return f"{exc.__class__.__name__}: {exc}"


def render_text(
    env: Environment, context: Mapping[str, Any], max_bytes: int, job: tuple[str, str]
) -> Outcome:
    """Render one template (runs inside the worker process); never raises."""
    path, source = job
    _SLOTS.clear()
    try:
        code = env.compile(source, name=path, filename=path)
        template = env.template_class.from_code(env, code, env.make_globals(None))
        text = _generate(template, context, max_bytes)
        return Outcome(text, slots=tuple(_SLOTS))
    except TemplateSyntaxError as exc:
        where = "" if exc.filename in (None, path) else f"in {exc.filename}:{exc.lineno}: "
        line = exc.lineno if where == "" else _template_frames(exc, path)[0]
        return Outcome(None, f"{where}template syntax error: {exc.message}", line)
    except RecursionError:
        return Outcome(None, "recursion too deep: a macro or include calls itself without end")
    except MemoryError:
        return Outcome(None, "the template used too much memory and was stopped")
    except Exception as exc:
        line, where = _template_frames(exc, path)
        return Outcome(None, where + _explain(exc), line)


def template_variables(ctx: TemplateContext) -> dict[str, Any]:
    """The variables every template sees."""
    return {
        "values": dict(ctx.values),
        "clusters": [dict(c) for c in ctx.clusters],
        "fleet": dict(ctx.fleet),
    }


def _read_partials(ctx: RenderContext) -> tuple[dict[str, str], list[FleetError]]:
    sources: dict[str, str] = {}
    errors: list[FleetError] = []
    for path in ctx.tree.files():
        if is_partial(path):
            text, error = read_source(ctx.tree, path, ctx.limits)
            if text is not None:
                sources[path] = text
            errors.extend([error] if error else [])
    return sources, errors


class JinjaRenderer:
    """Sandboxed Jinja2 templates, one worker process per batch."""

    name = "jinja"

    def render(self, units: Sequence[Unit], ctx: RenderContext) -> RenderResult:
        if not units:
            return [], []
        partials, errors = _read_partials(ctx)
        docs: list[SourceDoc] = []
        env = build_environment(partials)
        job = partial(
            render_text, env, template_variables(ctx.template), ctx.limits.template_max_output_bytes
        )
        with DeadlineWorker(job) as worker:
            for unit in units:
                found, problems = self._render_one(worker, unit, ctx)
                docs.extend(found)
                errors.extend(problems)
        return docs, errors

    def _render_one(self, worker: DeadlineWorker, unit: Unit, ctx: RenderContext) -> RenderResult:
        source, error = read_source(ctx.tree, unit.path, ctx.limits)
        if source is None:
            return [], [error] if error else []
        timeout = ctx.limits.template_timeout_seconds
        reply = worker.call((unit.path, source), timeout)
        if reply.status == "timeout":
            message = (
                f"rendering took longer than limits.templateTimeoutSeconds ({timeout:g}s); "
                "the template was stopped"
            )
            return [], [FleetError(unit.path, None, "", message)]
        if reply.status != "ok":
            return [], [
                FleetError(unit.path, None, "", f"template rendering failed: {reply.detail}")
            ]
        outcome: Outcome = reply.value
        if outcome.text is None:
            return [], [FleetError(unit.path, outcome.line, "", outcome.message)]
        docs, problems = parse_documents(
            unit.path, outcome.text, ctx.limits, renderer=self.name, slots=outcome.slots
        )
        return docs, [_mark_rendered(p) for p in problems]


def _mark_rendered(error: FleetError) -> FleetError:
    if error.line is None:
        return error
    return replace(error, message=f"{error.message} (line in the rendered output)")
