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
#: Ops whose gradient to an input does not depend on any value (so paths cancelling through
#: them cancel for every batch).
ADDITIVE = frozenset({"Add", "AddV2", "AddN", "Sub", "Neg", "Identity", "BiasAdd"})
LOOPS = frozenset({"While", "StatelessWhile", "If", "StatelessIf", "PartitionedCall", "StatefulPartitionedCall"})
LIST_OPS_PREFIX = "TensorList"
