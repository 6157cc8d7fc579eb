"""pytest plugin (entry point ``pytest11``), in the manner of pytest-mypy.

- a ``gradcheck`` fixture (``check_model``, ``check_step``, ``assert_flows``) that honours
  ``@pytest.mark.gradcheck(allow_none=[...], select=[...], ignore=[...])``;
- ``pytest --gradcheck [PATHS]`` collects training scripts as items (``[gradcheck] path``),
  runs each in its own child process with the project's timeout, fails with the CLI's
  text diagnosis (no traceback), and skips files unchanged since they last passed.

Installed means available, opt-in means cheap: importing this module imports no
TensorFlow, and nothing runs unless a test asks for the fixture or ``--gradcheck`` is given.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

from gradcheck._version import __version__

CACHE_KEY = "gradcheck/passed"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("gradcheck", "gradient-flow checks (gradcheck)")
    group.addoption(
        "--gradcheck",
        action="store_true",
        default=False,
        help="check training scripts for variables that get no gradient (one item per script)",
    )
    group.addoption(
        "--gradcheck-timeout",
        type=float,
        default=None,
        help="seconds per script (default: [tool.gradcheck] timeout, else 120)",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "gradcheck(allow_none=[], select=[], ignore=[], allow_zero=False, allow_nonfinite=False, "
        "check_custom_gradients=False): options for the gradcheck fixture in this test",
    )
    if config.getoption("gradcheck", default=False):
        config.pluginmanager.register(_ScriptCollector(config), "gradcheck-scripts")


# -- the fixture ----------------------------------------------------------------------------
class GradcheckFixture:
    """What the ``gradcheck`` fixture gives a test: the Python API with the test's marker
    options applied."""

    def __init__(
        self,
        allow_none: Iterable[str] = (),
        select: Iterable[str] = (),
        ignore: Iterable[str] = (),
        allow_zero: bool | Iterable[str] = False,
        allow_nonfinite: bool | Iterable[str] = False,
        check_custom_gradients: bool = False,
    ):
        self.allow_none = tuple(allow_none)
        self.select = tuple(select)
        self.ignore = tuple(ignore)
        self.allow_zero = allow_zero  # GC201: True, or glob patterns over variable paths
        self.allow_nonfinite = allow_nonfinite  # GC202: likewise
        self.check_custom_gradients = check_custom_gradients  # GC301 (opt-in)

    def _filter(self, report):
        from gradcheck.api import _allow

        _allow(report, "GC201", self.allow_zero)
        _allow(report, "GC202", self.allow_nonfinite)
        for result in report.files:
            result.findings = [
                f
                for f in result.findings
                if (not self.select or f.code.startswith(self.select)) and not f.code.startswith(self.ignore or ("-",))
            ]
        return report

    def check_model(self, model: Any, batch: Any):
        from gradcheck.api import check_model

        return self._filter(
            check_model(model, batch, allow_none=self.allow_none, check_custom_gradients=self.check_custom_gradients)
        )

    def check_step(self, fn: Any, *args: Any, **kwargs: Any):
        from gradcheck.api import check_step

        return self._filter(
            check_step(
                fn, *args, allow_none=self.allow_none, check_custom_gradients=self.check_custom_gradients, **kwargs
            )
        )

    def assert_flows(self, model_or_step: Any, batch: Any = None):
        """Fail with the full diagnosis unless every variable gets a gradient."""
        __tracebackhide__ = True  # the failure is the diagnosis, not this frame
        from gradcheck.report import GradientFlowError

        if hasattr(model_or_step, "train_step") and hasattr(model_or_step, "trainable_variables"):
            report = self.check_model(model_or_step, batch)
        else:
            args = () if batch is None else batch if isinstance(batch, tuple) else (batch,)
            report = self.check_step(model_or_step, *args)
        if not report.ok:
            raise GradientFlowError(report.to_text(color=False))
        return report


_MARKER_OPTIONS = frozenset(
    {"allow_none", "select", "ignore", "allow_zero", "allow_nonfinite", "check_custom_gradients"}
)


@pytest.fixture
def gradcheck(request: pytest.FixtureRequest) -> GradcheckFixture:
    """Check models and train steps for variables that get no gradient."""
    marker = request.node.get_closest_marker("gradcheck")
    options = dict(marker.kwargs) if marker else {}
    unknown = set(options) - _MARKER_OPTIONS
    if unknown:
        raise pytest.UsageError(f"@pytest.mark.gradcheck: unknown option(s) {sorted(unknown)}")
    return GradcheckFixture(**{k: v if isinstance(v, bool) else _as_list(v) for k, v in options.items()})


def _as_list(value: Any) -> list[str]:
    return [value] if isinstance(value, str) else list(value)


# -- pytest --gradcheck: scripts as items ----------------------------------------------------
class _ScriptCollector:
    def __init__(self, config: pytest.Config) -> None:
        from gradcheck import config as config_mod

        self.settings = config_mod.load(Path(str(config.rootpath)))
        timeout = config.getoption("gradcheck_timeout")
        self.timeout = timeout or self.settings.timeout
        cache = getattr(config, "cache", None)  # absent under `-p no:cacheprovider`
        self.passed: dict[str, str] = cache.get(CACHE_KEY, {}) if cache is not None else {}
        self.pytest_config = config

    def pytest_collect_file(self, file_path: Path, parent: pytest.Collector):
        from gradcheck.discover import is_training_script

        if file_path.suffix == ".py" and is_training_script(str(file_path), self.settings):
            return GradcheckFile.from_parent(parent, path=file_path, plugin=self)
        return None

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        cache = getattr(self.pytest_config, "cache", None)
        if cache is not None:
            cache.set(CACHE_KEY, self.passed)

    def fingerprint(self, path: Path) -> str:
        digest = hashlib.sha256(path.read_bytes())
        settings = self.settings
        digest.update(
            f"{__version__}|{self.timeout}|{settings.allow_none}|{settings.steps}|{settings.check_custom_gradients}".encode()
        )
        return digest.hexdigest()


class GradcheckFile(pytest.File):
    def __init__(self, *, plugin: _ScriptCollector, **kwargs):
        super().__init__(**kwargs)
        self.plugin = plugin

    def collect(self):
        yield GradcheckItem.from_parent(self, name="gradcheck", plugin=self.plugin)


class GradcheckFailure(Exception):
    """A script's findings (or why it could not be checked); the message is the CLI text."""


