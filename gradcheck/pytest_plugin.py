"""pytest plugin (entry point ``pytest11``): opt-in, imports no TensorFlow until used."""
