"""The op types the explainers recognise, by what their gradient does."""

from __future__ import annotations

PASS_THROUGH = frozenset(
    {
        "Identity",
        "IdentityN",
        "Reshape",
        "Transpose",
        "ExpandDims",
        "Squeeze",
        "StridedSlice",
        "Slice",
        "GatherV2",
        "Gather",
        "GatherNd",
        "Tile",
        "BroadcastTo",
        "ConcatV2",
        "Pack",
        "Unpack",
        "Split",
        "SplitV",
        "Neg",
        "Sum",
        "Mean",
        "Cast",
        "AddV2",
        "Add",
        "AddN",
        "BiasAdd",
        "Sub",
        "Pad",
        "PadV2",
        "MirrorPad",
        "Max",
        "Min",
        "MaxPool",
        "AvgPool",
        "EnsureShape",
        "Square",
        "Abs",
    }
)
PRODUCTS = frozenset(
    {
        "Mul",
        "MatMul",
        "BatchMatMul",
        "BatchMatMulV2",
        "BatchMatMulV3",
        "Conv2D",
        "Conv3D",
        "Conv1D",
        "DepthwiseConv2dNative",
        "Einsum",
        "MulNoNan",
        "TensorDot",
    }
)
CONSTANTS = frozenset({"Const", "Fill", "ZerosLike", "Zeros", "OnesLike"})
#: Ops that round floats and have no gradient (a cut, GC102)
ROUNDING = frozenset({"Round", "Floor", "Ceil", "Rint"})
MASKS = frozenset(
    {
        "OneHot",
        "Equal",
        "NotEqual",
        "Less",
        "LessEqual",
        "Greater",
        "GreaterEqual",
        "LogicalAnd",
        "LogicalOr",
        "LogicalNot",
        "SequenceMask",
    }
)
SQUASH = frozenset({"Sigmoid", "Softmax", "Tanh"})
CLIPS = frozenset({"Maximum", "Minimum", "ClipByValue"})  # `tf.clip_by_value` is a Minimum then a Maximum
#: Ops whose gradient to an input does not depend on any value (so paths cancelling through
#: them cancel for every batch).
ADDITIVE = frozenset({"Add", "AddV2", "AddN", "Sub", "Neg", "Identity", "BiasAdd"})
#: Ops whose registered gradient to some inputs is zeros by construction, whatever the values
#: (input positions; None: every input). Not the ops whose gradient is None (``tf.round``,
#: ``tf.floor``): those cut the path, a GC1xx cause. ``tf.sign`` is the step function a
#: user writes; the others are the gradient ops of a piecewise-linear op (relu, max-pooling),
#: met when a loss differentiates a gradient (a gradient penalty, a PDE residual): their
#: derivative with respect to the forward op's own input is zero.
ZERO_GRADIENT: dict[str, tuple[int, ...] | None] = {
    "Sign": None,
    "ReluGrad": (1,),
    "Relu6Grad": (1,),
    "LeakyReluGrad": (1,),
    "MaxPoolGrad": (0, 1),
    "MaxPoolGradV2": (0, 1),
    "MaxPoolGradGrad": (0, 1),
    "MaxPool3DGrad": (0, 1),
    "MaxPool3DGradGrad": (0, 1),
}
LOOPS = frozenset({"While", "StatelessWhile", "If", "StatelessIf", "PartitionedCall", "StatefulPartitionedCall"})
LIST_OPS_PREFIX = "TensorList"
