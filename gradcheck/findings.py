"""The data every engine produces: findings and the per-file results that hold them.

Plain dataclasses with no TensorFlow import, so the CLI parent process, the static engine
and the renderers share them. ``to_json``/``from_json`` implement the JSON report contract
(design §4, version 1); the child process that ran a script sends its result with them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gradcheck.trainings import EntryPoint


@dataclass(frozen=True)
class ChainLink:
    """One op on the path from a starved variable to the loss."""

    op: str
    line: int | None = None
    cut: bool = False
    path: str | None = None  # the op's file, when it is not the finding's

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"op": self.op, "line": self.line}
        if self.cut:
            data["cut"] = True
        if self.path:
            data["path"] = self.path
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ChainLink:
        return cls(op=data["op"], line=data.get("line"), cut=bool(data.get("cut", False)), path=data.get("path"))


@dataclass
class Finding:
    """One diagnosis: a culprit in the user's source and every variable it starves."""

    code: str
    message: str
    path: str
    line: int
    column: int = 1
    end_line: int | None = None
    end_column: int | None = None
    op: str | None = None
    call: str | None = None
    variables: list[str] = field(default_factory=list)
    chain: list[ChainLink] = field(default_factory=list)
    chain_source: str | None = None  # the variable the chain starts from
    fix: str = ""
    notes: list[str] = field(default_factory=list)
    #: The subgraph from the starved variables through the cut to the loss, when asked for
    #: (``--graph``): {"nodes": [{"id", "label", "kind", "line", "path", "cut"}], "edges": [[a, b]]}.
    graph: dict | None = None
    #: The rule template's fields the engine filled in (``arg``, ``fn``, ``variant``, ``method``
    #: ...): what the message and fix were rendered from, and what a patch is computed from.
    #: They travel from the checker process to the CLI; the JSON report leaves them out.
    fields: dict[str, Any] = field(default_factory=dict)
    #: A suggested patch (``--diff``/``--fix``), verified or not; None when none was asked for.
    patch: Patch | None = None

    @property
    def _fields(self) -> dict[str, Any]:  # the name the trace engine sets them by
        return self.fields

    @_fields.setter
    def _fields(self, value: dict[str, Any]) -> None:
        self.fields = dict(value)

    @property
    def rule(self):  # -> gradcheck.rules.Rule (imported lazily: rules import this module)
        from gradcheck.rules import get_rule

        return get_rule(self.code)

    @property
    def name(self) -> str:
        return self.rule.name

    @property
    def severity(self) -> str:
        return self.rule.severity

    @property
    def url(self) -> str | None:
        """The rule's page (see ``gradcheck.links``); None when there is none to point at."""
        from gradcheck.links import rule_url

        return rule_url(self.code)

    def identity(self) -> tuple:
        """What makes two findings the same diagnosis (a retrace repeats them)."""
        return (self.code, self.path, self.line, self.column, tuple(self.variables))

    def sort_key(self) -> tuple:
        return (self.path, self.line, self.column, self.code, tuple(self.variables))

    def to_json(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "name": self.name,
            "severity": self.severity,
            "message": self.message,
            "path": self.path,
            "line": self.line,
            "column": self.column,
            "end_line": self.end_line,
            "end_column": self.end_column,
            "op": self.op,
            "call": self.call,
            "variables": list(self.variables),
            "chain": [link.to_json() for link in self.chain],
            "chain_source": self.chain_source,
            "fix": self.fix,
            "notes": list(self.notes),
        } | (
            ({"url": self.url} if self.url is not None else {})
            | ({"graph": self.graph} if self.graph is not None else {})
            | ({"fields": _plain(self.fields)} if self.fields else {})
            | ({"patch": self.patch.to_json()} if self.patch is not None else {})
        )

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Finding:
        return cls(
            code=data["code"],
            message=data["message"],
            path=data["path"],
            line=data["line"],
            column=data.get("column") or 1,
            end_line=data.get("end_line"),
            end_column=data.get("end_column"),
            op=data.get("op"),
            call=data.get("call"),
            variables=list(data.get("variables", [])),
            chain=[ChainLink.from_json(c) for c in data.get("chain", [])],
            chain_source=data.get("chain_source"),
            fix=data.get("fix", ""),
            notes=list(data.get("notes", [])),
            graph=data.get("graph"),
            fields=dict(data.get("fields") or {}),
            patch=Patch.from_json(data["patch"]) if data.get("patch") else None,
        )


@dataclass
class Patch:
    """A suggested edit of the user's file that removes a finding (``gradcheck --diff``).

    ``diff`` is a unified diff against the file as checked; it is empty unless ``verified``:
    the patched copy was checked again, this finding was gone and nothing new appeared.
    ``note`` says how it was verified, or why no patch is shown."""

    diff: str = ""
    verified: bool = False
    note: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"diff": self.diff, "verified": self.verified, "note": self.note}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Patch:
        return cls(diff=data.get("diff", ""), verified=bool(data.get("verified", False)), note=data.get("note", ""))


