"""Counts the calls made while a scenario's compiled call is traced.

Runs real scenarios and watches, with `sys.setprofile`, the first trace of
the function the engine compiles (`scenario.train_function`, made by
`TracedStep.compile` / `make_train_function`; `Scenario._loop` traces it
once with `get_concrete_function`). The profile is installed for the whole
run, but only the calls made while that function's Python body runs (from
the moment TensorFlow calls it, AutoGraph's rewrite included, until it
returns) are counted. No library code is changed. It prints raw counts,
and asserts nothing: it measures, it sets no bound.

The rule:

- A crossing is a Python call from a function defined in one sonnet_like
  source file into a function defined in ANOTHER sonnet_like file. A
  same-file call is one into another function of the SAME file (a nested
  function, a helper, a method of the same class); it is counted apart,
  and both are printed with their total. A function calling itself (or
  the pieces AutoGraph cuts it into) is not counted. The caller is the
  nearest sonnet_like function on the stack: TensorFlow and Keras frames
  in between (`strategy.run`, `tf.cond`, AutoGraph's `converted_call`,
  `tape.gradient`, pfor's conversion) are transparent, and calls into
  them are not counted. Returns are not counted.
- A call from sonnet_like into user code counts once, as the end of a path,
  and nothing it calls is counted: user code is what the script passes to
  the scenario (the model or networks, the loss function, the optimizer,
  PPO's environment), even where it is itself a sonnet_like class
  (`snt.nets.MLP`, `snt.optimizers.Adam`, `snt.envs.CartPole`). In a
  population the scenario's attributes hold copies of those objects (the
  templates) during the run: the copies are user code too.
- Not counted: attribute access, which is not a call in the code that
  makes it: property reads (`self.strategy`, `model.trainable_variables`),
  `__getattr__` / `__setattr__` / `__delattr__` (`optimizer.x = y`) and a
  descriptor's `__get__`, each skipped with whatever it calls (the number
  the package's own code makes is printed); `Module`'s name-scope wrapper
  (`core/base.py`), which only forwards to the method it wraps (the call
  is counted into the method); comprehensions and generator expressions,
  which are part of the function that holds them.
- AutoGraph's rewritten functions count as the functions they rewrite (same
  file, same name).
- Each (caller, callee) edge counts once per trace, in the order first
  made: a call traced twice (the two branches of a `tf.cond`, a loop body
  AutoGraph traces again, a population's member step traced for the
  vectoriser) counts once. The raw number of calls is printed too.

The trace runs on the thread that makes the first call, so `sys.setprofile`
(not `threading.setprofile`) is enough.

Configurations: (1) Supervised, float32, one replica, steps_per_call=1,
an MLP on random data, a Keras loss, `snt.optimizers.Adam`; (2) PPO on the
in-graph `snt.envs.CartPole`, float32, no normalisation, one iteration;
(3) and (4): the same with `population=2` (two members in one compiled
call).

    python benchmarks/count_crossings.py [--summary]
        [--config supervised|ppo|supervised_population|ppo_population|
                  solo|population|all]
"""

import argparse
import ast
import functools
import inspect
import os
import sys
import types
from typing import Any, Callable

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if _ROOT not in sys.path:
  sys.path.insert(0, _ROOT)

_SUPPRESSED = ("<suppressed>",)  # Inside user code or attribute access.
_ATTRIBUTE_METHODS = frozenset(
    {"__getattr__", "__getattribute__", "__setattr__", "__delattr__",
     "__get__"})
# Frames of comprehensions (functions of their own before Python 3.12):
# part of the function that holds them, not calls.
_COMPREHENSIONS = frozenset(
    {"<listcomp>", "<dictcomp>", "<setcomp>", "<genexpr>"})
_AUTOGRAPH_FILE = "__autograph_generated_file"


class _Info:
  """What the counter knows about one code object."""
  __slots__ = ("file", "label", "key", "lib", "wrapper", "prop", "user",
               "first_arg")

  def __init__(self):
    self.file = self.label = None
    self.key: tuple[str, str] = ("", "")
    self.lib = self.wrapper = self.prop = self.user = False
    self.first_arg: str | None = None


def _functions_of(cls: type) -> list[tuple[Any, bool]]:
  """(function, is_property_getter) for every Python function on `cls`."""
  found = []
  for value in vars(cls).values():
    if isinstance(value, property):
      found += [(f, True) for f in (value.fget,) if f is not None]
      found += [(f, False) for f in (value.fset, value.fdel) if f is not None]
    elif isinstance(value, functools.cached_property):
      found.append((value.func, True))
    elif isinstance(value, (staticmethod, classmethod)):
      found.append((value.__func__, False))
    elif callable(value):
      found.append((value, False))
  return found


