"""The wall around TensorFlow's internals (`sonnet_like/core/tf_private/`).

One test per private name: it exists, takes the parameters the wall passes
(`inspect.signature`), and, where cheap, does on a tiny input what the
wall relies on. Each failure names what TensorFlow changed, so a new
TensorFlow that breaks the wall says where before a user's run does. The
last test fails when a file outside the wall uses TensorFlow's internals.
"""

import collections
import contextlib
import importlib
import inspect
import pathlib
import re

import numpy as np
import pytest
import tensorflow as tf

_WALL = "sonnet_like/core/tf_private"


def _version() -> str:
  return f"TensorFlow {tf.__version__}"


def _wall(area: str):
  """The wall's module `area`; a failure to import names the area."""
  try:
    return importlib.import_module(f"sonnet_like.core.tf_private.{area}")
  except (ImportError, AttributeError) as error:
    pytest.fail(f"{_version()} no longer has what {_WALL}/{area}.py "
                f"imports: {error!r}")


def _private(module: str):
  """TensorFlow's private module `module` (dotted), named if missing."""
  try:
    return importlib.import_module(module)
  except ImportError as error:
    pytest.fail(f"{_version()} no longer has the module {module}: {error!r}")


def _requires(owner, name: str, params: tuple[str, ...], what: str):
  """`owner.name`, which must exist and take `params` first (after
  `self`); returns it."""
  found = getattr(owner, name, None)
  if found is None:
    pytest.fail(f"{_version()} no longer has {what}({', '.join(params)}); "
                f"{_WALL} needs it.")
  if callable(found) and params:
    got = [p for p in inspect.signature(found).parameters if p != "self"]
    if tuple(got[:len(params)]) != params:
      pytest.fail(f"{_version()} changed {what}: it takes ({', '.join(got)}),"
                  f" {_WALL} passes ({', '.join(params)}).")
  return found


@contextlib.contextmanager
def _behaves(what: str):
  """Fails, naming `what`, if the block raises or an assertion fails."""
  try:
    yield
  except Exception as error:  # pylint: disable=broad-except
    pytest.fail(f"{_version()} changed the behaviour of {what}: {error!r}")


# ---- pfor (`tf.vectorized_map`'s converter).


def _pfor_module():
  return _private("tensorflow.python.ops.parallel_for.pfor")


def test_pfor_PFor_and_its_fields():
  pfor = _pfor_module()
  _requires(pfor, "PFor", (), "pfor.PFor")
  _requires(pfor.PFor, "__init__",
            ("loop_var", "loop_len", "pfor_ops", "fallback_to_while_loop",
             "all_indices", "all_indices_partitioned", "pfor_config"),
            "pfor.PFor.__init__")
  wall = _wall("pfor")
  with tf.Graph().as_default():
    converter = wall.new_converter(3, [])
    for field in ("loop_var", "loop_len_vector", "all_indices",
                  "all_indices_partitioned", "pfor_config",
                  "_fallback_to_while_loop", "_all_indices_partitioned"):
      if not hasattr(converter, field):
        pytest.fail(f"{_version()} no longer has pfor.PFor().{field}; "
                    f"{_WALL}/pfor.py reads it.")


def test_pfor_wrap_and_WrappedTensor():
  pfor = _pfor_module()
  _requires(pfor, "wrap", ("tensor", "is_stacked"), "pfor.wrap")
  wrapped_tensor = _requires(pfor, "WrappedTensor", (), "pfor.WrappedTensor")
  wall = _wall("pfor")
  if tuple(wrapped_tensor._fields[:3]) != wall.WRAPPED_TENSOR_FIELDS:
    pytest.fail(f"{_version()} changed pfor.WrappedTensor's fields to "
                f"{wrapped_tensor._fields}; the population's converters read "
                f"{wall.WRAPPED_TENSOR_FIELDS}.")
  with _behaves("pfor.wrap"):
    value = wall.wrap(tf.constant([1, 2]), True)
    assert value.is_stacked and value.t.shape == [2]


