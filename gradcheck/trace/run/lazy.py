"""Install the tracer at the user's own first ``import tensorflow``, not before the script runs.

A script may configure TensorFlow for itself before importing it: ``os.environ[
"TF_USE_LEGACY_KERAS"] = "1"`` (``tf.keras`` is tf_keras), ``KERAS_BACKEND``,
``CUDA_VISIBLE_DEVICES``, ``TF_*``. TensorFlow reads them once, when it is imported, so
importing it before the script (to install the hooks) would run a different program from
the one ``python script.py`` runs. Instead a ``sys.meta_path`` finder watches the imports
that bring TensorFlow in (``tensorflow``, ``keras``, ``tf_keras``) and, when the outermost of
them has finished executing, calls ``on_ready`` (which installs the hooks). The module, its
spec and its loader are TensorFlow's own: the finder only wraps ``exec_module`` for that one
import and puts the loader back afterwards.

A later first import of ``tf_keras`` (``import tensorflow`` then ``import tf_keras``) calls
``on_ready`` again, so tf_keras's optimizers get their hooks as if it had been there first.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
from collections.abc import Callable
from types import ModuleType

#: The imports that can bring TensorFlow in, or (tf_keras) add classes to hook.
WATCHED = ("tensorflow", "keras", "tf_keras")


class TensorFlowImportHook(importlib.abc.MetaPathFinder):
    """A meta-path finder that calls ``on_ready(name)`` after the outermost import of one of
    ``WATCHED`` has executed, once TensorFlow is in ``sys.modules``. An import of TensorFlow
    that raises is kept in ``failed`` (gradcheck reports it as GC904) and re-raised."""

    def __init__(self, on_ready: Callable[[str], None]) -> None:
        self.on_ready = on_ready
        self.failed: BaseException | None = None
        self._depth = 0
        self._searching: set[str] = set()
        self._paused = 0

    # importlib's protocol
    def find_spec(self, fullname: str, path=None, target: ModuleType | None = None):
        if fullname not in WATCHED or fullname in self._searching or self._paused or fullname in sys.modules:
            return None
        self._searching.add(fullname)
        try:
            spec = importlib.machinery.PathFinder.find_spec(fullname, path, target)
            if spec is None:  # another meta-path finder (a zipimport, an editable install)
                for finder in sys.meta_path:
                    if finder is self or not hasattr(finder, "find_spec"):
                        continue
                    spec = finder.find_spec(fullname, path, target)
                    if spec is not None:
                        break
        finally:
            self._searching.discard(fullname)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return None
        spec.loader = _WatchingLoader(spec.loader, self, fullname)
        return spec

    def executing(self, name: str, loader: importlib.abc.Loader, module: ModuleType) -> None:
        self._depth += 1
        try:
            loader.exec_module(module)
        except BaseException as error:
            if name == "tensorflow" and self.failed is None:  # Keras failing is the script's error
                self.failed = error
            raise
        finally:
            self._depth -= 1
            # the module is TensorFlow's own again: its spec and loader are what Python made
            if getattr(module, "__loader__", None) is not loader and isinstance(module.__loader__, _WatchingLoader):
                module.__loader__ = loader
            spec = getattr(module, "__spec__", None)
            if spec is not None and isinstance(spec.loader, _WatchingLoader):
                spec.loader = loader
        if self._depth == 0 and "tensorflow" in sys.modules:
            self._paused += 1  # what on_ready imports itself (Keras, tf_keras) is not the script's
            try:
                self.on_ready(name)
            finally:
                self._paused -= 1

    def install(self) -> None:
        sys.meta_path.insert(0, self)

    def remove(self) -> None:
        try:
            sys.meta_path.remove(self)
        except ValueError:
            pass


class _WatchingLoader(importlib.abc.Loader):
    """The real loader, with ``exec_module`` reported to the hook."""

    def __init__(self, loader: importlib.abc.Loader, hook: TensorFlowImportHook, name: str) -> None:
        self._loader, self._hook, self._name = loader, hook, name

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        self._hook.executing(self._name, self._loader, module)

    def __getattr__(self, attribute: str):
        return getattr(self._loader, attribute)
