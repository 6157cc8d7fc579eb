"""Jupyter notebooks (``.ipynb``) as checkable files: ``gradcheck notebook.ipynb``.

The code cells run in order in one namespace (``__name__ == "__main__"``), in the child
process like a script, with the notebook's directory as the working directory (as Jupyter
and ``nbconvert --execute`` run it). IPython syntax is neutralised line by line, so line
numbers never move: a line magic or shell escape (``%matplotlib inline``, ``!pip install``)
becomes ``pass``, except ``%time``/``%timeit``/``%prun`` whose statement runs as written;
a cell magic other than ``%%time``/``%%timeit``/``%%capture`` skips its cell.

Where findings point: cell ``N`` is the notebook's ``N``-th cell, counting every cell
(Markdown and raw cells too) from 1, as its position in the file; the line is the line
within that cell. A finding's path is ``notebook.ipynb:cell N``, so the text output reads
``notebook.ipynb:cell 3:2:8: GC101 ...`` (ruff's form for notebooks), and the JSON, SARIF
and GitHub formats carry that path and the in-cell line (SARIF adds the line in the
``.ipynb`` file itself, see ``raw_line``).

Nothing here imports TensorFlow; ``nbformat`` is used when installed (it validates and
upgrades old notebook formats), plain JSON otherwise.
"""

from __future__ import annotations

import json
import linecache
import os
import re
import warnings
from dataclasses import dataclass

SUFFIX = ".ipynb"
_CELL = re.compile(r"^(?P<path>.+\.ipynb):cell (?P<cell>\d+)$")
#: Line magics whose argument is a statement to run (``%time model.fit(x, y)``).
_RUN_MAGICS = ("time", "timeit", "prun")
#: Cell magics whose body is Python to run.
_RUN_CELL_MAGICS = ("time", "timeit", "capture", "prun")


class NotebookError(Exception):
    """The file is not a readable notebook."""


@dataclass(frozen=True)
class Cell:
    index: int  # 1-based position among all cells
    source: str  # as written
    code: str  # runnable Python, line for line the same as ``source``


def is_notebook(path: str) -> bool:
    return path.lower().endswith(SUFFIX)


def cell_path(path: str, index: int) -> str:
    """``nb.ipynb:cell 3``: how findings in cell 3 name their file."""
    return f"{path}:cell {index}"


def split_cell_path(path: str) -> tuple[str, int] | None:
    """``nb.ipynb:cell 3`` -> (``nb.ipynb``, 3); None for any other path."""
    match = _CELL.match(path)
    return (match["path"], int(match["cell"])) if match else None


def _read_json(path: str) -> dict:
    from gradcheck import sourcefile

    reason = sourcefile.problem(path, sourcefile.MAX_NOTEBOOK_BYTES)
    if reason is not None:  # a FIFO would block the read forever, /dev/zero would fill the memory
        raise NotebookError(reason)
    try:
        import nbformat
    except ImportError:
        nbformat = None
    try:
        if nbformat is not None:
            return _read_with_nbformat(nbformat, path)
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except OSError as error:
        raise NotebookError(f"cannot read the notebook: {error.strerror or error}") from error
    except (ValueError, UnicodeDecodeError) as error:
        raise NotebookError(f"not a readable notebook (invalid JSON: {error})") from error
    except Exception as error:  # nbformat's own errors (unknown version, bad schema)
        # A cell without its "metadata" or "outputs" key fails nbformat's schema, but its
        # code is all that is run or read here: take the cells when the JSON has them.
        data = _cells_anyway(path)
        if data is None:
            raise NotebookError(f"not a readable notebook ({type(error).__name__}: {error})") from error
        return data


#: Notebooks whose nbformat warnings were shown already: a notebook is read more than once
#: (the pre-check, then the static engine or the run), and each warning is worth one line.
_WARNED: set[str] = set()


def _read_with_nbformat(nbformat, path: str) -> dict:
    """``nbformat.read``, its warnings (``MissingIDFieldWarning`` ...) shown once per notebook."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with open(path, encoding="utf-8") as fh:
            data = nbformat.read(fh, as_version=4)
    key = os.path.abspath(path)
    if key not in _WARNED:
        _WARNED.add(key)
        seen = set()
        for warning in caught:
            if (warning.category, str(warning.message)) not in seen:
                seen.add((warning.category, str(warning.message)))
                warnings.warn_explicit(warning.message, warning.category, warning.filename, warning.lineno)
    return data


def _cells_anyway(path: str) -> dict | None:
    """The notebook as plain JSON, when it is nbformat 4's shape (a list of cells)."""
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    if isinstance(data, dict) and data.get("nbformat") == 4 and isinstance(data.get("cells"), list):
        return data
    return None


