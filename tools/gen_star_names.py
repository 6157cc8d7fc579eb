"""Generate ``gradcheck/static/data/star_names.json`` from the installed Keras.

``from tensorflow.keras.layers import *`` binds every public name of the module, and the
static engine, which never imports Keras, cannot list them. Unresolved, ``Input``,
``Dense`` and ``Model`` are unknown calls, and a functional model built from them looks like
a forward pass outside the tape. The public names of the modules users star-import are
dumped here once:

    python tools/gen_star_names.py
"""

from __future__ import annotations

import importlib
import json
import os
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "gradcheck" / "static" / "data" / "star_names.json"

#: The modules (their canonical spelling, ``gradcheck.static.names.canonical``) whose public
#: names a star import binds.
MODULES = (
    "keras",
    "keras.layers",
    "keras.models",
    "keras.optimizers",
    "keras.losses",
    "keras.activations",
    "keras.callbacks",
    "keras.initializers",
    "keras.regularizers",
)


def generate() -> dict:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import keras

    out = {"generated_by": "python tools/gen_star_names.py", "keras": keras.__version__, "modules": {}}
    for name in MODULES:
        module = importlib.import_module(name)
        public = getattr(module, "__all__", None) or [n for n in dir(module) if not n.startswith("_")]
        out["modules"][name] = sorted(n for n in public if not n.startswith("_"))
    return out


if __name__ == "__main__":
    OUT.write_text(json.dumps(generate(), indent=1) + "\n", encoding="utf-8")
    print(f"wrote {OUT}")
