"""Running user code under the tracer: a script as ``__main__`` (``runner``), in a child
process of the CLI (``child``), or one ``train_step`` of a model (``steps``)."""