def test_pfor_ConversionNotImplementedError():
  pfor = _pfor_module()
  error = _requires(pfor, "ConversionNotImplementedError", (),
                    "pfor.ConversionNotImplementedError")
  assert issubclass(error, Exception)


def test_pfor_convert_function_call_and_stack():
  pfor = _pfor_module()
  _requires(pfor, "_convert_function_call", ("func", "converter", "inputs"),
            "pfor._convert_function_call")
  _requires(pfor, "_stack", ("t", "length"), "pfor._stack")
  wall = _wall("pfor")

  @tf.function(autograph=False)
  def doubled_and_seven():
    traced = tf.function(lambda x: (x * 2, tf.constant(7))
                         ).get_concrete_function(tf.TensorSpec([], tf.int32))
    converter = wall.new_converter(3, traced.graph.get_operations())
    outputs = wall.convert_function_call(
        traced, converter, [wall.wrap(tf.range(3), True)])
    return [out.t if out.is_stacked else wall.stack(out.t, [3])
            for out in outputs]

  with _behaves("pfor._convert_function_call and pfor._stack"):
    doubled, seven = doubled_and_seven()
    assert doubled.numpy().tolist() == [0, 2, 4]
    assert seven.numpy().tolist() == [7, 7, 7]


def test_pfor_converter_hook_and_pfor_input():
  wall = _wall("pfor")
  seen = {}

  def converter(pfor_input):
    seen["type"] = wall.op_of(pfor_input).type
    seen["count"] = wall.static_iteration_count(pfor_input)
    seen["every"] = wall.every_iteration(pfor_input)
    seen["stacked"] = [x.is_stacked for x in wall.inputs(pfor_input)]
    seen["T"] = wall.attr(pfor_input, "T")
    seen["inner"] = wall.inner_converter(pfor_input, 3, [])
    offset = wall.unstacked_input(pfor_input, 1)
    wall.stack_inputs(pfor_input, [1])
    seen["now"] = wall.input_at(pfor_input, 1).is_stacked
    values = wall.stacked_input(pfor_input, 0)
    return [wall.wrap(values * 10 + offset, True)]

  def member(x):
    y = tf.add(x, tf.constant(1))
    if wall.has_converter(y.op):
      pytest.fail("a new op already has a pfor_converter")
    wall.set_converter(y.op, converter)
    return y

  @tf.function(autograph=False)
  def mapped():
    return tf.vectorized_map(member, tf.range(3))

  with _behaves("pfor's op.pfor_converter hook and its _PforInput"):
    assert mapped().numpy().tolist() == [1, 11, 21]
    assert seen["type"] == "AddV2" and seen["count"] == 3 and seen["every"]
    assert seen["stacked"] == [True, False] and seen["now"]
    assert seen["T"] == tf.int32
    assert seen["inner"] is not None


def test_pfor_converter_registry():
  pfor = _pfor_module()
  registry = _requires(pfor, "_pfor_converter_registry", (),
                       "pfor._pfor_converter_registry")
  if not isinstance(registry, dict):
    pytest.fail(f"{_version()} changed pfor._pfor_converter_registry to a "
                f"{type(registry).__name__}, not a dict by op type.")
  wall = _wall("pfor")
  assert wall.has_conversion("AddV2")
  assert not wall.has_conversion("L2Loss")  # What per_iteration.convert makes.


def test_pfor_convert_while():
  pfor = _pfor_module()
  _requires(pfor, "_convert_while", ("pfor_input",), "pfor._convert_while")
  wall = _wall("pfor")
  called = []

  def tensorflows(pfor_input):
    called.append(True)
    return wall.convert_while(pfor_input)

  def member(n):
    result = tf.while_loop(lambda i, s: i < n, lambda i, s: (i + 1, s + i),
                           (tf.constant(0), tf.constant(0)))
    for op in tf.compat.v1.get_default_graph().get_operations():
      if op.type in ("While", "StatelessWhile"):
        wall.set_converter(op, tensorflows)
    return result[1]

  @tf.function(autograph=False)
  def mapped():
    return tf.vectorized_map(member, tf.constant([1, 3, 4]))

  with _behaves("pfor._convert_while"):
    assert mapped().numpy().tolist() == [0, 3, 6] and called


