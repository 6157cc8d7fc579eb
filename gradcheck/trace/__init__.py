"""The trace engine: run the user's real training step under ``tf.GradientTape`` hooks and
explain every gradient that is None or degenerate.

Its packages read top to bottom, and each imports only the ones below it
(``pyproject.toml``'s import-linter contracts check this):

- ``run``: run a script as ``__main__`` (or one ``train_step``) under the hooks, in a child
  process when the CLI asks;
- ``capture``: the hooks on TensorFlow and Keras and the session they report to; each
  ``tape.gradient`` becomes one ``GradientCall`` record, handed to the registered checks;
- ``values``: the checks on gradients that exist (GC201, GC202, GC203, GC301);
- ``diagnose``: the checks on gradients that are None (GC101-GC116): the cut walk, the
  causes of unreached sources, and the words of a finding;
- ``record``: what everything above reads: the private TensorFlow imports, user frames,
  the recorded data-flow graph (eager op callbacks or the traced ``FuncGraph``), the
  ``GradientCall`` record and the check registry.

Importing this package imports no TensorFlow; ``record._tf`` does, lazily.
"""
