"""Tests for sonnet_like/modules/variable_tools.py."""

import sys

import pytest
from absl import logging
import sonnet as reference
import tensorflow as tf

import sonnet_like as snt


def _variables():
  with tf.name_scope("net"):
    return [tf.Variable(tf.zeros([3], tf.bfloat16), name="b"),
            tf.Variable(tf.zeros([2, 3]), name="w"),
            tf.Variable(0, trainable=False, name="step"),
            tf.Variable(tf.zeros([1, 2, 3], tf.float64),
                        name="w_with_a_long_name"),
            tf.Variable(tf.zeros([2], tf.bool), name="mask")]


def test_table_matches_sonnet_layout():
  variables = _variables()
  ours = snt.format_variables(variables)
  assert ours == reference.format_variables(variables)
  lines = ours.split("\n")
  assert lines[0].split("|")[1:-1] == [
      " Variable               ", " Spec       ", " Trainable   ",
      " Device   "]
  # Higher rank first within a scope, then by name.
  assert [l.split("|")[1].strip() for l in lines[2:]] == [
      "net/w_with_a_long_name", "net/w", "net/b", "net/mask", "net/step"]
  assert "| f64[1,2,3]" in ours and "| bf16[3]" in ours and "| bool[2]" in ours
  assert "| False " in ours and "| CPU " in ours


def test_empty_table_matches_sonnet():
  assert snt.format_variables([]) == reference.format_variables([])


def test_other_formats_use_tabulate():
  variables = _variables()
  assert snt.format_variables(variables, "grid") == reference.format_variables(
      variables, "grid")


def test_log_variables_logs_each_line(monkeypatch):
  logged = []
  monkeypatch.setattr(logging, "info", logged.append)
  layer = snt.Linear(2, name="logged")
  layer(tf.ones([1, 3]))
  snt.log_variables(layer.variables)
  assert logged == snt.format_variables(layer.variables).split("\n")
  assert len(logged) == 4 and "logged/w" in logged[2]


def test_without_tabulate_other_formats_say_how_to_get_it(monkeypatch):
  monkeypatch.setitem(sys.modules, "tabulate", None)  # As if not installed.
  with pytest.raises(ValueError, match=r"format_variables: tablefmt 'grid' "
                     r"needs the tabulate package \(pip install tabulate\)"):
    snt.format_variables(_variables(), "grid")
  assert snt.format_variables(_variables())  # 'orgtbl' needs nothing.