# ---- Graphs.


def test_graph_get_function():
  _requires(tf.Graph, "_get_function", ("name",), "tf.Graph._get_function")
  graphs = _wall("graphs")

  @tf.function(autograph=False)
  def loop():
    return tf.while_loop(lambda i: i < 3, lambda i: i + 1, [tf.constant(0)])

  graph = loop.get_concrete_function().graph
  (op,) = [op for op in graph.get_operations()
           if op.type in ("While", "StatelessWhile")]
  with _behaves("tf.Graph._get_function"):
    body = graphs.function_in_graph(graph, op.get_attr("body").name)
    assert body is not None and body.graph is not None


def test_control_flow_util_in_xla_context():
  util = _private("tensorflow.python.ops.control_flow_util")
  _requires(util, "GraphOrParentsInXlaContext", ("graph",),
            "control_flow_util.GraphOrParentsInXlaContext")
  graphs = _wall("graphs")
  seen = []

  def probe(x):
    seen.append(graphs.in_xla_context(tf.compat.v1.get_default_graph()))
    return x + 1

  with _behaves("control_flow_util.GraphOrParentsInXlaContext"):
    tf.function(probe, jit_compile=True)(tf.constant(1))
    tf.function(probe)(tf.constant(1))
    assert seen == [True, False]


def _executed_op_types(call, scope: str) -> collections.Counter:
  """The op types TensorFlow runs for `call()` in the graphs (after its
  rewrites: a `tf.cond` lowered to switches, or not) that hold a node of
  name scope `scope`: run metadata is process-wide, and another thread
  may run a function meanwhile."""
  context = _private("tensorflow.python.eager.context").context()
  context.enable_run_metadata()
  try:
    call()
    metadata = context.export_run_metadata()
  finally:
    context.disable_run_metadata()
  return collections.Counter(
      node.op for graph in metadata.function_graphs
      for partition in graph.partition_graphs
      if any(n.name.startswith(scope + "/") for n in partition.node)
      for node in partition.node)


def test_operation_set_attr_keeps_a_cond_called():
  _requires(tf.Operation, "_set_attr", ("attr_name", "attr_value"),
            "tf.Operation._set_attr")
  graphs = _wall("graphs")
  state = tf.Variable(1.0)

  def step(pred, cond):
    with tf.name_scope("cond_called_probe"):
      # A branch that writes state, as the population's restore does.
      cond(pred, lambda: tf.constant(0.0),
           lambda: state.assign(state * 3.0))
      return state.read_value()

  def executed(function):
    return _executed_op_types(lambda: function(tf.constant(True)),
                              "cond_called_probe")

  with _behaves("the _lower_using_switch_merge attribute of an If op"):
    assert executed(tf.function(lambda p: step(p, tf.cond)))["Switch"]
    called = tf.function(lambda p: step(p, graphs.cond_called))
    ops = executed(called)
    assert ops["If"] == 1 and not ops["Switch"]
    state.assign(1.0)
    assert float(called(tf.constant(True))) == 1.0
    assert float(called(tf.constant(False))) == 3.0
    assert float(called(tf.constant(False))) == 9.0


def test_errors_impl_InaccessibleTensorError():
  errors_impl = _private("tensorflow.python.framework.errors_impl")
  error = _requires(errors_impl, "InaccessibleTensorError", (),
                    "errors_impl.InaccessibleTensorError")
  assert issubclass(error, ValueError)
  assert _wall("graphs").InaccessibleTensorError is error


# ---- AutoGraph.