def _codes(fn: Any) -> list[types.CodeType]:
  """The code objects behind `fn` and whatever it wraps."""
  codes, seen = [], set()
  while fn is not None and id(fn) not in seen:
    seen.add(id(fn))
    for candidate in (fn, getattr(fn, "python_function", None),
                      getattr(fn, "fn", None), getattr(fn, "__func__", None)):
      code = getattr(candidate, "__code__", None)
      if isinstance(code, types.CodeType):
        codes.append(code)
    fn = getattr(fn, "__wrapped__", None)
  return codes


def _key(code: types.CodeType) -> tuple[str, str]:
  return (code.co_filename, code.co_qualname)


class CrossingCounter:
  """Counts crossings (see the module docstring) during one traced call.

  Args:
    package: The package whose files are counted ("sonnet_like").
    users: The user's objects and functions by role ("model", "loss_fn",
      ...): a call into one (a method whose first argument is the object, or
      the function itself) is the end of a path.
    target: Returns the function whose first call is counted (a Python
      function or a `tf.function`), or None while it is not made yet.
    wrappers: Functions made by forwarding decorators (a wrapper whose
      locals hold `self` and `method`): calls into them are transparent.
    users_at_trace: Called when the counted trace starts: more user
      objects by role (a population's scenario then holds copies of the
      user's objects, its templates, which play the user's part).
  """

  def __init__(self, package: str, users: dict[str, Any],
               target: Callable[[], Any],
               wrappers: tuple[Callable[..., Any], ...] = (),
               users_at_trace: Callable[[], dict[str, Any]] | None = None):
    module = sys.modules[package]
    self.users_at_trace = users_at_trace
    self.package = package
    self.root = os.path.dirname(os.path.abspath(module.__file__))
    self.target = target
    self.users = {id(obj): (role, obj) for role, obj in users.items()}
    self._user_keys: set[tuple[str, str]] = set()
    self._user_functions: dict[tuple[str, str], str] = {}
    self._prop_keys: set[tuple[str, str]] = set()
    for role, obj in users.items():
      if isinstance(obj, (types.FunctionType, types.MethodType)):
        for code in _codes(obj):
          self._user_functions[_key(code)] = role
        continue
      for cls in type(obj).__mro__:
        for fn, getter in _functions_of(cls):
          for code in _codes(fn):
            (self._prop_keys if getter else self._user_keys).add(_key(code))
    self._wrapper_keys = {_key(c) for w in wrappers for c in _codes(w)}
    # By identity: code objects compare equal by value (name, bytecode,
    # constants, first line; not file or qualname), and AutoGraph's
    # `else_body_1` in two rewritten functions can be equal.
    self._infos: dict[int, tuple[types.CodeType, _Info]] = {}
    self._sources: dict[str, dict[str, list[str]]] = {}
    self._classes_indexed: set[str] = set()
    self._target_code: types.CodeType | None = None
    self._target_name = ""
    self._target_globals: Any = None
    self._stack: list[tuple[Any, Any]] = []
    self._gate: Any = None
    self.done = False
    self.edges: list[tuple[str, str]] = []
    self._seen: set[tuple[str, str]] = set()
    self.calls = 0
    self.same_file_edges: list[tuple[str, str]] = []
    self._same_file_seen: set[tuple[str, str]] = set()
    self.same_file_calls = 0
    self.property_reads = 0
    self.attribute_writes = 0  # And __getattr__ reads.

  # ---- Classifying code. ----

  def _index_properties(self, module_name: str) -> None:
    """Property getters of the package's classes in `module_name`."""
    if module_name in self._classes_indexed:
      return
    self._classes_indexed.add(module_name)
    module = sys.modules.get(module_name)
    for value in list(vars(module).values()) if module else ():
      if isinstance(value, type) and value.__module__ == module_name:
        for fn, getter in _functions_of(value):
          if getter:
            self._prop_keys.update(_key(c) for c in _codes(fn))

  def _qualnames(self, filename: str) -> dict[str, list[str]]:
    """name -> qualnames of every function in a source file."""
    if filename not in self._sources:
      names: dict[str, list[str]] = {}
      try:
        with open(filename, encoding="utf-8") as f:
          tree = ast.parse(f.read())
      except (OSError, SyntaxError):
        tree = None

      def visit(node, prefix):
        for child in ast.iter_child_nodes(node):
          if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
            qualname = prefix + child.name
            names.setdefault(child.name, []).append(qualname)
            visit(child, qualname + ".<locals>.")
          elif isinstance(child, ast.Lambda):
            names.setdefault("<lambda>", []).append(prefix + "<lambda>")
            visit(child, prefix + "<lambda>.<locals>.")
          elif isinstance(child, ast.ClassDef):
            visit(child, prefix + child.name + ".")
          else:
            visit(child, prefix)

      if tree is not None:
        visit(tree, "")
      self._sources[filename] = names
    return self._sources[filename]

  def _info(self, code: types.CodeType, frame: Any) -> _Info:
    found = self._infos.get(id(code))
    if found is not None:
      return found[1]
    info = _Info()
    if code.co_name in _COMPREHENSIONS:  # Transparent.
      info.key = (code.co_filename, code.co_qualname)
      self._infos[id(code)] = (code, info)
      return info
    module_name = frame.f_globals.get("__name__", "") or ""
    module = sys.modules.get(module_name)
    filename = code.co_filename
    qualname = code.co_qualname
    rewritten = _AUTOGRAPH_FILE in filename
    if rewritten:
      # AutoGraph's file holds its factories and, inside `tf__<name>`, the
      # rewrite of `<name>` with its `if_body`, `loop_body`, ...: all of it
      # is `<name>`; the factories are AutoGraph's (transparent).
      parts = qualname.split(".")
      rewrites = [i for i, part in enumerate(parts)
                  if part.startswith("tf__")]
      if rewrites:
        name = parts[rewrites[-1]][len("tf__"):]
        rest = parts[rewrites[-1] + 1:]
      elif parts[-1] == "<lambda>":
        name, rest = "<lambda>", []
      else:
        info.key = (filename, qualname)
        self._infos[id(code)] = (code, info)
        return info
    else:
      name, rest = code.co_name, []
    generated = rewritten or filename.startswith("<")
    if generated and module is not None and getattr(module, "__file__", None):
      filename = os.path.abspath(module.__file__)
      names = self._qualnames(filename)
      candidates = names.get(name, [name])
      qualname = candidates[0]
      if len(candidates) > 1 and code.co_argcount and (
          code.co_varnames[0] == "self" and "self" in frame.f_locals):
        mro = [c.__name__ for c in type(frame.f_locals["self"]).__mro__]
        for candidate in candidates:
          if candidate.split(".")[0] in mro:
            qualname = candidate
            break
      # A function nested in the rewritten one (`collect.<locals>.body`)
      # stays itself; AutoGraph's own (`if_body`) are its parent's.
      known = {q for found in names.values() for q in found}
      for end in range(len(rest), 0, -1):
        nested = ".".join([qualname] + rest[:end])
        if nested in known:
          qualname = nested
          break
    info.key = (filename, qualname)
    info.lib = (module_name == self.package or
                module_name.startswith(self.package + ".")) and (
                    filename.startswith(self.root + os.sep))
    if info.lib:
      self._index_properties(module_name)
      info.file = os.path.relpath(filename, self.root)
      info.label = f"{info.file}:{qualname}"
    info.wrapper = info.key in self._wrapper_keys
    info.prop = info.key in self._prop_keys
    info.user = info.key in self._user_keys or (
        info.key in self._user_functions)
    if code.co_argcount:
      info.first_arg = code.co_varnames[0]
    self._infos[id(code)] = (code, info)
    return info

  # ---- The profile. ----

  def _is_target(self, frame: Any) -> bool:
    if self._target_code is None:
      fn = self.target()
      if fn is None:
        return False
      fn = getattr(fn, "python_function", fn)
      self._target_code = fn.__code__
      self._target_name = "tf__" + fn.__name__
      self._target_globals = fn.__globals__
    code = frame.f_code
    return code is self._target_code or (
        code.co_name == self._target_name and
        frame.f_globals is self._target_globals)

  def _record(self, caller: Any, callee: str) -> None:
    self.calls += 1
    edge = (caller[1], callee)
    if edge not in self._seen:
      self._seen.add(edge)
      self.edges.append(edge)

  def _record_same_file(self, caller: Any, callee: str) -> None:
    self.same_file_calls += 1
    edge = (caller[1], callee)
    if edge not in self._same_file_seen:
      self._same_file_seen.add(edge)
      self.same_file_edges.append(edge)

  def _enter(self, frame: Any) -> None:
    """The call of the target: its caller is the nearest package frame."""
    self._gate = frame
    if self.users_at_trace is not None:
      for role, obj in self.users_at_trace().items():
        self.users.setdefault(id(obj), (role, obj))
    parent: Any = None
    outer = frame.f_back
    while outer is not None:
      info = self._info(outer.f_code, outer)
      if info.lib and not info.wrapper:
        parent = (info.file, info.label)
        break
      outer = outer.f_back
    self._stack = [(None, parent)]
    self._call(frame)

  def _written_in_package(self, frame: Any) -> bool:
    """Whether the code that made this call is the package's own."""
    caller = frame.f_back
    while caller is not None:
      info = self._info(caller.f_code, caller)
      if not (info.wrapper or caller.f_code.co_name in _COMPREHENSIONS):
        return info.lib
      caller = caller.f_back
    return False

  def _call(self, frame: Any) -> None:
    parent = self._stack[-1][1]
    if parent is _SUPPRESSED:
      self._stack.append((frame, _SUPPRESSED))
      return
    code = frame.f_code
    info = self._info(code, frame)
    owner = None
    if info.wrapper:
      local = frame.f_locals
      owner, method = local.get("self"), local.get("method")
      inner = getattr(inspect.unwrap(method), "__code__", None) if (
          method is not None) else None
      if inner is not None:
        info = self._info(inner, frame)
    elif info.user and info.first_arg is not None:
      owner = frame.f_locals.get(info.first_arg)
    role = self.users.get(id(owner)) if owner is not None else None
    attribute = info.key[1].rsplit(".", 1)[-1] in _ATTRIBUTE_METHODS
    if info.prop or attribute:
      if parent is not None and self._written_in_package(frame):
        if info.prop:
          self.property_reads += 1
        else:
          self.attribute_writes += 1
      self._stack.append((frame, _SUPPRESSED))
      return
    if role is None and info.key in self._user_functions:
      role = (self._user_functions[info.key], None)
    if role is not None:
      name, obj = role
      what = (f"{type(obj).__name__}.{info.key[1].split('.')[-1]}"
              if obj is not None else info.key[1])
      if parent is not None:
        self._record(parent, f"user {name} ({what})")
      self._stack.append((frame, _SUPPRESSED))
      return
    if info.lib and not info.wrapper:
      if parent is not None and parent[0] != info.file:
        self._record(parent, info.label)
      elif parent is not None and parent[1] != info.label:
        self._record_same_file(parent, info.label)
      self._stack.append((frame, (info.file, info.label)))
      return
    self._stack.append((frame, parent))  # Transparent.

  def profile(self, frame: Any, event: str, arg: Any) -> None:
    """The `sys.setprofile` function."""
    del arg
    if self.done:
      return
    if event == "call":
      if self._gate is None:
        if self._is_target(frame):
          self._enter(frame)
        return
      self._call(frame)
    elif event == "return" and self._gate is not None:
      if frame is self._gate:
        self.done = True
        self._stack = []
        return
      if len(self._stack) > 1 and self._stack[-1][0] is frame:
        self._stack.pop()

  def run(self, fn: Callable[[], Any]) -> Any:
    """Runs `fn()` with the profile installed."""
    previous = sys.getprofile()
    sys.setprofile(self.profile)
    try:
      return fn()
    finally:
      sys.setprofile(previous)


