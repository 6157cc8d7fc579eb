"""``[tool.gradcheck]`` in the nearest ``pyproject.toml``.

The keys (kebab-case, as ruff) are :data:`KEYS`, which docs/configuration.md's table is
generated from (``python -m gradcheck.docs_tables``). An unknown key or a value of the wrong
type is a ``ConfigError`` with a one-line message; command-line options win over the file.
"""

from __future__ import annotations

import fnmatch
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

from gradcheck.findings import CHECKED, PARTIAL, FileResult

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

DEFAULT_TIMEOUT = 120.0
#: A partly checked file (a training entry point not reached): accepted only when ignored by name.
PARTIAL_CODE = "GC905"
DEFAULT_EXCLUDE = (".*", ".venv", "venv", "build", "dist", "__pycache__", "site-packages", "node_modules")


class ConfigError(Exception):
    """A bad ``[tool.gradcheck]`` table or option value."""


@dataclass
class Config:
    select: list[str] = field(default_factory=list)
    ignore: list[str] = field(default_factory=list)
    exclude: list[str] = field(default_factory=list)
    per_file_ignores: dict[str, list[str]] = field(default_factory=dict)
    allow_none: list[str] = field(default_factory=list)
    timeout: float = DEFAULT_TIMEOUT
    steps: int = 1
    scripts: list[str] = field(default_factory=list)
    check_custom_gradients: bool = False  # GC301's full comparison (a cheap one runs by default)
    path: Path | None = None  # the pyproject.toml it came from
    #: The command line's --select (replaces) and --ignore (adds to), applied as well to the
    #: settings of another project a checked file belongs to (``for_path``).
    cli_select: list[str] = field(default_factory=list)
    cli_ignore: list[str] = field(default_factory=list)
    _projects: dict = field(default_factory=dict, repr=False, compare=False)

    def with_command_line(self, select: list[str], ignore: list[str]) -> Config:
        """These settings with the command line's ``--select`` and ``--ignore`` on top."""
        self.cli_select, self.cli_ignore = list(select), list(ignore)
        if select:
            self.select = list(select)
        self.ignore = [*self.ignore, *ignore]
        return self

    def for_path(self, path: str | Path) -> Config:
        """The settings of a checked file: those of the nearest ``pyproject.toml`` above it
        with a ``[tool.gradcheck]`` table (as ruff finds its settings), with the command line
        on top; these (the working directory's) when there is none, or it is this one."""
        try:
            directory = Path(path).resolve().parent
            found = self._projects.get(directory, ...)
            if found is ...:
                pyproject = find_pyproject(directory)
                found = None if pyproject is None or pyproject == self.path else pyproject
                self._projects[directory] = found
        except (OSError, RuntimeError):  # a symlink loop, a name too long: the caller says why it is skipped
            return self
        if found is None:
            return self
        project = self._projects.get(found)
        if project is None:
            project = self._projects[found] = load(found.parent).with_command_line(self.cli_select, self.cli_ignore)
        return project

    @property
    def root(self) -> Path:
        return self.path.parent if self.path else Path.cwd()

    def code_selected(self, code: str, filename: str | None = None) -> bool:
        """ruff-style selection by code prefix; GC9xx (could not check) is never filtered,
        except that GC905 (checked in part) may be accepted by naming it in full."""
        ignored = list(self.ignore)
        if filename is not None:
            rel = self.relative(filename)
            for pattern, codes in self.per_file_ignores.items():
                if fnmatch.fnmatch(rel, pattern) or fnmatch.fnmatch(os.path.basename(rel), pattern):
                    ignored += codes
        if code.startswith("GC9"):
            return code != PARTIAL_CODE or PARTIAL_CODE not in ignored
        if self.select and not any(code.startswith(p) for p in self.select):
            return False
        return not any(code.startswith(p) for p in ignored)

    def apply_selection(self, result: FileResult) -> None:
        """Keep the result's findings whose codes are selected; a partial check is accepted
        (counted as checked) when GC905 is ignored by name."""
        result.findings = [f for f in result.findings if self.code_selected(f.code, f.path)]
        if result.status == PARTIAL and not self.code_selected(PARTIAL_CODE, result.path):
            result.status = CHECKED

    def relative(self, filename: str) -> str:
        try:
            return Path(filename).resolve().relative_to(self.root.resolve()).as_posix()
        except ValueError:
            return Path(filename).as_posix()

    def is_excluded(self, path: Path) -> bool:
        name = path.name
        rel = self.relative(str(path))
        for pattern in (*DEFAULT_EXCLUDE, *self.exclude):
            if fnmatch.fnmatch(name, pattern) or fnmatch.fnmatch(rel, pattern) or fnmatch.fnmatch(rel, f"{pattern}/*"):
                return True
        return False


@dataclass(frozen=True)
class Key:
    """One key of ``[tool.gradcheck]``: its TOML type, default, command-line option and meaning."""

    name: str
    kind: str  # "list of strings", "table", "number", "integer", "boolean"
    default: str
    option: str | None
    doc: str