def test_ag_ctx_control_status():
  ag_ctx = _private("tensorflow.python.autograph.core.ag_ctx")
  _requires(ag_ctx, "control_status_ctx", (), "ag_ctx.control_status_ctx")
  _requires(ag_ctx, "ControlStatusCtx", ("status", "options"),
            "ag_ctx.ControlStatusCtx")
  status = _requires(ag_ctx, "Status", (), "ag_ctx.Status")
  _requires(status, "ENABLED", (), "ag_ctx.Status.ENABLED")
  autograph = _wall("autograph")
  seen = []

  @tf.function
  def traced():
    seen.append(autograph.enabled(autograph.control_status()))
    return tf.constant(0)

  with _behaves("ag_ctx.control_status_ctx and ControlStatusCtx"):
    traced()
    assert seen == [True]
    assert not autograph.enabled(autograph.control_status())  # Eagerly.
    with autograph.status_scope(_enabled_status()):
      assert autograph.enabled(autograph.control_status())


def _enabled_status():
  status = []

  @tf.function
  def traced():
    status.append(_wall("autograph").control_status())
    return tf.constant(0)

  traced()
  return status[0]


def test_internal_autograph_tf_convert():
  _requires(tf.__internal__.autograph, "tf_convert", ("f", "ctx"),
            "tf.__internal__.autograph.tf_convert")
  autograph = _wall("autograph")

  def user_code(x):
    if x > 0:  # A tensor `if`: converted to tf.cond.
      return x
    return -x

  @tf.function(autograph=False)
  def traced(x):
    return autograph.convert(user_code, _enabled_status())(x)

  with _behaves("tf.__internal__.autograph.tf_convert"):
    assert int(traced(tf.constant(-2))) == 2


def test_autograph_do_not_convert_mark():
  autograph = _wall("autograph")
  marked = tf.autograph.experimental.do_not_convert(lambda: None)
  if not hasattr(marked, autograph.DO_NOT_CONVERT_MARK):
    pytest.fail(f"{_version()} no longer marks do_not_convert's wrapper with "
                f"{autograph.DO_NOT_CONVERT_MARK!r}; core/autograph.py and "
                "core/base.py set that mark.")

  def user_code(x):
    if x > 0:
      return x
    return -x

  setattr(user_code, autograph.DO_NOT_CONVERT_MARK, frozenset())
  with pytest.raises(Exception):  # Called as written: a tensor `if`.
    tf.function(lambda x: user_code(x))(tf.constant(1))


# ---- Distribution.


def test_distribute_lib_per_thread_mode():
  distribute_lib = _private("tensorflow.python.distribute.distribute_lib")
  _requires(distribute_lib, "_push_per_thread_mode", ("context",),
            "distribute_lib._push_per_thread_mode")
  _requires(distribute_lib, "_pop_per_thread_mode", (),
            "distribute_lib._pop_per_thread_mode")
  _requires(distribute_lib, "_get_default_replica_mode", (),
            "distribute_lib._get_default_replica_mode")
  distribute = _wall("distribute")
  strategy = tf.distribute.MirroredStrategy(["CPU:0"])
  with _behaves("distribute_lib._push_per_thread_mode"), strategy.scope():
    assert tf.distribute.has_strategy()
    with distribute.default_replica_context():
      assert not tf.distribute.has_strategy()
    assert tf.distribute.get_strategy() is strategy


# ---- Eager context and tapes.


def test_context_global_seed():
  context = _private("tensorflow.python.eager.context")
  _requires(context, "global_seed", (), "context.global_seed")
  _requires(context, "set_global_seed", ("seed",), "context.set_global_seed")
  eager = _wall("eager")
  saved = eager.global_seed()
  try:
    with _behaves("context.global_seed and set_global_seed"):
      eager.set_global_seed(7)
      assert eager.global_seed() == 7
  finally:
    eager.set_global_seed(saved)


def test_context_rng_op_seed_stream():
  context = _private("tensorflow.python.eager.context")
  eager = _wall("eager")
  saved_seed, saved_stream = eager.global_seed(), eager.op_seed_stream()
  try:
    eager.set_global_seed(7)
    stream = getattr(context.context(), "_rng", None)
    if stream is None or not hasattr(stream, "randint"):
      pytest.fail(f"{_version()} no longer keeps the op seed stream as "
                  "context()._rng (a random.Random); seed.py restores it.")
    with _behaves("context()._rng"):
      eager.set_op_seed_stream(None)
      assert eager.op_seed_stream() is None
  finally:
    eager.set_global_seed(saved_seed)
    eager.set_op_seed_stream(saved_stream)


