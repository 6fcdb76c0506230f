"""The wall: every private TensorFlow name sonnet_like uses, and nothing else.

No file of sonnet_like outside this folder imports `tensorflow.python`,
`tensorflow.core` or `tf.__internal__`, or reads a private attribute of a
TensorFlow object; it calls the small named functions here instead
(`tests/core/test_tf_private.py` scans the source and fails on a new use).
Each name has a test there that fails with a message naming it when a
TensorFlow release renames or reshapes it. CI runs those tests, and the
population, background-save and updater tests that need the internals,
on the oldest TensorFlow `setup.py` allows (`.ci/tf_floor.txt`) and on a
pinned tf-nightly (`.ci/tf_nightly.txt`). A switch between TensorFlow
versions, when one is needed, lives here and only here.

One file per TensorFlow area:

- `pfor`: `tf.vectorized_map`'s converter (a population's step): its
  `PFor`, `_convert_function_call`, `_convert_while`, `_stack`, the
  converter registry, the `pfor_converter` hook of an op, and what a
  converter reads of the `pfor_input` pfor hands it.
- `graphs`: a graph's function library (`Graph._get_function`), whether a
  graph is compiled by XLA, a `tf.cond` whose `If` calls its branch
  (`Operation._set_attr` of `_lower_using_switch_merge`),
  `InaccessibleTensorError`.
- `autograph`: AutoGraph's control status (`ag_ctx`), its conversion
  (`tf.__internal__.autograph.tf_convert`) and its do-not-convert mark.
- `distribute`: entering the default strategy's replica context on one
  thread (`distribute_lib._push_per_thread_mode`).
- `eager`: the global seed and its random-op stream (`context()._rng`),
  telling the gradient tapes a variable was read (`tape.variable_accessed`).
- `variables`: the `tf.Variable` subclass that skips `tf.Variable.__init__`
  (no device resource), base of `functional.TensorVariable`.
- `modules`: `tf.Module._flatten`, its `_name_scope` and `_name`,
  `tf.function`'s `_decorate`.
- `random`: the private hooks of `tf.random.Generator` that
  `core/generator.py` overrides.
- `checkpoint`: the checkpoint's object-graph proto, the
  `_serialize_to_tensors` override test, `Checkpoint._saver.
  _gather_serialized_tensors`, `MultiDeviceSaver` and `SaveSpec`.
- `summary`: the "scalars" plugin's `SummaryMetadata` proto.

Left outside, by name: the population's converters
(`scenarios/population/lockstep.py`, `vectorize.py`, `rows.py`,
`replicas.py`, `core/per_iteration.py`) read the fields `t` and
`is_stacked` of the `WrappedTensor`s pfor gives and takes (a namedtuple;
a function per field would tear those converters apart): `pfor.
WRAPPED_TENSOR_FIELDS` names them and its test checks them.
`core/generator.py`'s `Generator` overrides the private methods
`random.GENERATOR_HOOKS` lists (the subclass is its whole point), and
`core/base.py` and `scenarios/schedules.py` define AutoGraph's mark as a
class attribute (`autograph.DO_NOT_CONVERT_MARK`); each carries a comment
naming this folder.

Upgrade policy: see BUILD_NOTES.md ("TensorFlow's internals").
"""
