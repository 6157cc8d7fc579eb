"""Where gradcheck's links point, derived from one place: ``[project.urls]`` in ``pyproject.toml``.

gradcheck has no published home yet, so that table is empty and no link points at a web page
that does not exist. When one is published, its ``Homepage`` becomes SARIF's
``informationUri`` and its ``Documentation`` (the URL of the ``docs/`` folder) gives each
rule's page, ``{Documentation}/rules/GC101.md``: the JSON ``url``, SARIF's ``helpUri`` and the
``See ...`` line of GitHub annotations. Until then a finding's JSON ``url`` is the rule's page
in the installed docs (a ``file://`` URI, for a clone or an editable install; absent when the
docs are not installed), SARIF leaves ``helpUri`` out (its ``help`` holds the whole page), and
annotations say ``See `gradcheck --explain GC101```, which works anywhere gradcheck runs.
"""

from __future__ import annotations

from functools import lru_cache
from importlib import metadata
from pathlib import Path

#: The docs of a clone or an editable install (``docs/rules/GC101.md`` ...).
DOCS_DIR = Path(__file__).resolve().parent.parent / "docs"


@lru_cache(maxsize=1)
def project_urls() -> dict[str, str]:
    """``[project.urls]`` as installed (the ``Project-URL`` metadata), labels lower-cased."""
    try:
        entries = metadata.metadata("gradcheck").get_all("Project-URL") or []
    except metadata.PackageNotFoundError:
        return {}
    urls = {}
    for entry in entries:
        label, _, url = entry.partition(",")
        if url.strip():
            urls[label.strip().lower()] = url.strip()
    return urls


def home() -> str | None:
    """The project's published home page, if it has one."""
    urls = project_urls()
    return urls.get("homepage") or urls.get("source") or urls.get("repository")


def published_rule_url(code: str) -> str | None:
    """The rule's page under the published documentation, if there is one."""
    docs = project_urls().get("documentation")
    return f"{docs.rstrip('/')}/rules/{code}.md" if docs else None


def rule_url(code: str) -> str | None:
    """The rule's page: published, else in the installed docs (``file://``), else None."""
    published = published_rule_url(code)
    if published:
        return published
    local = DOCS_DIR / "rules" / f"{code}.md"
    return local.as_uri() if local.is_file() else None


def explain_hint(code: str) -> str:
    """What always works, online or not."""
    return f"`gradcheck --explain {code}`"