def test_tape_variable_accessed():
  tape = _private("tensorflow.python.eager.tape")
  _requires(tape, "variable_accessed", ("variable",), "tape.variable_accessed")
  eager = _wall("eager")
  v = tf.Variable(1.0)
  with _behaves("tape.variable_accessed"):
    with tf.GradientTape() as recording:
      eager.variable_accessed(v)
    assert [w.ref() for w in recording.watched_variables()] == [v.ref()]


# ---- tf.Variable without __init__.


def test_variable_subclass_skipping_init():
  variables = _wall("variables")

  class Held(variables.ResourcelessVariable):

    def __init__(self, value):  # pylint: disable=super-init-not-called
      self.held = tf.constant(value)

    dtype = property(lambda self: self.held.dtype)
    shape = property(lambda self: self.held.shape)
    trainable = property(lambda self: True)
    name = property(lambda self: "held:0")

  tf.register_tensor_conversion_function(Held, lambda v, *a, **k: v.held)

  def refuse(next_creator, **kwargs):
    raise AssertionError("a subclass went through the variable creators")

  with _behaves("a tf.Variable subclass that skips tf.Variable.__init__"):
    with tf.variable_creator_scope(refuse):
      held = Held(2.0)
    assert isinstance(held, tf.Variable)
    assert float(tf.convert_to_tensor(held) * 2) == 4.0
    module = tf.Module()
    module.held = held
    assert [id(v) for v in module.variables] == [id(held)]


# ---- tf.Module and tf.function.


def test_module_flatten():
  _requires(tf.Module, "_flatten", ("recursive", "predicate"),
            "tf.Module._flatten")
  modules = _wall("modules")
  outer = tf.Module()
  outer.inner = tf.Module()
  outer.inner.v = tf.Variable(1.0)
  outer.generator = tf.random.Generator.from_seed(1)
  with _behaves("tf.Module._flatten"):
    found = modules.flatten(
        outer, lambda x: isinstance(x, (tf.Variable, tf.random.Generator)))
    assert {id(x) for x in found} == {id(outer.inner.v),
                                      id(outer.generator)}


def test_module_name_scope_and_name():
  modules = _wall("modules")
  with _behaves("tf.Module's _name_scope and _name"):
    module = tf.Module(name="wall_test")
    assert modules.name_scope_name(module) == "wall_test/"
    assert modules.given_name(module) == "wall_test"


def test_module_ignored_properties():
  ignored = _requires(tf.Module, "_TF_MODULE_IGNORED_PROPERTIES", (),
                      "tf.Module._TF_MODULE_IGNORED_PROPERTIES")
  assert isinstance(ignored, frozenset)
  modules = _wall("modules")

  class Quiet(tf.Module):
    _TF_MODULE_IGNORED_PROPERTIES = modules.ignored_properties("_hidden")

  quiet = Quiet()
  quiet._hidden = tf.Variable(1.0)  # pylint: disable=protected-access
  with _behaves("tf.Module._TF_MODULE_IGNORED_PROPERTIES"):
    assert not quiet.variables


def test_function_decorate():
  function_type = type(tf.function(lambda: None))
  _requires(function_type, "_decorate", ("decorator",),
            "tf.function's Function._decorate")
  modules = _wall("modules")
  doubled = tf.function(lambda x: x + 1)
  with _behaves("Function._decorate"):
    modules.decorate(doubled, lambda fn: lambda x: fn(x) * 10)
    assert int(doubled(tf.constant(1))) == 20


# ---- tf.random.Generator's hooks.


