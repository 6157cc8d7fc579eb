"""Capturing what the user's code does: the hooks on ``tf.GradientTape``, the optimizers,
Keras layers and models, NumPy and the eager op callback (``hooks``), and the session that
records tapes, variables and findings (``session``). Each gradient request becomes one
``GradientCall`` handed to the checks registered in ``record.registry``."""
