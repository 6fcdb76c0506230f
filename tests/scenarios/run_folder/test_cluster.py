"""A cluster of worker processes on 127.0.0.1: preemption and lost workers.

Each test runs one cluster (2 or 3 workers under MultiWorkerMirroredStrategy,
TF_CONFIG) through a chain of launches of the same command, one event each:
a SIGTERM to a worker or the chief (a preemption notice: every worker saves
at that step and exits 143), a SIGKILL of a worker or the chief (the others
exit within seconds naming the lost task), and finally a clean run to the
end. The chain's last weights must equal, bit for bit, those of an
uninterrupted run of the same cluster, and each SIGTERM launch must leave a
checkpoint at the step of the notice (not only the last periodic save).

Each worker is a process of its own, forked by a `fork_server` that has
imported TensorFlow and sonnet_like once (~4 s of CPU a process otherwise):
its TensorFlow runtime, cluster server and signal handlers start in it. The
uninterrupted run is trained by the chain's first launch, in its processes
before the chain's own first run (a launch of its own cost one more).
"""

import json
import os
import re
import socket
import textwrap
import time

import pytest
import tensorflow as tf

import tests
from sonnet_like.scenarios.run_folder import cluster
from tests import fork_server

_WORKER = textwrap.dedent("""
    import json, os, signal, sys
    os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
    import numpy as np, tensorflow as tf
    sys.path.insert(0, {root!r})
    import sonnet_like as snt
    save_dir, num_steps, event = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    reference_dir = sys.argv[4] if len(sys.argv) > 4 else None
    task = json.loads(os.environ["TF_CONFIG"])["task"]["index"]
    strategy = tf.distribute.MultiWorkerMirroredStrategy()

    class Event(snt.scenarios.Hook):
      # "TASK:STEP:SIGNAL": that task sends itself SIGNAL after STEP.
      def step_end(self, scenario, step, logs):
        if event != "none":
          who, when, name = event.split(":")
          if int(who) == task and step == int(when):
            os.kill(os.getpid(), getattr(signal, name))

    rng = np.random.default_rng(0)
    x = rng.normal(size=(96, 5)).astype(np.float32)
    y = (x[:, 0] > 0).astype(np.int32)
    loss = lambda o, t: tf.nn.sparse_softmax_cross_entropy_with_logits(t, o)

    def run(kind, save_dir, hooks):
      with strategy.scope():
        tf.random.set_seed(1)
        model = snt.nets.MLP([8, 2], name="mlp")
        model(tf.zeros([1, 5]))
        optimizer = snt.optimizers.Adam(0.05)
      train = snt.scenarios.Supervised(
          num_steps=num_steps, batch_size=12, save_every=4, eval_every=4,
          save_dir=save_dir, progress=False, strategy=strategy, hooks=hooks)
      train(model, optimizer, loss, (x, y), eval_data=(x[:24], y[:24]))
      weights = [
          strategy.experimental_local_results(v)[0].numpy().tobytes().hex()
          for v in model.trainable_variables]
      print(kind, json.dumps({{"step": train.step, "weights": weights}}),
            flush=True)

    if reference_dir is not None:  # Uninterrupted, first in the process.
      run("REFERENCE", reference_dir, [])
    run("RESULT", save_dir, [Event()])
""")


def _free_ports(n):
  sockets = [socket.socket() for _ in range(n)]
  for s in sockets:
    s.bind(("127.0.0.1", 0))
  ports = [s.getsockname()[1] for s in sockets]
  for s in sockets:
    s.close()
  return ports


class Launch:
  """One run of the same command on every worker, to its end."""

  def __init__(self, server, script, workers, save_dir, num_steps, event,
               reference_dir=None):
    cluster = {"worker": [f"127.0.0.1:{p}" for p in _free_ports(workers)]}
    argv = [script, save_dir, num_steps, event] + (
        [reference_dir] if reference_dir else [])
    self.processes = []
    for index in range(workers):
      env = dict(os.environ, TF_CONFIG=json.dumps(
          {"cluster": cluster, "task": {"type": "worker", "index": index}}))
      self.processes.append(server.popen(argv, env))
    self.ended = [None] * workers
    deadline = time.monotonic() + 240
    while None in self.ended and time.monotonic() < deadline:
      for i, process in enumerate(self.processes):
        if self.ended[i] is None and process.poll() is not None:
          self.ended[i] = time.monotonic()
      time.sleep(0.05)
    self.outputs = [p.communicate(timeout=30) for p in self.processes]
    self.codes = [p.returncode for p in self.processes]

  def result(self, index=0, kind="RESULT"):
    """What worker `index` printed for its run (`kind` "REFERENCE": for
    the uninterrupted run before it)."""
    out, err = self.outputs[index]
    lines = [l for l in out.splitlines() if l.startswith(kind + " ")]
    assert len(lines) == 1, err[-3000:]
    return json.loads(lines[0].split(" ", 1)[1])


def _names(err, task):
  """Whether a worker's stderr has a WorkerLostError naming `task`."""
  return re.search(rf"WorkerLostError: Supervised: lost [^(]*\bworker "
                   rf"{task}\b[^(]* of the cluster", err) is not None


def _latest_step(save_dir):
  path = tf.train.latest_checkpoint(str(save_dir))
  return int(path.rsplit("-", 1)[1])


