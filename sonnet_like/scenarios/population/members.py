"""A population's state: every member's values stacked on a member axis.

`Members.build(scenario)` builds what the scenario trains once per member:
each member on its own copy of the modules and optimizers (made before any
variable exists, built under the member's seed, exactly as a solo run with
that seed builds them), then the scenario's own objects (the templates)
once more, holding `MemberVariable`s. The members' values are stacked into
one real variable per template variable ([members, ...shape]); that is
what trains and what the checkpoint holds. While one member's step is
traced (`step.py`), the templates hold that member's slices; the copies
get the stacked values back when a member is asked for (`member(i)`). A
replay buffer's copies are stacked as they are built and then hold no rows
until then (`row_stacks.py`).
"""

import contextlib
import copy
from typing import Any, Iterable, Iterator, Sequence

import tensorflow as tf

from sonnet_like.core import utils
from sonnet_like.core.tf_private import eager
from sonnet_like.core.tf_private import modules as tf_modules
from sonnet_like.envs import gym_adapter
from sonnet_like.functional import tensor_variable
from sonnet_like.scenarios import seed as seed_lib
from sonnet_like.scenarios.population import replicas
from sonnet_like.scenarios.population import row_stacks
from sonnet_like.scenarios.population import rows
from sonnet_like.scenarios.population import settings as settings_lib
from sonnet_like.scenarios.updates import kinds

BUILT_ERROR = (
    "{owner}: a population builds every member's variables from its own "
    "seed, but {what} already has variables ({names}). Pass modules and "
    "optimizers whose variables the run creates (build nothing before the "
    "call).")

SHAPE_ERROR = (
    "{owner}: member {member} built {count} variables where the first "
    "member built {expected}; a population needs build() to make the same "
    "variables for every member (it builds the objects that trackables() "
    "returns, swapped into the scenario's attributes).")


TEMPLATE_ERROR = (
    "{owner}: {name} was {verb} during a population's run, outside its "
    "compiled step. The scenario's modules (and the ones you passed) hold "
    "no member's values then: read member i's with scenario.member(i) (in "
    "a hook too) and judge members with keep_best= (the guide 'Many seeds "
    "at once').")


class MemberVariable(tensor_variable.TensorVariable):
  """A `TensorVariable` that gradient tapes watch like a trainable variable
  (`tape.gradient(loss, model.trainable_variables)` works as in a solo
  step): what the templates hold while a member's step is traced.

  Once the population is built (`seal`), reading or writing one eagerly
  is an error: between steps it holds no member's value.
  """

  _should_act_as_resource_variable = True  # Tapes differentiate `handle`.
  sealed_by: str | None = None  # The scenario's name, once built.

  def seal(self, owner: str) -> None:
    self.sealed_by = owner

  def _check_traced(self, verb: str) -> None:
    if self.sealed_by is not None and tf.executing_eagerly():
      raise ValueError(TEMPLATE_ERROR.format(
          owner=self.sealed_by, name=self.name, verb=verb))

  def _write(self, value, combine, read_value=True):
    self._check_traced("written")
    return super()._write(value, combine, read_value)

  @property
  def handle(self) -> tf.Tensor:
    return self.tensor_value

  @property
  def graph(self):
    value = self.tensor_value
    if value is None or not hasattr(value, "graph"):  # An eager value.
      raise AttributeError("graph")
    return value.graph

  def _read(self) -> tf.Tensor:
    self._check_traced("read")
    if self.tensor_value is None:  # `rows.kept`.
      raise ValueError(
          f"population: {self.name} is read by rows in a member's step "
          "(`population.rows.gather`), not whole.")
    value = super()._read()
    if self.trainable:
      eager.variable_accessed(self)
    return value


def _to_tensor(variable: MemberVariable, dtype=None, name=None,
               as_ref=False) -> tf.Tensor:
  variable._read()  # pylint: disable=protected-access
  return tensor_variable._to_tensor(  # pylint: disable=protected-access
      variable, dtype, name, as_ref)


# Before TensorVariable's (priority 100), which does not tell the tapes.
tf.register_tensor_conversion_function(MemberVariable, _to_tensor,
                                       priority=99)


@contextlib.contextmanager
def member_variables() -> Iterator[list[MemberVariable]]:
  """Inside the block `tf.Variable(...)` makes `MemberVariable`s; yields
  the list of those made, in order."""
  made = []
  with tf.variable_creator_scope(tensor_variable.creator_of(MemberVariable,
                                                            made)):
    yield made


