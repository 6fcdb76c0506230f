"""sonnet_like has every public name of Sonnet 2.0.2, with the same arguments.

The name lists are Sonnet 2.0.2's `__all__`s (facts, written out so this test
does not need dm-sonnet); the signature check compares side by side with
dm-sonnet when it is installed.
"""

import inspect

import pytest

import sonnet_like as snt

SONNET_2_0_2 = {
    "": [
        "BaseBatchNorm", "BatchApply", "BatchNorm", "Bias", "Conv1D",
        "Conv1DLSTM", "Conv1DTranspose", "Conv2D", "Conv2DLSTM",
        "Conv2DTranspose", "Conv3D", "Conv3DLSTM", "Conv3DTranspose",
        "DeepRNN", "Deferred", "DepthwiseConv2D", "Dropout", "Embed",
        "ExponentialMovingAverage", "flatten", "Flatten", "GroupNorm",
        "InstanceNorm", "GRU", "LSTM", "LSTMState", "LayerNorm", "Linear",
        "Mean", "Metric", "Module", "Optimizer", "reshape", "Reshape",
        "RNNCore", "Sequential", "Sum", "TrainableState", "UnrolledLSTM",
        "UnrolledRNN", "VanillaRNN", "allow_empty_variables", "build",
        "custom_variable_getter", "deep_rnn_with_residual_connections",
        "deep_rnn_with_skip_connections", "distribute", "dynamic_unroll",
        "format_variables", "initializers", "log_variables",
        "lstm_with_recurrent_dropout", "merge_leading_dims", "no_name_scope",
        "nets", "once", "leaky_clip_by_value", "optimizers", "pad",
        "regularizers", "scale_gradient", "split_leading_dim", "static_unroll",
        "mixed_precision",
    ],
    "initializers": [
        "Constant", "Identity", "Initializer", "Ones", "Orthogonal",
        "RandomNormal", "RandomUniform", "TruncatedNormal", "VarianceScaling",
        "Zeros",
    ],
    "nets": [
        "MLP", "Cifar10ConvNet", "ResNet", "ResNet50", "VectorQuantizer",
        "VectorQuantizerEMA",
    ],
    "optimizers": ["Adam", "Momentum", "RMSProp", "SGD"],
    "pad": ["causal", "create", "full", "reverse_causal", "same", "valid"],
    "regularizers": ["L1", "L2", "OffDiagonalOrthogonal", "Regularizer"],
    "mixed_precision": ["disable", "enable", "modes", "scope"],
    "distribute": [
        "create_variables_eagerly", "Replicator", "TpuReplicator",
        "CrossReplicaBatchNorm",
    ],
}

_PAIRS = [(ns, name) for ns, names in SONNET_2_0_2.items() for name in names]


def _get(root, namespace: str, name: str):
  target = root
  for part in filter(None, namespace.split(".")):
    target = getattr(target, part)
  return getattr(target, name)


@pytest.mark.parametrize("namespace,name", _PAIRS,
                         ids=[f"{ns or 'snt'}.{n}" for ns, n in _PAIRS])
def test_name_exists(namespace, name):
  try:
    _get(snt, namespace, name)
  except AttributeError:
    pytest.fail(f"snt.{namespace + '.' if namespace else ''}{name} is missing")


def _parameters(obj) -> list[str]:
  target = obj.__init__ if inspect.isclass(obj) else obj
  try:
    return [p for p in inspect.signature(target).parameters if p != "self"]
  except (TypeError, ValueError):
    return []


@pytest.mark.parametrize("namespace,name", _PAIRS,
                         ids=[f"{ns or 'snt'}.{n}" for ns, n in _PAIRS])
def test_same_arguments_as_sonnet(namespace, name):
  reference = pytest.importorskip("sonnet")
  theirs = _get(reference, namespace, name)
  ours = _get(snt, namespace, name)
  if inspect.ismodule(theirs) or not callable(theirs):
    return
  expected = _parameters(theirs)
  if expected in ([], ["args", "kwargs"]):
    return  # No signature to compare (e.g. NamedTuple-generated methods).
  assert _parameters(ours)[:len(expected)] == expected