KEYS = (
    Key(
        "select",
        "list of strings",
        "`[]` (every code)",
        "--select",
        'Report only these codes or code prefixes, like ruff (`"GC1"` is every GC1xx code).',
    ),
    Key(
        "ignore", "list of strings", "`[]`", "--ignore", "Never report these codes or prefixes; `--ignore` adds to it."
    ),
    Key(
        "exclude",
        "list of strings",
        "`[]`",
        None,
        "Globs skipped when walking directories, besides "
        + ", ".join(f"`{pattern}`" for pattern in DEFAULT_EXCLUDE)
        + ".",
    ),
    Key(
        "per-file-ignores",
        "table",
        "`{}`",
        None,
        'Glob pattern (over the path relative to the `pyproject.toml`, or the file name) to codes ignored in those files, e.g. `{ "experiments/*.py" = ["GC109"] }`.',
    ),
    Key(
        "allow-none",
        "list of strings",
        "`[]`",
        "--allow-none",
        "Globs over variable paths allowed to get no gradient (a GAN's frozen `discriminator/*`); `--allow-none` adds to it.",
    ),
    Key("timeout", "number", f"`{DEFAULT_TIMEOUT:g}`", "--timeout", "Seconds per script."),
    Key("steps", "integer", "`1`", "--steps", "Training steps checked before a script is stopped."),
    Key(
        "scripts",
        "list of strings",
        "`[]`",
        None,
        "Globs naming the training scripts under a directory. Without it, a file found by walking a directory is traced when it reads as training code (it opens a `GradientTape`, defines `train_step` or calls `.fit(`). Files named on the command line are always checked (unless `--training-only`).",
    ),
    Key(
        "check-custom-gradients",
        "boolean",
        "`false`",
        "--check-custom-gradients",
        "GC301: the full finite-difference comparison of every `tf.custom_gradient` call (a cheap one runs by "
        "default).",
    ),
)

_LIST_KEYS = {key.name for key in KEYS if key.kind == "list of strings"}
_KNOWN = {key.name for key in KEYS}


def find_pyproject(start: Path) -> Path | None:
    """The nearest ``pyproject.toml`` at or above ``start`` that has a ``[tool.gradcheck]``
    table (one without it is another tool's: ruff skips such files the same way)."""
    start = start.resolve()
    for directory in (start, *start.parents) if start.is_dir() else (start.parent, *start.parent.parents):
        candidate = directory / "pyproject.toml"
        if candidate.is_file() and _has_table(candidate):
            return candidate
    return None


def _has_table(pyproject: Path) -> bool:
    """Whether the file has a ``[tool.gradcheck]`` table; a file that cannot be read counts
    as having one (``load`` then says why it cannot be read)."""
    try:
        text = pyproject.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return True
    if "gradcheck" not in text:
        return False
    try:
        return "gradcheck" in tomllib.loads(text).get("tool", {})
    except tomllib.TOMLDecodeError:
        return True


def load(start: Path | None = None) -> Config:
    """The configuration for files under ``start`` (default: the working directory)."""
    path = find_pyproject(start or Path.cwd())
    if path is None:
        return Config()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise ConfigError(f"{path}: cannot read: {error}") from None
    table = data.get("tool", {}).get("gradcheck", {})
    return from_table(table, path)


def from_table(table: dict, path: Path | None = None) -> Config:
    where = f"{path}: [tool.gradcheck]" if path else "[tool.gradcheck]"
    if not isinstance(table, dict):
        raise ConfigError(f"{where} must be a table")
    unknown = sorted(set(table) - _KNOWN)
    if unknown:
        raise ConfigError(f"{where}: unknown key {unknown[0]!r} (known: {', '.join(sorted(_KNOWN))})")
    config = Config(path=path)
    for key in _LIST_KEYS & set(table):
        value = table[key]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ConfigError(f"{where}: {key} must be a list of strings")
        setattr(config, key.replace("-", "_"), list(value))
    if "per-file-ignores" in table:
        value = table["per-file-ignores"]
        if not isinstance(value, dict) or not all(
            isinstance(v, list) and all(isinstance(c, str) for c in v) for v in value.values()
        ):
            raise ConfigError(f"{where}: per-file-ignores must map glob patterns to lists of codes")
        config.per_file_ignores = {k: list(v) for k, v in value.items()}
    if "timeout" in table:
        value = table["timeout"]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
            raise ConfigError(f"{where}: timeout must be a positive number of seconds")
        config.timeout = float(value)
    if "check-custom-gradients" in table:
        if not isinstance(table["check-custom-gradients"], bool):
            raise ConfigError(f"{where}: check-custom-gradients must be true or false")
        config.check_custom_gradients = table["check-custom-gradients"]
    if "steps" in table:
        value = table["steps"]
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ConfigError(f"{where}: steps must be a positive integer")
        config.steps = value
    for code in (*config.select, *config.ignore, *(c for v in config.per_file_ignores.values() for c in v)):
        validate_code_prefix(code, where)
    return config


def validate_code_prefix(prefix: str, where: str = "option") -> None:
    from gradcheck.rules import RULES

    if not prefix.startswith("GC") or not any(code.startswith(prefix) for code in RULES):
        raise ConfigError(f"{where}: {prefix!r} matches no rule code (see `gradcheck --list-rules`)")