def _wrappers() -> tuple[Callable[..., Any], ...]:
  """The name-scope wrappers of `core/base.py`, made the way it makes them
  (whichever of these makers exist)."""
  from sonnet_like.core import base  # pylint: disable=g-import-not-at-top
  made = []
  for maker in ("with_name_scope", "_scope_inside_trace"):
    if hasattr(base, maker):
      made.append(getattr(base, maker)(lambda self: None))
  return tuple(made)


def count(scenario: Any, users: dict[str, Any],
          call: Callable[[], Any],
          attributes: dict[str, str] | None = None) -> CrossingCounter:
  """Runs `call()` (which runs `scenario`) and counts its compiled call's
  first trace. `attributes`: role -> the scenario attribute that holds
  that user object during the run (a population's template)."""
  attributes = attributes or {}

  def at_trace() -> dict[str, Any]:
    return {role: getattr(scenario, name)
            for role, name in attributes.items() if hasattr(scenario, name)}

  counter = CrossingCounter(
      "sonnet_like", users,
      lambda: scenario.__dict__.get("train_function"), _wrappers(),
      users_at_trace=at_trace)
  counter.run(call)
  if not counter.done:
    raise RuntimeError("The compiled call was never traced.")
  return counter


def supervised(population: Any = None) -> CrossingCounter:
  import keras  # pylint: disable=g-import-not-at-top
  import numpy as np  # pylint: disable=g-import-not-at-top
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  import sonnet_like as snt  # pylint: disable=g-import-not-at-top
  tf.random.set_seed(0)
  rng = np.random.default_rng(0)
  x = rng.normal(size=(64, 8)).astype(np.float32)
  y = rng.integers(0, 3, size=(64,)).astype(np.int32)
  model = snt.nets.MLP([16, 3], name="mlp")
  loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
  optimizer = snt.optimizers.Adam(1e-3)
  scenario = snt.scenarios.Supervised(num_steps=1, batch_size=32,
                                      steps_per_call=1, progress=False,
                                      tensorboard=False,
                                      population=population)
  return count(scenario, {"model": model, "loss_fn": loss_fn,
                          "optimizer": optimizer},
               lambda: scenario(model, optimizer, loss_fn, (x, y)),
               {"model": "model", "optimizer": "optimizer"})


