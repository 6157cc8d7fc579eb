"""One module per patch kind; each registers itself with ``gradcheck.fix.registry``."""