@contextlib.contextmanager
def swapped(scenario: Any, objects: dict[int, Any],
            stand_ins: Sequence[tuple[tf.Module, tf.Module]] = ()
            ) -> Iterator[None]:
  """The scenario's attributes holding one of `objects`' keys (by id) hold
  its value inside the block. Each module of `stand_ins` (the user's,
  which a loss or a step may close over) shares the state of its
  replacement: it is that member's, or the template, in the block."""
  saved = {name: value for name, value in vars(scenario).items()
           if id(value) in objects}
  for name, value in saved.items():
    setattr(scenario, name, objects[id(value)])
  states = [(module, vars(module)) for module, _ in stand_ins]
  for module, replacement in stand_ins:  # Not tf.Module's tracking setattr.
    object.__setattr__(module, "__dict__", vars(replacement))
  try:
    yield
  finally:
    for module, state in reversed(states):
      object.__setattr__(module, "__dict__", state)
    for name, value in saved.items():
      setattr(scenario, name, value)


def _stand_ins(originals: Iterable[Any], memo: dict[int, Any]
               ) -> list[tuple[tf.Module, tf.Module]]:
  """Each module among `originals` and their submodules, with its copy in
  a `copy.deepcopy` `memo`."""
  pairs = {}
  for value in originals:
    if isinstance(value, tf.Module):
      for module in [value, *value.submodules]:
        if id(module) in memo and memo[id(module)] is not module:
          pairs[id(module)] = (module, memo[id(module)])
  return list(pairs.values())


@contextlib.contextmanager
def attributes_set(assignments: Iterable[tuple[Any, str, Any]]
                   ) -> Iterator[None]:
  """Inside the block each `(owner, name, value)` is set (a member's
  settings); the attributes hold what they held before after it."""
  saved = []
  for owner, name, value in assignments:
    saved.append((owner, name, getattr(owner, name)))
    setattr(owner, name, value)
  try:
    yield
  finally:
    for owner, name, value in reversed(saved):
      setattr(owner, name, value)


@contextlib.contextmanager
def seeded_as(scenario: Any, seed: int) -> Iterator[None]:
  """Inside the block the scenario's `seed` is `seed` (a member's: its
  build resets environments with it, as a solo run with that seed does)."""
  saved = scenario.seed
  scenario.seed = seed
  try:
    yield
  finally:
    scenario.seed = saved


def _variables_of(value: Any) -> list[tf.Variable]:
  if isinstance(value, tf.Module):
    # tf.Module's own walk (a Sonnet module without variables refuses
    # `.variables`), finding generators too (an environment's: their
    # state is not a Module's variable).
    found = tf_modules.flatten(
        value, lambda x: isinstance(x, (tf.Variable, tf.random.Generator)))
    return [x.state if isinstance(x, tf.random.Generator) else x
            for x in found]
  if isinstance(value, tf.Variable):
    return [value]
  if isinstance(value, tf.random.Generator):
    return [value.state]
  return []


def _built(scenario: Any, before: dict[str, Any]) -> dict[str, Any]:
  """The objects with variables that build() attached to the scenario (not
  there `before`, or replaced)."""
  return {name: value for name, value in vars(scenario).items()
          if (name not in before or before[name] is not value)
          and _variables_of(value)}


def _with_built(variables: list[Any], built: dict[str, Any]) -> list[Any]:
  """`variables`, then those of the `built` objects not among them (made
  without `tf.Variable(...)`: a deep copy's)."""
  seen = {v.ref() for v in variables}
  for value in built.values():
    for variable in _variables_of(value):
      if variable.ref() not in seen:
        seen.add(variable.ref())
        variables.append(variable)
  return variables


def _check(owner: str, scenario: Any, objects: dict[str, Any]) -> None:
  models = {id(m) for m in scenario.models().values()}
  for name, value in objects.items():
    made = _variables_of(value)
    if made and id(value) in models:
      raise ValueError(BUILT_ERROR.format(
          owner=owner, what=f"{name!r} ({type(value).__name__})",
          names=", ".join(v.name for v in made[:3])))
    if kinds.is_keras(value):
      raise ValueError(
          f"{owner}: a population needs sonnet_like optimizers (their "
          f"slots stack on the member axis); {name!r} is a Keras optimizer "
          f"({type(value).__name__}). Use e.g. snt.optimizers.Adam.")