def _plain(fields: dict[str, Any]) -> dict[str, Any]:
    """Template fields as JSON values (they are strings, numbers or None)."""
    return {k: v if v is None or isinstance(v, (str, int, float, bool)) else str(v) for k, v in fields.items()}


@dataclass
class CheckError:
    """Why a file could not be checked (a GC9xx code and a one-line reason)."""

    code: str
    message: str

    def to_json(self) -> dict[str, str]:
        return {"code": self.code, "message": self.message}

    @classmethod
    def from_json(cls, data: dict[str, str]) -> CheckError:
        return cls(code=data["code"], message=data["message"])


@dataclass
class KeptOut:
    """A write or deletion outside the check's throwaway places that the check kept off the
    user's disk: ``path:line`` is the user's call (``call`` its text), ``target`` the file it
    meant, ``action`` what did not happen to it (written, deleted, moved, created) or
    ``refused`` (the script got a PermissionError). ``ended``: that refusal made the script
    fail, and the check ended there."""

    path: str
    line: int
    call: str
    target: str
    action: str
    refused: bool = False
    ended: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "line": self.line,
            "call": self.call,
            "target": self.target,
            "action": self.action,
            "ended": self.ended,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> KeptOut:
        return cls(
            path=data.get("path", ""),
            line=data.get("line", 0),
            call=data.get("call", ""),
            target=data["target"],
            action=data["action"],
            refused=data["action"] == "refused",
            ended=bool(data.get("ended", False)),
        )


#: FileResult.status values. PARTIAL: checked, but a training entry point of the file was
#: never reached (GC905), so "no findings" would say more than was checked.
CHECKED, ERROR, TIMEOUT, SKIPPED, PARTIAL = "checked", "error", "timeout", "skipped", "partial"


@dataclass
class FileResult:
    """What checking one file produced."""

    path: str
    status: str = CHECKED
    error: CheckError | None = None
    steps_checked: int = 0
    findings: list[Finding] = field(default_factory=list)
    #: the file's training entry points (``gradcheck.trainings``; 0: not known) and those the
    #: run never reached, with why it ended before them
    trainings: int = 0
    not_reached: list[EntryPoint] = field(default_factory=list)
    ended: str | None = None

    @property
    def notice(self) -> CheckError | None:
        """What the output says of the file besides its findings: why it could not be
        checked, or (GC905) which of its trainings were not reached."""
        if self.error is not None:
            return self.error
        if self.status != PARTIAL or not self.not_reached:
            return None
        shown = ", ".join(entry.label(self.path) for entry in self.not_reached[:5])
        more = len(self.not_reached) - 5
        if more > 0:
            shown += f" and {more} more"
        reached = self.trainings - len(self.not_reached)
        message = f"checked {reached} of {self.trainings} training entry points; not reached: {shown}"
        if self.ended:
            message += f" ({self.ended})"
        return CheckError("GC905", message)

    #: what the script tried to write or delete outside the throwaway places (not done)
    kept_out: list[KeptOut] = field(default_factory=list)
    #: more such calls than ``kept_out`` lists
    kept_out_more: int = 0

    def to_json(self) -> dict[str, Any]:
        data = {
            "path": self.path,
            "status": self.status,
            "error": self.error.to_json() if self.error else None,
            "steps_checked": self.steps_checked,
            "findings": [f.to_json() for f in sorted(self.findings, key=Finding.sort_key)],
        }
        if self.trainings:
            data["trainings"] = {
                "entry_points": self.trainings,
                "not_reached": [entry.to_json() for entry in self.not_reached],
                "ended": self.ended,
            }
        if self.kept_out or self.kept_out_more:  # additive: absent when nothing was kept out
            data["kept_out"] = [k.to_json() for k in self.kept_out]
            data["kept_out_more"] = self.kept_out_more
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> FileResult:
        error = data.get("error")
        return cls(
            path=data["path"],
            status=data.get("status", CHECKED),
            error=CheckError.from_json(error) if error else None,
            steps_checked=data.get("steps_checked", 0),
            findings=[Finding.from_json(f) for f in data.get("findings", [])],
            trainings=(data.get("trainings") or {}).get("entry_points", 0),
            not_reached=[EntryPoint.from_json(e) for e in (data.get("trainings") or {}).get("not_reached", [])],
            ended=(data.get("trainings") or {}).get("ended"),
            kept_out=[KeptOut.from_json(k) for k in data.get("kept_out", [])],
            kept_out_more=data.get("kept_out_more", 0),
        )
