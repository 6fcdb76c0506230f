"""Tests for sonnet_like/core/base.py: Module."""

import pytest
import tensorflow as tf

import sonnet_like as snt


class Counter(snt.Module):
  """Creates one variable in a private method called from a public one."""

  def __init__(self, name=None):
    super().__init__(name=name)

  @snt.once
  def _initialize(self):
    self.count = tf.Variable(0., name="count")

  def increment(self):
    self._initialize()
    self.count.assign_add(1.)
    return tf.get_current_name_scope()

  def __call__(self):
    return self.increment()

  @snt.no_name_scope
  def unscoped(self):
    return tf.get_current_name_scope()


class Wrapper(snt.Module):
  """Holds submodules in a list, a tuple and a dict."""

  def __init__(self, name=None):
    super().__init__(name=name)
    self.in_list = [snt.Linear(2), snt.Linear(2)]
    self.in_tuple = (snt.Linear(2),)
    self.in_dict = {"head": snt.Linear(1)}

  def __call__(self, x):
    for layer in self.in_list + list(self.in_tuple):
      x = layer(x)
    return self.in_dict["head"](x)


def test_methods_run_in_the_name_scope():
  counter = Counter(name="scoped_counter")
  assert counter() == "scoped_counter"
  assert counter.increment() == "scoped_counter"
  assert counter.count.name == "scoped_counter/count:0"
  assert counter.unscoped() == ""


def test_eager_names_are_not_numbered_as_in_sonnet():
  first, second = Counter(name="dup"), Counter(name="dup")
  assert (first.name, second.name) == ("dup", "dup")
  assert first.name_scope.name == second.name_scope.name == "dup/"
  first(), second()
  assert first.count.name == second.count.name == "dup/count:0"


def test_graph_scopes_are_numbered_names_are_not():
  made = []

  @tf.function
  def f():
    if not made:
      made.extend([Counter(name="dup"), Counter(name="dup")])
    return [m() for m in made]

  f()
  assert [m.name for m in made] == ["dup", "dup"]
  assert [m.name_scope.name for m in made] == ["dup/", "dup_1/"]
  assert [m.count.name for m in made] == ["dup/count:0", "dup_1/count:0"]


def test_nested_modules_take_the_parent_scope():
  wrapper = Wrapper(name="outer")
  wrapper(tf.ones([1, 3]))
  names = sorted(v.name for v in wrapper.variables)
  assert names == ["outer/linear/b:0"] * 4 + ["outer/linear/w:0"] * 4
  assert wrapper.in_list[0].module_name == "outer/linear"


def test_variables_and_submodules_found_in_containers():
  wrapper = Wrapper()
  wrapper(tf.ones([1, 3]))
  assert len(wrapper.submodules) == 4
  assert len(wrapper.variables) == 8
  assert len(wrapper.trainable_variables) == 8


def test_repr_shows_constructor_arguments_that_differ_from_defaults():
  assert repr(snt.Linear(3)) == "Linear(output_size=3)"
  assert repr(snt.Linear(3, with_bias=False, name="x")) == (
      "Linear(output_size=3, with_bias=False, name='x')")


def test_empty_variables_error_says_how_to_fix():
  linear = snt.Linear(3)
  with pytest.raises(ValueError, match="does not currently contain any variables") as info:
    _ = linear.variables
  assert "module(example_input)" in str(info.value)
  with pytest.raises(ValueError, match="does not currently contain any trainable_variables"):
    _ = linear.trainable_variables


def test_allow_empty_variables_on_instance_and_class():
  assert snt.allow_empty_variables(snt.Linear(3)).variables == ()

  @snt.allow_empty_variables
  class Stateless(snt.Module):

    def __call__(self, x):
      return x

  assert Stateless().trainable_variables == ()


def test_missing_super_init_is_reported():

  class Forgetful(snt.Module):

    def __init__(self):  # pylint: disable=super-init-not-called
      pass

  with pytest.raises(ValueError, match="must call super"):
    Forgetful()


