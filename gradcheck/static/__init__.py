"""The static engine: reads training code with ``ast``, never runs it, never imports
TensorFlow, and reports the GC1xx causes it can see (GC101-GC107, GC109).

It follows data flow from model calls and variables to the target of ``tape.gradient``
(and of losses passed to ``compile``) and reports a non-differentiable call that cuts every
path from a model's output to the target; a value that also reaches the target through a
differentiable path is never reported. ``is_training_code`` is the pre-filter that picks
the files the trace engine runs.
"""

from __future__ import annotations

import ast
import contextlib
import gc
import os
import re
import tokenize
import warnings
from collections.abc import Callable

from gradcheck import sourcefile
from gradcheck.findings import CHECKED, ERROR, CheckError, FileResult, Finding
from gradcheck.static.prefilter import is_training_code
from gradcheck.static.program import BudgetExceeded

#: A file without any of these words (or ``fit`` as a word) asks for no gradient: no need
#: to parse it. Looked for one by one with ``in``: a regular expression's alternation
#: scans the text far more slowly than a substring search does.
_MAY_TRAIN_WORDS = ("gradient", "GradientTape", "compile", "minimize", "jacobian", "train_on_batch")
_FIT = re.compile(r"\bfit\b")


#: ``ast.parse`` as the checks call it: the tree of a source shown as a path, or why there is none.
Parser = Callable[[str, str], "ast.Module | str"]

#: How the static rules name a line in their messages and notes.
_LINE_WORD = re.compile(r"(?<![\w.])line (\d+)\b")


def may_train(source: str) -> bool:
    """Whether ``source`` mentions anything that asks for a gradient (a word test, no parse):
    files for which it is False are never analysed."""
    for word in _MAY_TRAIN_WORDS:
        if word in source:
            return True
    return "fit" in source and _FIT.search(source) is not None


def check_source(source: str, path: str = "<string>") -> list[Finding]:
    """Findings for ``source`` (shown as ``path``). Never executes it; never raises on
    code it cannot read or analyse (it then reports nothing)."""
    if not may_train(source):
        return []
    with _collector_paused():
        found = _parse_and_analyze(source, path)
    return found if isinstance(found, list) else []


def check_text(source: str, path: str, parse: Parser | None = None) -> list[Finding] | str:
    """Findings for ``source`` shown as ``path`` (an editor's unsaved buffer), or why it
    cannot be read (one line: a syntax error while the user types). Never executes it.
    ``parse`` stands in for ``ast.parse`` (the language server's, which reuses the tree of
    the buffer's previous text: ``incremental``); it must give the same tree or message."""
    with _collector_paused():
        return _parse_and_analyze(source, path, analyse=may_train(source), parse=parse or _parse)


def check_file(path: str, function: str | None = None) -> FileResult:
    """Check one file statically; problems reading or parsing it become a GC901 result, as
    does ``FILE::function`` naming a function the file does not define."""
    reason = sourcefile.problem(path)
    if reason is not None:  # a FIFO would block the read forever, /dev/zero would fill the memory
        return FileResult(path, ERROR, CheckError("GC901", reason))
    try:
        with tokenize.open(path) as fh:  # honours a BOM and a coding cookie, as Python does
            source = fh.read()
    except (SyntaxError, UnicodeDecodeError) as error:
        return FileResult(path, ERROR, CheckError("GC901", f"cannot decode the file: {error}"))
    except OSError as error:
        return FileResult(path, ERROR, CheckError("GC901", f"cannot read the file: {error.strerror or error}"))
    with _collector_paused():
        found = _parse_and_analyze(source, path, analyse=may_train(source), function=function)
    if isinstance(found, str):
        return FileResult(path, ERROR, CheckError("GC901", found))
    return FileResult(path, CHECKED, findings=found)