def ppo(population: Any = None) -> CrossingCounter:
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  import sonnet_like as snt  # pylint: disable=g-import-not-at-top
  tf.random.set_seed(0)
  num_envs, length = 4, 16
  env = snt.envs.CartPole(num_envs, seed=0)
  actor = snt.nets.MLP([16, 2], activation=tf.tanh, name="actor")
  critic = snt.nets.MLP([16, 1], activation=tf.tanh, name="critic")
  optimizer = snt.optimizers.Adam(3e-4)
  scenario = snt.scenarios.PPO(num_envs * length, num_envs=num_envs,
                               rollout_length=length, num_epochs=2,
                               num_minibatches=2, progress=False,
                               tensorboard=False, population=population)
  return count(scenario, {"actor": actor, "critic": critic,
                          "optimizer": optimizer, "env": env},
               lambda: scenario(actor, critic, optimizer, env),
               {"actor": "actor", "critic": "critic",
                "optimizer": "optimizer", "env": "env"})


_SUPERVISED = ("Supervised, float32, one replica, steps_per_call=1, MLP, "
               "Keras loss, snt.optimizers.Adam")
_PPO = "PPO, in-graph CartPole, float32, no normalisation, one iteration"

CONFIGS = {
    "supervised": (_SUPERVISED, supervised),
    "ppo": (_PPO, ppo),
    "supervised_population": (_SUPERVISED + ", population=2",
                              lambda: supervised(population=2)),
    "ppo_population": (_PPO + ", population=2", lambda: ppo(population=2)),
}


