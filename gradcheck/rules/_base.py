"""What a rule is: its code, its explanation, its fix and its INVALID/VALID examples.

A rule module holds everything about one cause (Fixit/ruff habit): the metadata that
``--explain`` prints and ``docs/rules/GCxxx.md`` is generated from, the fix text, the op
types that name the cause in a traced graph, and runnable examples. The tests run every
example through the trace engine, so docs, examples and behaviour cannot drift.
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass
from typing import ClassVar

_EXPECT = re.compile(r"#\s*expect:\s*(GC\d{3}(?:\s*,\s*GC\d{3})*)")


@dataclass(frozen=True)
class Example:
    """A complete, runnable script. In an INVALID example the culprit line carries
    ``# expect: GCxxx``; a VALID example must produce no finding at all."""

    title: str
    setting: str
    source: str
    #: False: the cause shows only in a run (a second derivative's missing gradient), so the
    #: static engine need not find it (it must still report nothing else)
    static: bool = True

    @property
    def expected(self) -> list[tuple[int, str]]:
        """(line, code) pairs marked with ``# expect:`` comments."""
        out = []
        for lineno, text in enumerate(self.source.splitlines(), start=1):
            match = _EXPECT.search(text)
            if match:
                out.extend((lineno, code.strip()) for code in match.group(1).split(","))
        return out


class Rule:
    """Base class: subclasses only set class attributes (and may refine ``fix``)."""

    code: ClassVar[str]
    name: ClassVar[str]
    severity: ClassVar[str] = "error"
    summary: ClassVar[str]
    #: ruff-style explanation sections (Markdown).
    what: ClassVar[str] = ""
    why: ClassVar[str] = ""
    example: ClassVar[str] = ""
    use_instead: ClassVar[str] = ""
    references: ClassVar[tuple[str, ...]] = ()
    #: The generic fix; the engine specialises it with the user's own names where it can.
    fix: ClassVar[str] = ""
    #: Fixes for particular shapes of the cause, chosen by the engine's ``variant`` field
    #: (e.g. GC114's integer *indices* vs an integer weight): variant -> (when, fix).
    fix_variants: ClassVar[dict[str, tuple[str, str]]] = {}
    #: One-line finding message; fields: {call} {op} {names} {variables} {count} {arg}
    #: {when} {dtype} {function} (missing ones render empty).
    message: ClassVar[str] = ""
    #: TensorFlow op types whose presence at the cut names this cause.
    op_types: ClassVar[frozenset[str]] = frozenset()
    #: Callee names users write for those ops (to find the call on a traced line).
    call_names: ClassVar[dict[str, tuple[str, ...]]] = {}
    #: The trace engine's check that reports this code, as ``module:function`` (registered in
    #: ``gradcheck.trace.record.registry``; a string, so that rules never import TensorFlow).
    trace_check: ClassVar[str] = ""
    #: Whether an engine reports this code yet (GC2xx/GC3xx are reserved vocabulary).
    implemented: ClassVar[bool] = True
    #: Stand-ins for the fix's placeholders on the rule's page (the engine uses real names).
    doc_fields: ClassVar[dict[str, str]] = {"arg": "x", "names": "x", "call": "the call"}
    invalid: ClassVar[tuple[Example, ...]] = ()
    valid: ClassVar[tuple[Example, ...]] = ()

    def render(self, template: str, **fields) -> str:
        """``template`` with ``fields``; the words that agree with the number of variables
        named (``{get}``, ``{reach}``, ``{them}`` ...) follow the ``count`` field."""
        return _FORMATTER.vformat(template, (), _Fields(grammar(fields.get("count", 2)), **fields))

    def format_message(self, **fields) -> str:
        return self.render(self.message, **fields)

    def fix_text(self, **fields) -> str:
        variant = self.fix_variants.get(fields.get("variant") or "")
        return self.render(variant[1] if variant else self.fix, **fields)

    def explanation(self) -> str:
        """The rule's page, in Markdown, as ``--explain`` prints it."""
        parts = [f"# {self.code} ({self.name})", "", f"{self.summary}", ""]
        parts += [f"Severity: {self.severity}.", ""]
        if not self.implemented:
            parts += ["This code is reserved vocabulary: no engine reports it yet.", ""]
        for title, body in (
            ("What it does", self.what),
            ("Why is this bad?", self.why),
        ):
            if body:
                parts += [f"## {title}", body.strip(), ""]
        if self.example:
            parts += ["## Example", "```python", self.example.strip("\n"), "```", ""]
        if self.use_instead:
            parts += ["## Use instead", "```python", self.use_instead.strip("\n"), "```", ""]
        if self.fix:
            parts += ["## Fix", self.fix_text(**self.doc_fields).strip(), ""]
            for variant, (when, _) in self.fix_variants.items():
                parts += [f"{when}: {self.fix_text(**self.doc_fields, variant=variant).strip()}", ""]
        if self.references:
            parts += ["## References"] + [f"- {ref}" for ref in self.references] + [""]
        return "\n".join(parts).rstrip() + "\n"


def grammar(count: int) -> dict[str, str]:
    """Words that agree with the number of variables a message names."""
    one = count == 1
    return {
        "get": "gets" if one else "get",
        "reach": "reaches" if one else "reach",
        "has": "has" if one else "have",
        "is": "is" if one else "are",
        "them": "it" if one else "them",
        "its": "its" if one else "their",
        "plain": "a plain tensor" if one else "plain tensors",
        "gradient": "gradient" if one else "gradients",
    }


class _Fields(dict):
    def __missing__(self, key: str) -> str:
        return ""


class _Formatter(string.Formatter):
    """``str.format`` that leaves ``{}`` inside code samples alone and missing fields empty."""

    def get_value(self, key, args, kwargs):
        return kwargs[key] if isinstance(key, str) else ""


_FORMATTER = _Formatter()