def _as_member_variable(variable: tf.Variable) -> MemberVariable:
  made = MemberVariable(variable.read_value(), trainable=variable.trainable,
                        name=variable.name.split(":")[0])
  return rows.by_rows(made) if rows.is_by_rows(variable) else made


class _Untracked:
  """A plain holder: what `tf.Module` must not track (and checkpoint)."""

  def __init__(self, templates, template_variables, template_stand_ins,
               copies, copy_variables, stand_ins, stacks):
    self.templates, self.template_variables = templates, template_variables
    self.template_stand_ins = template_stand_ins
    self.copies, self.copy_variables = copies, copy_variables
    self.row_stacks = stacks  # The storage by rows, already stacked.
    self.stand_ins = stand_ins  # Each member's, as `swapped` takes them.
    # What the scenario's attributes hold after a run (`single.refuse_in`),
    # by the id of the scenario's own object.
    self.after_run: dict[int, Any] = {}
    # What the attributes that build() sets held before it (None): a new
    # run of the scenario starts from them.
    self.before_build: dict[str, Any] = {}
    # The members' own copies of the one gymnasium environment of the
    # state, in member order (`python_envs.py`), or None.
    self.gym_envs: list[Any] | None = None


class Members(tf.Module):
  """Every member's values, stacked; the templates; each member's copy.

  The scenario's own objects (what `trackables()` returns) are left as
  they were: during the run its attributes hold the templates (copies
  holding `MemberVariable`s), and `member(i)` gives member i's copies.

  Attributes:
    population: Who the members are.
    templates: The templates' variables, in the order `build()` made them
      (after those the objects had before).
    stacked: One variable per template, `[members, *template.shape]`.
    alive: Whether each member still trains (a member whose update is not
      finite stops, with `on_nonfinite="raise"`; the others go on).
  """

  def __init__(self, population: settings_lib.Population,
               parts: _Untracked):
    super().__init__(name="population")
    self.population = population
    # Not in the checkpoint: the templates hold no state, the copies are
    # derived from the stacked values.
    self._parts = parts
    copy_variables = parts.copy_variables
    by_rows = parts.row_stacks.stacked  # Already stacked (`row_stacks`).
    self.stacked = [
        by_rows[j] if j in by_rows else tf.Variable(
            tf.stack([made[j].read_value() for made in copy_variables]),
            trainable=False,
            name=template.name.split(":")[0].replace("/", "_"))
        for j, template in enumerate(parts.template_variables)]
    self.alive = tf.Variable(tf.ones([population.size], tf.bool),
                             trainable=False, name="alive")
    self._speaking = 0  # `member_in` blocks entered.

  @property
  def templates(self) -> list[Any]:
    return self._parts.template_variables

  @classmethod
  def build(cls, scenario: Any, population: settings_lib.Population
            ) -> "Members":
    """Builds each member from its seed, then the templates."""
    owner = type(scenario).__name__
    # None: an object build() makes (a DQN's target network, a replay
    # buffer); each member's build makes its own (`_built`).
    originals = {name: value for name, value in scenario.trackables().items()
                 if value is not None}
    _check(owner, scenario, originals)
    by_id = {id(v): v for v in originals.values()}
    # The engine's generator too: each member draws from its own stream,
    # the stream of a solo run with its seed (`core.generator`: its state
    # may be a MemberVariable).
    rng = getattr(scenario, "rng", None)
    if rng is not None:
      by_id[id(rng)] = rng
    # The loss scale too: a member's overflows halve its own scale (the
    # updaters' reference stands in for the member's, `swapped`).
    loss_scale = scenario.traced_step.loss_scale
    if loss_scale is not None:
      by_id[id(loss_scale)] = loss_scale
    existing = list({v.ref(): v for value in by_id.values()
                     for v in _variables_of(value)}.values())
    copies, copy_variables, built, stand_ins = [], [], [], []
    before = dict(vars(scenario))
    # On several replicas a generator made in the strategy's scope refers
    # to it: the copies keep it, the templates none (a member's step runs
    # as on one device, `replicas.one_device`).
    strategy = scenario.strategy
    several = strategy.num_replicas_in_sync > 1
    stacks = row_stacks.RowStacks(owner, population.size, keep=cls.VIEW)
    for i, seed in enumerate(population.seeds):
      memo = {id(strategy): strategy} if several else {}
      made_copies = copy.deepcopy(by_id, memo)  # Shared stays shared.
      if rng is not None:
        utils.reseed(made_copies[id(rng)], seed)
      settings = dict(population.group(i))
      if "learning_rate" in settings:
        for value in made_copies.values():
          if kinds.is_optimizer(value):
            value.learning_rate = settings["learning_rate"]
      stand_ins.append(_stand_ins(by_id.values(), memo))
      with seed_lib.global_seed(seed), \
          tensor_variable.new_variables() as made, \
          swapped(scenario, made_copies, stand_ins[-1]), \
          seeded_as(scenario, seed):
        scenario.build()
      built.append(_built(scenario, before))
      copies.append(made_copies)
      copy_variables.append(_with_built([memo[id(v)] for v in existing] + made,
                                        built[-1]))
      stacks.take(i, copy_variables[-1])
      # The copies' optimizers train not: their updaters go.
      scenario.traced_step.keep_updaters(by_id)
    memo = {id(strategy): None} if several else {}
    memo.update((id(v), _as_member_variable(v)) for v in existing)
    # A gymnasium environment's template is the scenario's own: it is only
    # traced (the members step their copies), so no environments or worker
    # processes are made for it.
    memo.update((key, value) for key, value in by_id.items()
                if isinstance(value, gym_adapter.GymEnvironment))
    templates = copy.deepcopy(by_id, memo)
    template_stand_ins = _stand_ins(by_id.values(), memo)
    # As a member's step is traced: the optimizers' first (zero) updates
    # change the templates' tensors, which no strategy mirrors.
    with seed_lib.global_seed(population.seeds[0]), \
        member_variables() as made, swapped(
            scenario, templates, template_stand_ins), (
            replicas.one_device() if several else contextlib.nullcontext()):
      scenario.build()
    template_built = _built(scenario, before)
    template_variables = _with_built([memo[id(v)] for v in existing] + made,
                                     template_built)
    for name, template in template_built.items():  # Swapped as the others.
      templates[id(template)] = template
      for objects, member_built in zip(copies, built):
        objects[id(template)] = member_built[name]
    for template in template_variables:
      if isinstance(template, MemberVariable):
        template.seal(owner)
    for i, variables in enumerate(copy_variables):
      if [v.shape for v in variables] != [t.shape for t in template_variables]:
        raise ValueError(SHAPE_ERROR.format(
            owner=owner, member=i, count=len(variables),
            expected=len(template_variables)))
    parts = _Untracked(templates, template_variables, template_stand_ins,
                       copies, copy_variables, stand_ins, stacks)
    parts.before_build = {name: before.get(name) for name in template_built}
    gym_keys = [key for key, value in by_id.items()
                if isinstance(value, gym_adapter.GymEnvironment)]
    if len(gym_keys) == 1:  # Each member steps its own (`python_envs`).
      parts.gym_envs = [objects[gym_keys[0]] for objects in copies]
    return cls(population, parts)

  def templates_in(self, scenario: Any) -> contextlib.AbstractContextManager:
    """The block in which the scenario's attributes hold the templates."""
    return swapped(scenario, self._parts.templates,
                   self._parts.template_stand_ins)

  @contextlib.contextmanager
  def member_in(self, scenario: Any, index: int) -> Iterator[None]:
    """The block in which the scenario answers as member `index`: its
    attributes (the templates during a run, its own objects or their
    stand-ins after it) hold member 0's objects, which hold member
    `index`'s values (one set of variables serves every member, so what
    a scenario compiled on them once, an evaluation say, reads each
    member's own values); its `seed` and swept settings are the
    member's."""
    self._load(self.VIEW, index)
    self._speaking += 1
    try:
      with swapped(scenario, self._objects(self.VIEW),
                   self._parts.stand_ins[self.VIEW]), \
          seeded_as(scenario, self.population.seeds[index]), \
          self._settings_of(scenario, index):
        yield
    finally:
      self._speaking -= 1
      self._load(self.VIEW, self.VIEW)

  @contextlib.contextmanager
  def _settings_of(self, scenario: Any, index: int) -> Iterator[None]:
    """Member `index`'s swept settings in the block: a learning rate on the
    view's optimizers, any other setting on the scenario."""
    optimizers = [o for o in self._parts.copies[self.VIEW].values()
                  if kinds.is_optimizer(o)]
    with attributes_set(
        (owner, name, value) for name, value in self.population.group(index)
        for owner in (optimizers if name == "learning_rate" else [scenario])):
      yield

  @property
  def gym_envs(self) -> list[Any] | None:
    """Each member's own gymnasium environment (the state's one), or None."""
    return self._parts.gym_envs

  @property
  def speaking(self) -> bool:
    """Whether the scenario answers as one member now (`member_in`)."""
    return self._speaking > 0

  @contextlib.contextmanager
  def holding(self, values: list[tf.Tensor]) -> Iterator[None]:
    """The templates hold `values` (one member's) inside the block and
    what they held before after it (no tensor of the block leaks out)."""
    saved = [(t.tensor_value, t.initial_tensor_value)
             for t in self._parts.template_variables]
    for template, value in zip(self._parts.template_variables, values):
      template.tensor_value = value
    try:
      yield
    finally:
      for template, (value, initial) in zip(self._parts.template_variables,
                                            saved):
        template.tensor_value, template.initial_tensor_value = value, initial

  def stacked_of(self, variables: list[Any]) -> list[tf.Variable]:
    """The stacked variable of each of `variables` (templates')."""
    index = {t.ref(): j for j, t in enumerate(self._parts.template_variables)}
    return [self.stacked[index[v.ref()]] for v in variables]

  def stacked_in(self, original: Any, name: str) -> tf.Variable:
    """The stacked values of variable attribute `name` of `original`, an
    object the members were copied from (e.g. the loss scale)."""
    template = self._parts.templates[id(original)]
    return self.stacked_of([getattr(template, name)])[0]

  def refresh(self, stacked: list[tf.Variable] | None = None) -> None:
    """Every member's copies take the `stacked` values now (by default
    all): a copy a user holds follows a swap (`ema_weights()`). A copy
    that holds no rows (`row_stacks`) stays so: `member(i)` fills it."""
    index = {v.ref(): j for j, v in enumerate(self.stacked)}
    for variable in self.stacked if stacked is None else stacked:
      j = index[variable.ref()]
      template = self._parts.template_variables[j]
      for member, copied in enumerate(self._parts.copy_variables):
        if not self._parts.row_stacks.released(copied[j]):  # Else at load.
          copied[j].assign(_slice_of(variable, member, template))

  def member(self, index: int) -> dict[int, Any]:
    """Member `index`'s objects, by the id of the scenario's own (and of
    the templates), holding its values now (real variables: evaluate,
    export or keep training them)."""
    self.check_index(index)
    self._load(index, index)
    return self._objects(index)

  def check_index(self, index: int) -> None:
    """Refuses an `index` that names no member."""
    if not 0 <= index < self.population.size:
      raise IndexError(f"population: member {index} of "
                       f"{self.population.size} (0 to "
                       f"{self.population.size - 1}).")

  # Member 0's objects answer for any member in `member_in`.
  VIEW = 0

  def _load(self, copy_index: int, member: int) -> None:
    """Member `copy_index`'s copies take member `member`'s values."""
    stacks = self._parts.row_stacks
    for variable, stacked, template in zip(
        self._parts.copy_variables[copy_index], self.stacked,
        self._parts.template_variables):
      value = _slice_of(stacked, member, template)
      if stacks.released(variable):
        stacks.refill(variable, value)
      else:
        variable.assign(value)

  def _objects(self, copy_index: int) -> dict[int, Any]:
    """Member `copy_index`'s objects, keyed by the id of the scenario's
    own, of the templates and of what stands in after the run."""
    copies = self._parts.copies[copy_index]
    objects = dict(copies)
    for others in (self._parts.templates, self._parts.after_run):
      objects.update((id(others[key]), value) for key, value in copies.items()
                     if key in others)
    return objects


def _slice_of(stacked: tf.Variable, member: int, template: Any
              ) -> tf.Tensor:
  """Member `member`'s values of a stacked variable (of `template`). A
  variable read by rows (a replay buffer) is in TensorFlow's copy-on-read
  mode, where every whole read copies it (1.5 GB for ten SAC members'
  1M-row buffers: `as_member` took 4 s), so its slice is gathered alone.
  Any other is read whole, which costs nothing: gathering from it would
  put it in that mode, and every step's read of it would copy it."""
  if rows.is_by_rows(template):
    return tf.gather(stacked, member)  # A distributed one: read whole.
  return stacked[member]