def read_cells(path: str) -> list[Cell]:
    """The notebook's code cells, in order."""
    data = _read_json(path)
    cells = data.get("cells") if isinstance(data, dict) else None
    if not isinstance(cells, list):
        raise NotebookError("not a readable notebook (no list of cells; nbformat 4 is needed)")
    out = []
    for index, cell in enumerate(cells, start=1):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        if isinstance(source, list) and all(isinstance(line, str) for line in source):
            source = "".join(source)
        if not isinstance(source, str):
            raise NotebookError(
                f"not a readable notebook (cell {index}: its source is {type(source).__name__}, not text)"
            )
        out.append(Cell(index, source, to_python(source)))
    return out


def to_python(source: str) -> str:
    """The cell as plain Python with the same lines: IPython-only syntax made harmless."""
    lines = source.split("\n")
    first = lines[0].lstrip() if lines else ""
    if first.startswith("%%"):
        name = first[2:].split(None, 1)[0] if first[2:].strip() else ""
        if name not in _RUN_CELL_MAGICS:
            return "\n".join("" for _ in lines)  # %%bash, %%writefile ...: not Python
        lines = ["", *lines[1:]]
    out = []
    for line in lines:
        stripped = line.lstrip()
        indent = line[: len(line) - len(stripped)]
        if stripped.startswith(("%", "!")) and not stripped.startswith("%%"):
            magic, _, rest = stripped[1:].partition(" ")
            if stripped.startswith("%") and magic in _RUN_MAGICS and rest.strip():
                out.append(indent + rest.lstrip())
            else:
                out.append(indent + "pass")
        elif stripped.endswith("?") and stripped.rstrip("?").replace(".", "").isidentifier():
            out.append(indent + "pass")  # help: `model.fit?`
        else:
            out.append(line)
    return "\n".join(out)


def register(filename: str, text: str) -> None:
    """Make ``text`` what ``linecache`` (and so ``inspect``, autograph and the code frames)
    sees for ``filename``, as IPython does for its cells."""
    if not text.endswith("\n"):
        text += "\n"
    linecache.cache[filename] = (len(text), None, text.splitlines(keepends=True), filename)


def register_cells(path: str, shown: str | None = None) -> list[Cell]:
    """Register every code cell's source under ``shown:cell N`` (the display path, for the
    code frames the parent prints). Returns the cells; [] when the notebook is unreadable."""
    try:
        cells = read_cells(path)
    except NotebookError:
        return []
    for cell in cells:
        register(cell_path(shown or path, cell.index), cell.source)
    return cells


def raw_line(path: str, cell: int, line: int) -> int | None:
    """The line of the ``.ipynb`` file that holds line ``line`` of cell ``cell``, when the
    file is laid out as Jupyter writes it (one source line per JSON line); else None."""
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
        data = json.loads(text)
    except (OSError, ValueError):
        return None
    cells = data.get("cells") if isinstance(data, dict) else None
    if not isinstance(cells, list) or not 1 <= cell <= len(cells):
        return None
    source = cells[cell - 1].get("source", "") if isinstance(cells[cell - 1], dict) else None
    if not isinstance(source, (list, str)):
        return None
    lines = source if isinstance(source, list) else source.splitlines(keepends=True)
    if not 1 <= line <= len(lines):
        return None
    raw = text.split("\n")
    # the cell's "source" key: the cell-th one among the cells' keys, in file order
    starts = [i for i, text_line in enumerate(raw) if text_line.lstrip().startswith('"source": [')]
    if len(starts) != len(cells):
        return None
    number = starts[cell - 1] + line  # 0-based index of the wanted JSON line
    if number >= len(raw):
        return None
    try:
        value = json.loads(raw[number].strip().rstrip(","))
    except ValueError:
        return None
    return number + 1 if value == lines[line - 1] else None


def run_cells(path: str, namespace: dict) -> None:
    """Run the notebook's code cells in ``namespace``, each compiled under the file name
    ``/abs/path/nb.ipynb:cell N`` and registered in ``linecache``."""
    abspath = os.path.abspath(path)
    for cell in read_cells(path):
        if not cell.code.strip():
            continue
        filename = cell_path(abspath, cell.index)
        register(filename, cell.code)
        exec(compile(cell.code, filename, "exec", dont_inherit=True), namespace)


def precheck(path: str) -> tuple[str, str] | None:
    """Why a notebook cannot run at all, as (code, reason), or None."""
    try:
        cells = read_cells(path)
    except NotebookError as error:
        return "GC901", str(error)
    if not any(cell.code.strip() for cell in cells):
        return "GC902", "the notebook has no code: nothing computes a gradient"
    import warnings

    for cell in cells:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                compile(cell.code, cell_path(path, cell.index), "exec", dont_inherit=True)
        except SyntaxError as error:
            return "GC901", f"SyntaxError: {error.msg} (cell {cell.index}, line {error.lineno})"
        except ValueError as error:
            return "GC901", f"cannot compile cell {cell.index}: {error}"
        except (RecursionError, MemoryError) as error:  # nested too deep for the compiler
            return "GC901", f"Python cannot compile cell {cell.index}: {type(error).__name__}: {error}"
    return None
