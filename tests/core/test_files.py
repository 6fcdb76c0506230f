"""files: one set of file operations for local folders, file:// and ram://."""

import os
import uuid

import pytest
import tensorflow as tf

from sonnet_like.core import files


def _ram() -> str:
  return f"ram://test_files/{uuid.uuid4().hex}"


def test_atomic_write_replaces_whole_and_leaves_no_temp(tmp_path):
  path = str(tmp_path / "f.json")
  files.write_atomic(path, "old")
  files.write_atomic(path, "new")
  assert open(path).read() == "new" and os.listdir(tmp_path) == ["f.json"]


@pytest.mark.parametrize("where", ["ram", "file_url"])
def test_the_same_operations_on_ram_and_file_urls(where, tmp_path):
  root = _ram() if where == "ram" else f"file://{tmp_path}/run"
  files.makedirs(files.join(root, "logs"))
  files.write_atomic(files.join(root, "history.json"), "{}")
  files.write_atomic(files.join(root, "logs", "a"), "x")
  assert files.listdir(root) == ["history.json", "logs"]
  assert files.isdir(files.join(root, "logs"))
  assert files.read_text(files.join(root, "history.json")) == "{}"
  files.move(files.join(root, "logs"), files.join(root, "old", "logs"))
  assert files.listdir(root) == ["history.json", "old"]
  assert files.read_text(files.join(root, "old", "logs", "a")) == "x"
  files.rmtree(files.join(root, "old"))
  assert not files.exists(files.join(root, "old", "logs", "a"))
  assert files.listdir(root) == ["history.json"]
  if where == "file_url":  # A file:// URL is the local folder it names.
    assert sorted(os.listdir(tmp_path / "run")) == ["history.json"]


def test_no_folder_named_after_a_scheme(tmp_path, monkeypatch):
  monkeypatch.chdir(tmp_path)
  files.makedirs(files.join(_ram(), "a"))
  files.write_atomic(files.join(_ram(), "b"), "x")
  assert os.listdir(tmp_path) == []


def test_an_unknown_scheme_is_named_and_s3_asks_for_tensorflow_io():
  with pytest.raises(files.NoFileSystemError) as error:
    files.check_scheme("Supervised", "save_dir", "nofs://bucket/run")
  assert str(error.value) == (
      "Supervised: save_dir nofs://bucket/run: TensorFlow has no file system "
      "for 'nofs://' here.")
  try:
    files.check_scheme("Supervised", "save_dir", "s3://bucket/run")
  except files.NoFileSystemError as s3_error:
    assert "tensorflow-io" in str(s3_error)
  except tf.errors.OpError:
    pass  # tensorflow-io is installed: s3 exists (and this bucket does not).
