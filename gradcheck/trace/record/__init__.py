"""What the rest of the trace engine reads: every private TensorFlow import (``_tf``), user
frames and source locations (``frames``), the data-flow graph of a step (``dataflow``, filled
by ``eager``'s op callback or from a traced ``graph``), the ``GradientCall`` record of one
``tape.gradient``, and the registry of checks run on it."""