# Not conftest: a worker keeps its one CPU device (not two logical ones).
_PRELOAD = ("numpy", "tensorflow", "sonnet_like")


def _chain(tmp_path, workers, num_steps, events):
  """Runs the chain of `events`, then to the end; returns the uninterrupted
  run's results (trained by the first launch, before its event) and the
  last launch."""
  script = tmp_path / "worker.py"
  script.write_text(_WORKER.format(root=tests.ROOT))
  save_dir = tmp_path / "run"
  server = fork_server.shared(_PRELOAD)
  reference = None
  for event in events:
    who, when, name = event.split(":")
    launch = Launch(server, script, workers, save_dir, num_steps, event,
                    None if reference else tmp_path / "uninterrupted")
    if reference is None:
      reference = [launch.result(i, "REFERENCE") for i in range(workers)]
    errors = "\n".join(err[-1500:] for _, err in launch.outputs)
    if name == "SIGTERM":
      # Every worker saved at the notice's step and asks to be restarted.
      assert launch.codes == [143] * workers, errors
      assert _latest_step(save_dir) == int(when)
    else:
      killed = int(who)
      assert launch.codes[killed] == -9, errors
      survivors = [i for i in range(workers) if i != killed]
      for i in survivors:
        assert launch.codes[i] == 1, errors
        err = launch.outputs[i][1]
        assert "restart all of them with the same command" in err
        # The lost worker is named (with 3 workers the coordination
        # service may list a survivor that gave up as well). Or, when the
        # chief gave up first and took the coordination service with it,
        # the chief is named, with a note that its error names the loss.
        if not _names(err, killed):
          assert _names(err, 0) and cluster.LOST_LEADER_NOTE in err, err[-3000:]
          assert killed != 0 and _names(launch.outputs[0][1], killed)
        # The survivors stop within seconds of the loss.
        assert launch.ended[i] - launch.ended[killed] < 20
  return reference, Launch(server, script, workers, save_dir, num_steps,
                           "none")


@pytest.mark.parametrize("workers,events", [
    # Every kind of event (a notice or a kill, of the chief or another
    # worker) once, split between the two sizes: each launch starts every
    # worker's TensorFlow runtime anew, so a chain costs ~6-10 s of the
    # suite a launch. The chief hosts the coordination service, so its loss is
    # noticed otherwise than a worker's; 3 workers have two survivors (here
    # worker 1 has learnt of worker 2's loss from the chief's going).
    (2, ["1:6:SIGTERM", "0:9:SIGKILL"]),
    (3, ["0:7:SIGTERM", "2:10:SIGKILL"]),
], ids=["2_workers", "3_workers"])
def test_preemption_and_lost_workers_resume_bitwise(tmp_path, workers,
                                                    events):
  num_steps = 16
  reference, last = _chain(tmp_path, workers, num_steps, events)
  assert last.codes == [0] * workers
  for index in range(workers):
    assert last.result(index) == reference[index]
  assert last.result()["step"] == reference[0]["step"] == num_steps
  # Only the chief wrote the run; the others' scratch saves are gone.
  save_dir = tmp_path / "run"
  assert _latest_step(save_dir) == num_steps
  assert (save_dir / "history.json").exists()
  assert not [p for p in (save_dir / ".scratch").glob("*/*")]


class _Resolver:

  def __init__(self, task_id):
    self.task_type, self.task_id = "worker", task_id


class _Strategy:

  def __init__(self, task_id):
    self.cluster_resolver = _Resolver(task_id)


@pytest.mark.parametrize("task,message,lost", [
    (0, "Collective ops is aborted by: Socket closed\nAdditional GRPC error "
     "information from remote target /job:worker/replica:0/task:1 while "
     "calling /tensorflow.WorkerService/RecvBuf", "worker 1"),
    (0, "Collective ops is aborted by: Error reported from /job:worker/"
     "task:2: The following tasks are unhealthy (stopped sending "
     "heartbeats):\n/job:worker/replica:0/task:2\n/job:worker/replica:0/"
     "task:1", "worker 1 and worker 2"),
    (1, "Collective ops is aborted by: Socket closed", "a worker"),
], ids=["socket_closed", "unhealthy_list", "unnamed"])
def test_the_lost_task_is_read_from_the_error(task, message, lost):
  error = tf.errors.UnavailableError(None, None, message)
  assert cluster.lost_task(error, _Strategy(task)) == lost


def test_a_lost_leader_says_the_chief_names_the_first_loss():
  message = ("Collective ops is aborted by: Failed to send RPC to "
             "coordination service. Either the leader task was preempted/"
             "died/restarted unexpectedly or this task is experiencing "
             "network issues.\n/job:worker/replica:0/task:0")
  error = tf.errors.UnavailableError(None, None, message)
  text = cluster.lost_message("Supervised", error, _Strategy(1))
  assert text.startswith("Supervised: lost worker 0 of the cluster "
                         "(Collective ops is aborted by: Failed to send RPC")
  assert cluster.LOST_LEADER_NOTE in text
  other = tf.errors.UnavailableError(None, None, "Socket closed")
  assert cluster.LOST_LEADER_NOTE not in cluster.lost_message(
      "Supervised", other, _Strategy(1))
