"""Which Keras layer an op or a variable belongs to, and so the user's line to blame for
an op that ran inside a built-in layer (its activation, its initialiser): shared by the
value checks (``frontier``, ``bootstrap``)."""

from __future__ import annotations

from gradcheck.trace.record import _tf, frames
from gradcheck.trace.record.dataflow import TAG_READ


def blame_location(checked, op_index: int):
    """The user's line for an op. An op that ran inside a built-in Keras layer (a ReLU or
    softmax activation, a Dense's MatMul) has no line of the user's but the model's call;
    the layer's own line (where it was created, or first applied by the user) is where
    its activation and initialisers are chosen: point there."""
    ctx = checked.ctx
    op = ctx.flow.ops[op_index]
    site = op.site
    if site is not None and not isinstance(site, tuple):
        layer_site = getattr(site, "_gc_layer_site", None)
        if layer_site is not None:
            return frames.site_location(layer_site)
        return ctx.op_location(op_index)
    location = ctx.op_location(op_index)
    if not checked.eager or site is None:
        return location
    layer = _eager_layer(checked, op_index)
    if layer is None:
        return location
    layer_site = getattr(layer, "_gc_site", None) or getattr(layer, "_gc_call_site", None)
    return frames.site_location(layer_site) if layer_site is not None else location


def weight_location(checked, read_op: int):
    """Where the layer owning the variable a read op reads was created."""
    op = checked.ctx.flow.ops[read_op]
    if not op.inputs:
        return None
    layer = layers_by_source(checked).get(op.inputs[0])
    site = getattr(layer, "_gc_site", None) or getattr(layer, "_gc_call_site", None)
    return frames.site_location(site) if site is not None else None


def layers_by_source(checked) -> dict:
    """Flow key of each variable source -> the innermost Keras layer owning it (computed
    once per check, while the user's frames are alive: at trace time in graph mode)."""
    cached = getattr(checked, "_layers", None)
    if cached is None:
        by_handle = _layers_by_handle(checked)
        cached = {}
        for source in checked.ctx.sources:
            if source.key is None or not source.is_variable:
                continue
            try:
                layer = by_handle.get(id(_tf.handle_of(source.value)))
            except (AttributeError, ValueError, TypeError):
                layer = None
            if layer is not None:
                cached[source.key] = layer
        checked._layers = cached
    return cached


def _eager_layer(checked, op_index: int, hops: int = 6):
    """The Keras layer an eager op ran inside, when it ran inside one called by Keras
    (not by the user's own code): the layer owning the nearest variable read before it
    at the same user site."""
    flow = checked.ctx.flow
    op = flow.ops[op_index]
    keys, seen = list(op.data), set()
    handles = [op.inputs[0]] if op.tag == TAG_READ and op.inputs else []
    for _ in range(hops if not handles else 0):
        nxt = []
        for k in keys:
            p = flow.producer.get(k)
            if p is None or p in seen:
                continue
            seen.add(p)
            prev = flow.ops[p]
            if prev.site != op.site:
                continue
            if prev.tag == TAG_READ and prev.inputs:
                handles.append(prev.inputs[0])
            else:
                nxt.extend(prev.data)
        if handles:
            break
        keys = nxt
    if not handles:
        return None
    layers = layers_by_source(checked)
    for handle in handles:
        layer = layers.get(handle)
        if layer is not None:
            return layer
    # a layer whose weights are not among the sources (Grad-CAM asks for a conv output's
    # gradient: the saturated softmax is in a Dense the request does not train)
    keyed = _layers_by_handle_key(checked)
    for handle in handles:
        layer = keyed.get(handle)
        if layer is not None:
            return layer
    return None


def _layers_by_handle_key(checked) -> dict:
    """The eager flow's key of each variable handle (``_id``) -> the innermost layer owning it."""
    cached = getattr(checked, "_layers_by_key", None)
    if cached is None:
        cached = {}
        for layer, variables in _owned(checked):
            for variable in variables:
                try:
                    key = getattr(_tf.handle_of(variable), "_id", None)
                except (AttributeError, ValueError, TypeError):
                    continue
                if key is not None:
                    cached[key] = layer  # deeper layers come later and win
        checked._layers_by_key = cached
    return cached


def _layers_by_handle(checked) -> dict:
    """id(variable handle) -> the innermost Keras layer owning it, for the layers and
    models the user's frames hold (locals, and module globals)."""
    out: dict = {}
    for layer, own in _owned(checked):
        for variable in own:
            try:
                out[id(_tf.handle_of(variable))] = layer  # deeper layers come later and win
            except (AttributeError, ValueError, TypeError):
                continue
    return out


def _owned(checked) -> list:
    """(layer, its own variables) for the layers and models the user's frames hold (locals,
    and module globals), outer layers first."""
    classes = tuple(_tf.keras_layer_classes())
    frame = checked.site.caller if checked.site is not None else None
    if not classes or frame is None:
        return []
    roots, seen = [], set()
    depth = 0
    while frame is not None and depth < 40:
        scopes = [frame.f_locals]
        if frames.is_user_file(frame.f_code.co_filename):
            scopes.append(frame.f_globals)
        for scope in scopes:
            for value in list(scope.values()):
                if isinstance(value, classes) and id(value) not in seen:
                    seen.add(id(value))
                    roots.append(value)
        frame, depth = frame.f_back, depth + 1
    out = []
    for root in roots:
        try:
            layers = list(root._flatten_layers(include_self=True, recursive=True))
        except Exception:  # noqa: BLE001 - not a standard layer
            layers = [root]
        for layer in layers:
            own = list(getattr(layer, "_trainable_variables", None) or getattr(layer, "_trainable_weights", None) or [])
            own += list(getattr(layer, "_non_trainable_variables", None) or [])
            out.append((layer, own))
    return out
