"""The reference tables of the docs, generated from the code they describe.

- docs/cli.md's option table, from the click command (:func:`gradcheck.cli.main`: each
  option's ``doc`` text, see ``DocOption``);
- docs/configuration.md's key table, from the config schema (:data:`gradcheck.config.KEYS`).

Each table sits between ``<!-- generated: NAME ... -->`` and ``<!-- end generated: NAME -->``
lines; everything else in those pages is written by hand. Regenerate after changing an
option or a key::

    python -m gradcheck.docs_tables           # rewrite the tables
    python -m gradcheck.docs_tables --check   # exit 1 if a table is stale (tests/test_docs_tables.py)

Imports no TensorFlow.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import click

DOCS = Path(__file__).resolve().parent.parent / "docs"
HELP_DOC = "Show the help and exit."


def _begin(name: str) -> str:
    return f"<!-- generated: {name} by `python -m gradcheck.docs_tables`; edit the code, not this table -->"


def _end(name: str) -> str:
    return f"<!-- end generated: {name} -->"


def _cell(text: str) -> str:
    return text.replace("\n", " ").strip()


def _option_name(param: click.Option) -> str:
    name = getattr(param, "doc_name", None)
    if name:
        return name
    text = ", ".join(param.opts)
    if param.secondary_opts:
        text += " / " + ", ".join(param.secondary_opts)
    if not param.is_flag and param.metavar:
        text += f" {param.metavar}"
    return text


def options_table() -> str:
    """Every option of ``gradcheck``, in --help order, with its docs text."""
    from gradcheck.cli import main

    ctx = click.Context(main, info_name="gradcheck", **main.context_settings)
    help_option = main.get_help_option(ctx)
    rows = ["| option | meaning |", "| --- | --- |"]
    for param in main.get_params(ctx):
        if not isinstance(param, click.Option):
            continue
        doc = getattr(param, "doc", None)
        if doc is None and help_option is not None and param.opts == help_option.opts:
            doc = HELP_DOC
        if doc is None:
            raise ValueError(f"option {param.opts[0]} has no doc text (give it doc=... in gradcheck/cli.py)")
        rows.append(f"| `{_option_name(param)}` | {_cell(doc)} |")
    return "\n".join(rows)


def config_table() -> str:
    """Every key of ``[tool.gradcheck]``."""
    from gradcheck.config import KEYS

    rows = ["| key | type | default | option | meaning |", "| --- | --- | --- | --- | --- |"]
    for key in KEYS:
        option = f"`{key.option}`" if key.option else ""
        rows.append(f"| `{key.name}` | {key.kind} | {key.default} | {option} | {_cell(key.doc)} |")
    return "\n".join(rows)


#: page -> {table name: generator}
TABLES = {
    "cli.md": {"options": options_table},
    "configuration.md": {"keys": config_table},
}


def render(text: str, tables: dict) -> str:
    """``text`` with each generated table replaced by its current content."""
    for name, make in tables.items():
        pattern = re.compile(rf"^{re.escape(_begin(name))}\n.*?^{re.escape(_end(name))}$", re.M | re.S)
        if not pattern.search(text):
            raise ValueError(f"no generated {name!r} table (its begin/end markers) in the page")
        text = pattern.sub(lambda _m, name=name, make=make: f"{_begin(name)}\n{make()}\n{_end(name)}", text, count=1)
    return text


def stale(docs: Path = DOCS) -> list[str]:
    """The pages whose generated tables differ from what the code says."""
    out = []
    for page, tables in TABLES.items():
        text = (docs / page).read_text(encoding="utf-8")
        if render(text, tables) != text:
            out.append(page)
    return out


def write(docs: Path = DOCS) -> list[str]:
    """Regenerate every table; returns the pages that changed."""
    changed = []
    for page, tables in TABLES.items():
        path = docs / page
        text = path.read_text(encoding="utf-8")
        new = render(text, tables)
        if new != text:
            path.write_text(new, encoding="utf-8")
            changed.append(page)
    return changed


def _main(argv: list[str]) -> int:
    if argv == ["--check"]:
        pages = stale()
        for page in pages:
            print(f"docs/{page}: a generated table is stale; run python -m gradcheck.docs_tables", file=sys.stderr)
        return 1 if pages else 0
    if argv:
        print("usage: python -m gradcheck.docs_tables [--check]", file=sys.stderr)
        return 2
    for page in write():
        print(f"docs/{page} regenerated")
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