def test_method_called_before_super_init_is_reported():

  class Early(snt.Module):

    def __init__(self):
      self.setup()
      super().__init__()

    def setup(self):
      pass

  with pytest.raises(AttributeError, match="before calling any other method"):
    Early()


def test_invalid_name_rejected():
  with pytest.raises(ValueError, match="'a b' is not a valid module name"):
    snt.Linear(2, name="a b")


def test_constructor_failure_leaves_the_name_scope():
  with pytest.raises(ValueError):
    snt.Linear(-1)
  assert tf.get_current_name_scope() == ""


def test_module_built_inside_tf_function_gets_its_scope():
  linear = snt.Linear(2, name="traced")

  @tf.function
  def f(x):
    return linear(x)

  f(tf.ones([1, 3]))
  assert linear.w.name == "traced/w:0"


@pytest.mark.parametrize("name", [3, b"bytes", "n\u00e4me", "a/b", ""])
def test_names_tf_module_refuses_are_refused_with_both_types(name):
  # Sonnet 2 (through tf.Module) raises ValueError, or TypeError for a name
  # that is not a string: InvalidNameError is both.
  for error in (ValueError, TypeError):
    with pytest.raises(error, match="is not a valid module name"):
      snt.Linear(2, name=name)


def test_tf_function_method_arguments_are_named_like_sonnet():
  class Traced(snt.Module):

    @tf.function(input_signature=[tf.TensorSpec([None, 2])])
    def __call__(self, x):
      return x + 1.

  traced = Traced(name="traced")
  concrete = traced.__call__.get_concrete_function()
  assert [t.name for t in concrete.inputs] == ["args_0:0"]


CLASS_NAMES = ["MLP", "MLPBlock", "Conv2DTranspose", "ResNet50", "V2Block",
               "BatchNorm", "LSTM", "lowerCase", "AbcDEF", "A1b2C3d", "x",
               "_Head", "__Private", "_2Layer", "My_Module", "Q_Net",
               "Net_2D", "A__B"]


@pytest.mark.parametrize("class_name", CLASS_NAMES)
def test_default_names_are_sonnets(class_name):
  sonnet = pytest.importorskip("sonnet")
  ours = type(class_name, (snt.Module,), {})()
  theirs = type(class_name, (sonnet.Module,), {})()
  assert ours.name == theirs.name
  assert ours.name_scope.name == theirs.name_scope.name


class _Clipped(snt.Module):
  """A private class: its default name `__clipped` starts with '_'."""

  def __init__(self, name=None):
    super().__init__(name=name)
    self.linear = snt.Linear(2)

  def __call__(self, x):
    return tf.clip_by_value(self.linear(x), -1., 1.)


class Holding(snt.Module):
  """Makes a `_Clipped` in its own scope."""

  def __init__(self):
    super().__init__()
    self.inner = _Clipped()

  def __call__(self, x):
    return self.inner(x)


def test_a_name_starting_with_underscore_is_named_when_traced():
  # TensorFlow refuses graph names that start with '_', as dm-sonnet 2.0.2
  # finds too; ours says which module and what to do.
  x = tf.ones([1, 3])
  clipped = _Clipped()
  assert clipped.name == "__clipped"
  assert clipped(x).shape == [1, 2]  # Eagerly TensorFlow takes the scope.
  with pytest.raises(ValueError, match=r"_Clipped: module '__clipped' cannot "
                     r"be called in a tf.function.*name='clipped'"):
    tf.function(clipped)(x)
  with pytest.raises(ValueError, match="cannot be called in a tf.function"):
    tf.function(snt.Sequential([_Clipped()]))(x)
  with pytest.raises(ValueError, match="cannot be constructed in a tf."):
    tf.function(lambda: _Clipped())()  # pylint: disable=unnecessary-lambda
  # Under the suggested name, or made inside another module, it traces.
  assert tf.function(_Clipped(name="clipped"))(x).shape == [1, 2]
  holder = Holding()
  assert holder.inner.name_scope.name == "holding/__clipped/"
  assert tf.function(holder)(x).shape == [1, 2]