def test_generator_hooks():
  random = _wall("random")
  for name, params in random.GENERATOR_HOOKS.items():
    _requires(tf.random.Generator, name, params,
              f"tf.random.Generator.{name}")
  from sonnet_like.core import generator  # pylint: disable=g-import-not-at-top
  with _behaves("tf.random.Generator's private draws"):
    for draw in ("uniform", "normal", "truncated_normal"):
      real = getattr(tf.random.Generator.from_seed(3), draw)([4])
      ours = getattr(generator.Generator.from_seed(3), draw)([4])
      np.testing.assert_array_equal(real.numpy(), ours.numpy())
    key = random.preprocess_key(tf.random.Generator.from_seed(3),
                                tf.constant([5], tf.uint64))
    assert key.dtype == tf.uint64


# ---- Checkpoints.


def test_trackable_object_graph_proto(tmp_path):
  _private("tensorflow.core.protobuf.trackable_object_graph_pb2")
  checkpoint_wall = _wall("checkpoint")
  prefix = tf.train.Checkpoint(v=tf.Variable(1.0)).write(str(tmp_path / "c"))
  with _behaves("trackable_object_graph_pb2.TrackableObjectGraph"):
    graph = checkpoint_wall.TrackableObjectGraph()
    graph.ParseFromString(tf.train.load_checkpoint(prefix).get_tensor(
        "_CHECKPOINTABLE_OBJECT_GRAPH"))
    assert "v" in [c.local_name for c in graph.nodes[0].children]


def test_trackable_serialize_to_tensors():
  _requires(tf.__internal__.tracking.Trackable, "_serialize_to_tensors", (),
            "tf.__internal__.tracking.Trackable._serialize_to_tensors")
  checkpoint_wall = _wall("checkpoint")

  class State(tf.train.experimental.PythonState):

    def serialize(self):
      return ""

    def deserialize(self, string_value):
      del string_value

  with _behaves("Trackable._serialize_to_tensors"):
    assert checkpoint_wall.serializes_tensors(State)
    assert not checkpoint_wall.serializes_tensors(tf.Module)


def test_checkpoint_gather_serialized_tensors():
  checkpoint = tf.train.Checkpoint(v=tf.Variable(3.0))
  saver = _requires(checkpoint, "_saver", (), "tf.train.Checkpoint._saver")
  gather = _requires(saver, "_gather_serialized_tensors",
                     ("object_graph_tensor",),
                     "Checkpoint._saver._gather_serialized_tensors")
  gathered = gather(None)
  if not isinstance(gathered, tuple) or len(gathered) != 4:
    pytest.fail(f"{_version()} changed what Checkpoint._saver."
                "_gather_serialized_tensors returns: the wall unpacks "
                "(tensors, _, registered, _).")
  tensors = _wall("checkpoint").gather_serialized_tensors(checkpoint)
  with _behaves("Checkpoint._saver._gather_serialized_tensors"):
    assert tensors is not None and checkpoint.v in tensors


def test_save_spec_and_multi_device_saver(tmp_path):
  saveable_object = _private(
      "tensorflow.python.training.saving.saveable_object")
  _requires(saveable_object, "SaveSpec",
            (), "saveable_object.SaveSpec")
  _requires(saveable_object.SaveSpec, "__init__",
            ("tensor", "slice_spec", "name", "dtype", "device"),
            "saveable_object.SaveSpec.__init__")
  functional_saver = _private("tensorflow.python.checkpoint.functional_saver")
  _requires(functional_saver, "MultiDeviceSaver", (),
            "functional_saver.MultiDeviceSaver")
  _requires(functional_saver.MultiDeviceSaver, "__init__",
            ("serialized_tensors",), "functional_saver.MultiDeviceSaver")
  _requires(functional_saver.MultiDeviceSaver, "save", ("file_prefix",),
            "functional_saver.MultiDeviceSaver.save")
  checkpoint_wall = _wall("checkpoint")
  checkpoint = tf.train.Checkpoint(v=tf.Variable(3.0), step=tf.Variable(2))
  tensors = checkpoint_wall.gather_serialized_tensors(checkpoint)
  held = type(tensors)()
  for trackable, by_key in tensors.items():
    held[trackable] = {
        key: ({s: checkpoint_wall.read_spec(v) for s, v in value.items()}
              if isinstance(value, dict) else checkpoint_wall.read_spec(value))
        for key, value in by_key.items()}
  checkpoint.v.assign(5.0)  # After the take: not in the files.
  prefix = str(tmp_path / "ckpt-1")
  with _behaves("SaveSpec and MultiDeviceSaver.save"):
    checkpoint_wall.write_tensors(held, tf.constant(prefix))
    restored = tf.train.Checkpoint(v=tf.Variable(0.0), step=tf.Variable(0))
    restored.restore(prefix).expect_partial()
    assert float(restored.v) == 3.0 and int(restored.step) == 2