def check_notebook(path: str) -> FileResult:
    """Check a notebook's code cells statically, as one program run top to bottom (IPython
    lines neutralised, line numbers kept); findings point at ``nb.ipynb:cell N``, line in
    the cell, as the trace engine's do."""
    from gradcheck import notebook

    try:
        cells = notebook.read_cells(path)
    except notebook.NotebookError as error:
        return FileResult(path, ERROR, CheckError("GC901", str(error)))
    lines: list[str] = []
    where: list[tuple[int, int]] = []  # for each line of the joined source: (cell, line in it)
    for cell in cells:
        for number, line in enumerate(cell.code.split("\n"), start=1):
            lines.append(line)
            where.append((cell.index, number))
    source = "\n".join(lines) + "\n"

    def locate(line: int) -> tuple[str, int]:
        cell, in_cell = where[line - 1] if 0 < line <= len(where) else (where[-1] if where else (1, line))
        return notebook.cell_path(path, cell), in_cell

    def in_cells(text: str) -> str:  # "... at line 12" of the joined source -> "... at cell 3, line 4"
        def one(match: re.Match) -> str:
            line = int(match[1])
            return "cell {}, line {}".format(*where[line - 1]) if 0 < line <= len(where) else match[0]

        return _LINE_WORD.sub(one, text)

    with _collector_paused():
        found = _parse_and_analyze(source, path, analyse=may_train(source))
    if isinstance(found, str):
        match = re.search(r"\(line (\d+)\)$", found)
        if match:  # a syntax error: say which cell (as the trace engine's precheck does)
            found = found[: match.start()] + "({})".format(in_cells(f"line {match[1]}"))
        return FileResult(path, ERROR, CheckError("GC901", found))

    for finding in found:
        finding.path, finding.line = locate(finding.line)
        if finding.end_line is not None:
            finding.end_line = locate(finding.end_line)[1]
        finding.message, finding.fix = in_cells(finding.message), in_cells(finding.fix)
        finding.notes = [in_cells(note) for note in finding.notes]
    return FileResult(path, CHECKED, findings=found)


def _parse_and_analyze(
    source: str, path: str, analyse: bool = True, function: str | None = None, parse: Parser | None = None
) -> list[Finding] | str:
    """The findings, or why the file cannot be checked (one line). The tree and everything
    the analysis built are freed (by reference counting) when this returns, before the
    cyclic collector is enabled again: its first pass then finds little to walk."""
    tree = (parse or _parse)(source, path)
    if not isinstance(tree, ast.Module):
        return tree
    names = _module_names(tree) if function is not None else None
    if names is not None and function not in names:
        # as the trace engine says it (runner._run_function): nothing would be checked
        return f"{os.path.basename(path)} defines no function {function!r}"
    return _analyze(tree, source, path) if analyse else []


def _module_names(tree: ast.Module) -> set[str] | None:
    """The names the module binds at its top level (``def``, ``class``, assignments, imports,
    also inside ``if``/``try``/``with`` blocks); None when it cannot tell (``import *``)."""
    names: set[str] = set()
    stack: list[ast.AST] = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)  # its body is another scope
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            if any(alias.name == "*" for alias in node.names):
                return None
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif not isinstance(node, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            stack.extend(ast.iter_child_nodes(node))
    return names


@contextlib.contextmanager
def _collector_paused():
    """Parsing and the analysis allocate many small objects and drop them all at the end:
    the cyclic collector's passes over them cost more than they find (a file's tree and
    values are freed by reference counting; the few cycles, closures, wait for the next
    pass)."""
    paused = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if paused:
            gc.enable()


def _parse(source: str, path: str) -> ast.Module | str:
    """The tree, or why there is none."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SyntaxWarnings are the compiler's business, not ours
            return ast.parse(source, filename=path)
    except SyntaxError as error:
        return f"SyntaxError: {error.msg} (line {error.lineno})"
    except (ValueError, MemoryError, RecursionError) as error:
        return f"cannot parse the file: {type(error).__name__}: {error}"


def _analyze(tree: ast.Module, source: str, path: str) -> list[Finding] | str:
    from gradcheck.static.engine import analyze

    try:
        return analyze(tree, source, path)
    except BudgetExceeded:
        # too large to follow: not checked, and said so (never "No findings" of what was not read)
        return "the file is too large for the static analysis to follow; check it by running it (without --static)"
    except (RecursionError, MemoryError) as error:
        # nested deeper than the analysis can follow: not checked, and said so (never "no findings")
        return f"the file is nested too deeply for the static analysis ({type(error).__name__})"
    except Exception as error:
        # a bug of gradcheck's: this file is not checked (exit 2 for it, the others still are),
        # never reported clean
        if os.environ.get("GRADCHECK_STRICT"):
            raise
        return f"the static analysis stopped on an internal error of gradcheck's ({type(error).__name__}: {error})"


__all__ = ["check_file", "check_notebook", "check_source", "is_training_code", "may_train"]
