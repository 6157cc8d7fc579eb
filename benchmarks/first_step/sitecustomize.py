"""The plain baseline of ``bench_verdict.py --programs``: python running a program up to the
end of its first training step, and no further. Put this directory on ``PYTHONPATH``.

No gradcheck here. The program leaves (``os._exit(0)``, as gradcheck's checked child does)
right after its first optimizer update returns: Keras 3's ``Optimizer.apply`` (what
``apply_gradients`` and ``fit`` call) and tf_keras's ``apply_gradients``. An update traced
inside a ``tf.function`` (``fit``, a compiled step) returns at trace time, before the step
runs: then the program leaves when that function call returns. ``FIRST_STEP_MARK`` (a file)
records which of the two ended it."""

import os
import sys

_state = {"traced": False}


def _leave(how: str) -> None:
    mark = os.environ.get("FIRST_STEP_MARK")
    if mark:
        with open(mark, "w") as fh:
            fh.write(how)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def _wrap_apply(cls, name: str) -> None:
    orig = cls.__dict__.get(name)
    if orig is None:
        return

    def apply(self, *args, **kwargs):
        result = orig(self, *args, **kwargs)
        import tensorflow as tf

        if tf.executing_eagerly():
            _leave("eager update")
        _state["traced"] = True
        return result

    setattr(cls, name, apply)


def _wrap_function_call() -> None:
    from tensorflow.python.eager.polymorphic_function import polymorphic_function

    orig = polymorphic_function.Function.__call__

    def __call__(self, *args, **kwargs):
        result = orig(self, *args, **kwargs)
        if _state["traced"]:
            import tensorflow as tf

            if tf.executing_eagerly():
                _leave("traced update")
        return result

    polymorphic_function.Function.__call__ = __call__


class _Finder:
    """Patch the optimizers as soon as their modules are imported."""

    targets = {
        "keras.src.optimizers.base_optimizer": [("BaseOptimizer", "apply")],
        "tf_keras.src.optimizers.optimizer": [("Optimizer", "apply_gradients")],
        "tf_keras.src.optimizers.legacy.optimizer_v2": [("OptimizerV2", "apply_gradients")],
        "tensorflow.python.eager.polymorphic_function.polymorphic_function": [],
    }

    def find_spec(self, name, path=None, target=None):
        if name not in self.targets:
            return None
        import importlib.util

        sys.meta_path.remove(self)
        try:
            spec = importlib.util.find_spec(name)
        finally:
            sys.meta_path.insert(0, self)
        if spec is None or spec.loader is None:
            return spec
        loader, finder = spec.loader, self

        class Loader:
            def create_module(self, spec):
                return loader.create_module(spec)

            def exec_module(self, module):
                loader.exec_module(module)
                for cls_name, method in finder.targets[name]:
                    cls = getattr(module, cls_name, None)
                    if cls is not None:
                        _wrap_apply(cls, method)
                if name.endswith("polymorphic_function"):
                    _wrap_function_call()

        spec.loader = Loader()
        return spec


sys.meta_path.insert(0, _Finder())
