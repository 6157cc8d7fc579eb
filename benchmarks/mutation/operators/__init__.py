"""The mutation operators, one module each (the bug shape, its codes, and its benign twin)."""

from __future__ import annotations

from benchmarks.mutation.operators._base import Mutation, Operator
from benchmarks.mutation.operators.accuracy_loss import AccuracyLoss
from benchmarks.mutation.operators.all_variables import AllVariables
from benchmarks.mutation.operators.argmax_output import ArgmaxOutput
from benchmarks.mutation.operators.argsort_output import ArgsortOutput
from benchmarks.mutation.operators.assign_in_tape import AssignInTape
from benchmarks.mutation.operators.cast_int_output import CastIntOutput
from benchmarks.mutation.operators.clip_softmax import ClipSoftmax
from benchmarks.mutation.operators.compare_output import CompareOutput
from benchmarks.mutation.operators.custom_gradient_derivative import CustomGradientDerivative
from benchmarks.mutation.operators.custom_gradient_upstream import CustomGradientUpstream
from benchmarks.mutation.operators.dead_relu_head import DeadReluHead
from benchmarks.mutation.operators.drop_layer_result import DropLayerResult
from benchmarks.mutation.operators.drop_loss_term import DropLossTerm
from benchmarks.mutation.operators.float_loss import FloatLoss
from benchmarks.mutation.operators.floor_output import FloorOutput
from benchmarks.mutation.operators.hoist_forward import HoistForward
from benchmarks.mutation.operators.nan_in_batch import NanInBatch
from benchmarks.mutation.operators.np_call import NpCall
from benchmarks.mutation.operators.numpy_function import NumpyFunction
from benchmarks.mutation.operators.numpy_method import NumpyMethod
from benchmarks.mutation.operators.predict_in_tape import PredictInTape
from benchmarks.mutation.operators.pseudo_label_target import PseudoLabelTarget
from benchmarks.mutation.operators.remove_epsilon import RemoveEpsilon
from benchmarks.mutation.operators.remove_log_epsilon import RemoveLogEpsilon
from benchmarks.mutation.operators.remove_stop_gradient import RemoveStopGradient
from benchmarks.mutation.operators.remove_watch import RemoveWatch
from benchmarks.mutation.operators.round_output import RoundOutput
from benchmarks.mutation.operators.sample_output import SampleOutput
from benchmarks.mutation.operators.sigmoid_saturate import SigmoidSaturate
from benchmarks.mutation.operators.sign_output import SignOutput
from benchmarks.mutation.operators.std_normalise import StdNormalise
from benchmarks.mutation.operators.stop_gradient_path import StopGradientPath
from benchmarks.mutation.operators.tanh_saturate import TanhSaturate
from benchmarks.mutation.operators.tf_function_call import TfFunctionCall
from benchmarks.mutation.operators.threshold_mask import ThresholdMask
from benchmarks.mutation.operators.watch_int import WatchInt
from benchmarks.mutation.operators.wrong_model_vars import WrongModelVars

OPERATORS: dict[str, Operator] = {
    op.name: op
    for op in (
        ArgmaxOutput(),
        RoundOutput(),
        FloorOutput(),
        CastIntOutput(),
        CompareOutput(),
        StopGradientPath(),
        NumpyMethod(),
        NpCall(),
        PredictInTape(),
        NumpyFunction(),
        HoistForward(),
        DropLayerResult(),
        DropLossTerm(),
        WrongModelVars(),
        AllVariables(),
        AssignInTape(),
        WatchInt(),
        RemoveWatch(),
        TfFunctionCall(),
        CustomGradientUpstream(),
        RemoveStopGradient(),
        RemoveEpsilon(),
        SignOutput(),
        ThresholdMask(),
        # issue 36: shapes taken from real reports (each module cites its report)
        ArgsortOutput(),
        SampleOutput(),
        AccuracyLoss(),
        FloatLoss(),
        CustomGradientDerivative(),
        PseudoLabelTarget(),
        TanhSaturate(),
        SigmoidSaturate(),
        DeadReluHead(),
        ClipSoftmax(),
        # issue 38: a non-finite loss (GC204), each from a public report it cites
        RemoveLogEpsilon(),
        StdNormalise(),
        NanInBatch(),
    )
}

__all__ = ["OPERATORS", "Mutation", "Operator"]
