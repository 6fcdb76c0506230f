"""Scenario settings: `help()` shows each with its doc; public docstrings
speak of behaviour, not of source files."""

import dataclasses
import inspect
import pydoc
import re

import pytest

import sonnet_like as snt
from sonnet_like.scenarios import settings

_SCENARIOS = [snt.scenarios.Supervised, snt.scenarios.GAN,
              snt.scenarios.REINFORCE, snt.scenarios.PPO, snt.scenarios.DQN,
              snt.scenarios.SAC, snt.scenarios.TD3]
_SETTINGS = [field.name for group in settings.GROUPS.values()
             for field in dataclasses.fields(group)
             if field.name != "strategy"]  # Scenario's own property.


@pytest.mark.parametrize("scenario", _SCENARIOS,
                         ids=[s.__name__ for s in _SCENARIOS])
def test_help_shows_every_setting_with_its_doc(scenario):
  text = pydoc.render_doc(scenario, renderer=pydoc.plaintext)
  docs = settings.argument_docs(snt.scenarios.Scenario.__doc__)
  for name in _SETTINGS:
    first_words = " ".join(docs[name].split()[:3])
    assert re.search(rf"\n \|  {name}\n \|      A scenario setting, kept "
                     rf"in `self\.[a-z]+\.{name}` \(settable\)\.\n \|      "
                     rf"\n \|      {re.escape(first_words)}", text), name


def test_argument_docs_joins_continuation_lines():
  def documented(num_steps, save_dir, **kwargs):
    """Trains.

    Args:
      num_steps: Total steps.
      save_dir (str): Folder for
        checkpoints.
      **kwargs: More.

    Returns:
      Nothing.
    """
    del num_steps, save_dir, kwargs

  assert settings.argument_docs(documented.__doc__) == {
      "num_steps": "Total steps.", "save_dir": "Folder for checkpoints.",
      "**kwargs": "More."}


def _public_docstrings():
  for name in snt.scenarios.__all__:
    value = getattr(snt.scenarios, name)
    if inspect.isclass(value):
      yield name, inspect.getdoc(value) or ""
      for attribute, member in vars(value).items():
        if not attribute.startswith("_") or attribute == "__call__":
          yield f"{name}.{attribute}", getattr(member, "__doc__", "") or ""
    elif callable(value):
      yield name, inspect.getdoc(value) or ""


def test_public_docstrings_name_no_source_file():
  named = [f"{where}: {hit}" for where, doc in _public_docstrings()
           for hit in re.findall(r"\b[\w/]+\.py\b", doc)]
  assert not named
