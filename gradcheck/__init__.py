"""gradcheck: why does my TensorFlow / Keras model get no gradients?

Importing ``gradcheck`` does not import TensorFlow; the trace engine imports it when a
check starts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gradcheck._version import __version__
from gradcheck.findings import CheckError, FileResult, Finding
from gradcheck.report import GradientFlowError, Report

if TYPE_CHECKING:
    from gradcheck.api import (  # noqa: F401
        TensorFlowMissingError,
        assert_gradients_flow,
        check_model,
        check_step,
        install,
        uninstall,
        watch,
    )

_API = (
    "TensorFlowMissingError",
    "assert_gradients_flow",
    "check_model",
    "check_step",
    "install",
    "uninstall",
    "watch",
)


def load_ipython_extension(shell) -> None:
    """``%load_ext gradcheck`` in IPython / Jupyter (see ``gradcheck.ipython``)."""
    from gradcheck.ipython import load_ipython_extension as load

    load(shell)


def unload_ipython_extension(shell) -> None:
    from gradcheck.ipython import unload_ipython_extension as unload

    unload(shell)


def __getattr__(name: str):
    if name in _API:
        from gradcheck import api

        return getattr(api, name)
    raise AttributeError(f"module 'gradcheck' has no attribute {name!r}")


__all__ = [
    "CheckError",
    "FileResult",
    "Finding",
    "GradientFlowError",
    "Report",
    "__version__",
    *_API,
]