# ---- Summaries.


def test_summary_pb2_scalar_metadata():
  summary_pb2 = _private("tensorflow.core.framework.summary_pb2")
  _requires(summary_pb2, "SummaryMetadata", (), "summary_pb2.SummaryMetadata")
  with _behaves("summary_pb2.SummaryMetadata"):
    metadata = _wall("summary").scalar_metadata()
    assert metadata.plugin_data.plugin_name == "scalars"


# ---- Nothing outside the wall.

_PACKAGE = pathlib.Path(__file__).resolve().parents[2] / "sonnet_like"
# An import of TensorFlow's private modules, `tf.__internal__`, or a
# private name the wall wraps (names common enough to be our own, such as
# `_stack` or `_flatten`, only with TensorFlow's object before them).
_INTERNALS = re.compile(
    r"^\s*(from|import)\s+tensorflow\.(python|core)\b"
    r"|\b__internal__\b"
    r"|\.(_convert_function_call|_convert_while|_pfor_converter_registry"
    r"|_fallback_to_while_loop|_all_indices_partitioned|_push_per_thread_mode"
    r"|_pop_per_thread_mode|_get_default_replica_mode"
    r"|_gather_serialized_tensors|_serialize_to_tensors|_get_function"
    r"|_preprocess_key|_TF_MODULE_IGNORED_PROPERTIES|pfor_converter"
    r"|loop_len_vector|all_indices_partitioned)\b"
    r"|\bpfor\._stack\b|\bcontext\(\)\._rng\b|\._saver\._"
    r"|\btf\.Module\._\w+|\btf\.random\.Generator\._\w+"
    r"|[\"'](_saver|_gather_serialized_tensors|_serialize_to_tensors|_rng"
    r"|_name|pfor_converter)[\"']"
    r"|\b(ag_ctx|errors_impl|summary_pb2|trackable_object_graph_pb2"
    r"|functional_saver|saveable_object|distribute_lib|control_flow_util)\.",
    re.MULTILINE)


def _code(source: str) -> str:
  """`source` without its docstrings and comments (the wall's names may
  be mentioned there)."""
  source = re.sub(r'"""[\s\S]*?"""', '""', source)
  return re.sub(r"#.*", "", source)


def test_no_internals_outside_the_wall():
  found = []
  for path in sorted(_PACKAGE.rglob("*.py")):
    relative = path.relative_to(_PACKAGE.parent).as_posix()
    if relative.startswith(_WALL + "/"):
      continue
    for match in _INTERNALS.finditer(_code(path.read_text())):
      found.append(f"{relative}: {match.group(0).strip()}")
  assert not found, (
      "TensorFlow internals outside the wall (move them into "
      f"{_WALL}/, with a test here):\n  " + "\n  ".join(found))


def test_the_scan_finds_an_internal():
  assert _INTERNALS.search(_code(
      "from tensorflow.python.ops.parallel_for import pfor\n"))
  assert _INTERNALS.search(_code("x = pfor._convert_while(y)\n"))
  assert _INTERNALS.search(_code("getattr(c, '_rng', None)\n"))
  assert _INTERNALS.search(_code("x = pfor._stack(t, n)\n"))
  assert not _INTERNALS.search(_code("self._stack.append(x)\n"))
  assert not _INTERNALS.search(_code('"""tensorflow.python.x"""\n# ag_ctx.\n'))