def summary(counter: CrossingCounter) -> str:
  """The counts of one configuration, on one line."""
  cross, same = len(counter.edges), len(counter.same_file_edges)
  return (f"{cross} crossings + {same} same-file = {cross + same} edges "
          f"(calls: {counter.calls} + {counter.same_file_calls} = "
          f"{counter.calls + counter.same_file_calls}; not counted: "
          f"{counter.property_reads} property reads, "
          f"{counter.attribute_writes} __setattr__/__delattr__/__getattr__/"
          f"__get__)")


def report(title: str, counter: CrossingCounter, edges: bool = True) -> str:
  lines = [f"{title}: {summary(counter)}"]
  if edges:
    lines.append("  into another file (caller -> callee):")
    lines += [f"  {i:3d}. {caller} -> {callee}"
              for i, (caller, callee) in enumerate(counter.edges, 1)]
    lines.append("  within one file:")
    lines += [f"  {i:3d}. {caller} -> {callee}"
              for i, (caller, callee) in enumerate(counter.same_file_edges,
                                                   1)]
  return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
  parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  parser.add_argument("--config", default="all",
                      choices=[*CONFIGS, "solo", "population", "all"])
  parser.add_argument("--summary", action="store_true",
                      help="print the counts only, not the edges")
  args = parser.parse_args(argv)
  groups = {"all": list(CONFIGS),
            "solo": ["supervised", "ppo"],
            "population": ["supervised_population", "ppo_population"]}
  names = groups.get(args.config, [args.config])
  results = []
  for name in names:
    title, make = CONFIGS[name]
    counter = make()
    results.append((title, counter))
    print(report(title, counter, edges=not args.summary), flush=True)
  if len(results) > 1:
    print("\nSummary:")
    for title, counter in results:
      print(f"  {title}: {summary(counter)}")


if __name__ == "__main__":
  main()