class GradcheckItem(pytest.Item):
    def __init__(self, *, plugin: _ScriptCollector, **kwargs):
        super().__init__(**kwargs)
        self.plugin = plugin
        self.add_marker("gradcheck")
        # no fixtures, but a ``funcargs`` as pytest's own items have: plugins whose
        # runtest hook wrappers read it (pytest-lsp 1.0) would break the run without it
        self.funcargs: dict = {}

    def runtest(self) -> None:
        from gradcheck.check import Options, run_child
        from gradcheck.report import Report

        key = str(self.path)
        fingerprint = self.plugin.fingerprint(self.path)
        if self.plugin.passed.get(key) == fingerprint:
            pytest.skip("gradcheck: unchanged since it last passed")
        options = Options(
            steps=self.plugin.settings.steps,
            timeout=self.plugin.timeout,
            allow_none=list(self.plugin.settings.allow_none),
            check_custom_gradients=self.plugin.settings.check_custom_gradients,
        )
        shown = _relative(self.path, Path(str(self.config.rootpath)))
        result = run_child(str(self.path), options, display=shown)
        self.plugin.settings.for_path(self.path).apply_selection(result)  # its own project's settings
        report = Report([result])
        if not report.ok:
            _attach_patches(report, self.plugin.settings, options, {shown: str(self.path)})
            raise GradcheckFailure(report.to_text(color=False))
        self.plugin.passed[key] = fingerprint

    def repr_failure(self, excinfo, style=None):
        if excinfo.errisinstance(GradcheckFailure):
            return str(excinfo.value)  # exactly what the CLI prints; no traceback
        return super().repr_failure(excinfo, style)

    def reportinfo(self):
        return self.path, None, f"[gradcheck] {_relative(self.path, Path(str(self.config.rootpath)))}"


def _attach_patches(report, settings, options, paths: dict[str, str]) -> None:
    """The failure shows a verified patch for each finding that has one, as
    ``gradcheck --diff`` does (docs/fixes.md); one more child run, on failure only."""
    try:
        from gradcheck.fix import plan_report
    except ImportError:  # libcst missing: the diagnosis alone
        return
    plan_report(report, settings, options, paths=paths)


def _relative(path: Path, root: Path) -> str:
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)
