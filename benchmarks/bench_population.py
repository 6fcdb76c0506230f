"""Which shape should a population take: N members' updates in one program.

One member is a 64-64 tanh MLP regressing a batch of 64 rows of 16 features
onto one target, trained with Adam (written out below, the same for every
contender). N members, each with its own weights, Adam moments and batch,
make one update each inside one `tf.function` call, four ways:

  stacked   variables with a leading member axis [N, ...]; the layers are
            batched products (`tf.linalg.matmul` on [N, B, D] x [N, D, H]);
            one tape, one Adam update of the stacked variables.
  vmap      the same stacked variables; `tf.vectorized_map` runs one
            member's step (forward, loss, its own tape's gradient) over
            the member axis; one Adam update of the stacked variables.
  snt-vmap  as vmap, but the member's forward pass is `snt.nets.MLP.__call__`
            itself: the module is made under `snt.functional.variables()`
            and `snt.functional.transform` swaps its variables for the
            member's slices of the stacked ones.
  loop      N separate members (their own variables), their N solo updates
            written one after another in one function (the naive way).

Each call runs `--updates` updates (a `tf.range` loop), with and without
XLA. Reported: the time per update relative to one member's solo step (a
plain MLP's update, same Adam, same mode) timed just before it in the
same round, as the median ratio over rounds and as fastest over fastest;
"per member" is the median ratio divided by N. Rounds interleave every
contender (on 2 shared cores the load drifts between rounds). The first
call (tracing, compiling) is reported apart.

    python benchmarks/bench_population.py [--sizes 1 4 16 64] [--rounds 5]
        [--updates 16] [--xla both|on|off] [--ways stacked vmap snt-vmap loop]
        [--batch 64]
"""

import argparse
import math
import os
import statistics
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # pylint: disable=g-import-not-at-top
import tensorflow as tf  # pylint: disable=g-import-not-at-top

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import sonnet_like as snt  # pylint: disable=g-import-not-at-top

BATCH, FEATURES, HIDDEN = 64, 16, (64, 64)
LR, BETA_1, BETA_2, EPSILON = 1e-3, 0.9, 0.999, 1e-7
SIZES = (FEATURES, *HIDDEN, 1)  # Layer widths, input to output.
WAYS = ("stacked", "vmap", "snt-vmap", "loop")


class Adam:
  """Adam on a list of variables (moments are variables of the same
  shapes, so on stacked variables it is every member's own Adam)."""

  def __init__(self, variables):
    self.variables = list(variables)
    self.m = [tf.Variable(tf.zeros_like(v)) for v in self.variables]
    self.v = [tf.Variable(tf.zeros_like(v)) for v in self.variables]
    self.t = tf.Variable(0.0)

  def apply(self, grads):
    t = self.t.assign_add(1.0)
    rate = LR * tf.sqrt(1.0 - BETA_2**t) / (1.0 - BETA_1**t)
    for variable, grad, m, v in zip(self.variables, grads, self.m, self.v):
      m.assign(BETA_1 * m + (1.0 - BETA_1) * grad)
      v.assign(BETA_2 * v + (1.0 - BETA_2) * tf.square(grad))
      variable.assign_sub(rate * m / (tf.sqrt(v) + EPSILON))


def _initial(n):
  """Every member's first weights, [w, b] per layer with the member axis in
  front, the same for every way (so their results can be compared)."""
  rng = tf.random.Generator.from_seed(1)
  values = []
  for fan_in, fan_out in zip(SIZES[:-1], SIZES[1:]):
    values += [rng.truncated_normal([n, fan_in, fan_out],
                                    stddev=1.0 / math.sqrt(fan_in)),
               tf.zeros([n, fan_out])]
  return values


def _weights(values, member=None):
  """Variables holding `values` (stacked), or member `member`'s slices."""
  return [tf.Variable(v if member is None else v[member]) for v in values]


def _mlp(params, x):
  """The MLP on one member's parameters (w [D, H]) or stacked ones
  (w [N, D, H], x [N, B, D]): the same code, matmul batches the members."""
  for i in range(0, len(params), 2):
    w, b = params[i], params[i + 1]
    x = tf.linalg.matmul(x, w) + tf.expand_dims(b, -2)
    if i + 2 < len(params):
      x = tf.tanh(x)
  return x


def _mse(outputs, targets):
  return tf.reduce_mean(tf.square(outputs - targets), axis=[-2, -1])


def _updates(update, xla):
  """A function running `n` updates a call."""

  @tf.function(jit_compile=xla, autograph=False)
  def run(n):
    def body(i, _):
      update()
      return i + 1, tf.constant(0.0)
    return tf.while_loop(lambda i, _: i < n, body,
                         (tf.constant(0), tf.constant(0.0)))[0]
  return run


def _vectorized(forward, params, adam, x, y):
  """An update whose member step (forward, loss, gradient) runs under
  `tf.vectorized_map` over the members' slices of `params`.

  The tape is inside the mapped function (each member differentiates its
  own loss): a tape around `vectorized_map` differentiating the summed loss
  gives the same gradients, but under XLA the gradient of the vectorised
  ops makes the variables' values compile-time constants, so every call
  compiles again (~1 s a call, measured).
  """

  def member_grads(args):
    xi, yi, *member = args  # Data first: vectorized_map sizes by it.
    with tf.GradientTape() as tape:
      tape.watch(member)
      loss = _mse(forward(member, xi), yi)
    return tape.gradient(loss, member)

  def update():
    adam.apply(tf.vectorized_map(member_grads, (x, y, *params)))
  return update


def make(way, n, x, y, xla):
  """The compiled call of `way` for `n` members on batches `x`, `y`, and a
  function reading the weights back stacked."""
  start = _initial(n)
  if way == "loop":
    members = [_weights(start, i) for i in range(n)]
    adams = [Adam(params) for params in members]

    def update():
      for i, (params, adam) in enumerate(zip(members, adams)):
        with tf.GradientTape() as tape:
          loss = _mse(_mlp(params, x[i]), y[i])
        adam.apply(tape.gradient(loss, params))
    return _updates(update, xla), lambda: [
        tf.stack(layer).numpy() for layer in zip(*members)]
  if way == "solo":
    params = _weights(start, 0)
    adam = Adam(params)

    def update():
      with tf.GradientTape() as tape:
        loss = _mse(_mlp(params, x[0]), y[0])
      adam.apply(tape.gradient(loss, params))
  elif way == "stacked":
    params = _weights(start)
    adam = Adam(params)

    def update():
      with tf.GradientTape() as tape:
        loss = tf.reduce_sum(_mse(_mlp(params, x), y))
      adam.apply(tape.gradient(loss, params))
  elif way == "vmap":
    params = _weights(start)
    adam = Adam(params)
    update = _vectorized(_mlp, params, adam, x, y)
  elif way == "snt-vmap":
    with snt.functional.variables():
      module = snt.nets.MLP(HIDDEN + (1,), activation=tf.tanh, name="member")
    forward = snt.functional.transform(module)
    refs = list(forward.init(x[0]))  # w, b of each layer, as `_initial`.
    assert [r.deref().shape for r in refs] == [v.shape[1:] for v in start]
    params = _weights(start)
    adam = Adam(params)
    update = _vectorized(
        lambda member, xi: forward.apply(dict(zip(refs, member)), xi),
        params, adam, x, y)
  else:
    raise ValueError(f"bench_population: unknown way {way!r}")
  return _updates(update, xla), lambda: [p.numpy() for p in params]


def check(ways, x, y, n=4, updates=3):
  """Every way ends `updates` updates where the stacked way ends."""
  expected = None
  for way in ("stacked", *ways):
    run, read = make(way, n, x[:n], y[:n], xla=False)
    run(tf.constant(updates))
    weights = read()
    if expected is None:
      expected = weights
    for a, b in zip(expected, weights):
      np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5,
                                 err_msg=f"{way} differs from stacked")
  print(f"checked: {', '.join(ways)} end {updates} updates of {n} members "
        "where stacked ends (1e-4)")


def main():
  parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  parser.add_argument("--sizes", type=int, nargs="+", default=[1, 4, 16, 64])
  parser.add_argument("--ways", nargs="+", default=list(WAYS), choices=WAYS)
  parser.add_argument("--xla", choices=("both", "on", "off"), default="both")
  parser.add_argument("--rounds", type=int, default=5)
  parser.add_argument("--updates", type=int, default=16,
                      help="updates per call")
  parser.add_argument("--batch", type=int, default=BATCH,
                      help="rows of each member's batch")
  parser.add_argument("--seconds", type=float, default=0.3,
                      help="least time of one contender in a round")
  args = parser.parse_args()
  modes = {"both": (False, True), "on": (True,), "off": (False,)}[args.xla]
  biggest = max(args.sizes + [4])
  x = tf.random.Generator.from_seed(0).normal([biggest, args.batch,
                                               FEATURES])
  y = tf.reduce_sum(tf.sin(x), axis=-1, keepdims=True)
  n_updates = tf.constant(args.updates)
  check([way for way in args.ways if way != "stacked"], x, y)

  contenders = {}  # (xla, way, n) -> [compiled call, calls a round]
  for xla in modes:
    plan = [("solo", 1)] + [(way, n) for way in args.ways
                            for n in args.sizes]
    for way, n in plan:
      run, _ = make(way, n, x[:n], y[:n], xla)
      start = time.perf_counter()
      int(run(n_updates))
      first = time.perf_counter() - start
      start = time.perf_counter()
      int(run(n_updates))
      per_call = time.perf_counter() - start
      calls = max(1, math.ceil(args.seconds / per_call))
      contenders[(xla, way, n)] = [run, calls, []]
      print(f"{'XLA' if xla else 'graph'} {way:8s} N={n:3d}: first call "
            f"{first:6.2f} s, {calls} calls a round", flush=True)

  def timed(run, calls):
    start = time.perf_counter()
    for _ in range(calls):
      done = run(n_updates)
    int(done)
    return (time.perf_counter() - start) / (calls * args.updates)

  # Each contender is timed right after its mode's solo step, and its ratio
  # is taken against that measurement: the load of a shared machine drifts
  # between rounds more than within a pair.
  ratios = {key: [] for key in contenders}
  for _ in range(args.rounds):
    for (xla, way, n), (run, calls, times) in contenders.items():
      if way == "solo":
        continue
      solo_run, solo_calls, solo_times = contenders[(xla, "solo", 1)]
      solo_times.append(timed(solo_run, solo_calls))
      times.append(timed(run, calls))
      ratios[(xla, way, n)].append(times[-1] / solo_times[-1])

  print(f"\nms per update (median of {args.rounds} rounds, fastest), and "
        "its ratio to the solo step timed just before it (median over "
        "rounds, and fastest over fastest)")
  for xla in modes:
    solo = contenders[(xla, "solo", 1)][2]
    print(f"\n{'XLA' if xla else 'graph (no XLA)'}: solo step "
          f"{statistics.median(solo) * 1e3:.3f} ms (fastest "
          f"{min(solo) * 1e3:.3f})")
    print(f"{'way':9s} {'N':>3s} {'ms/update':>10s} {'fastest':>8s} "
          f"{'x solo':>7s} {'fastest':>8s} {'per member':>10s}")
    for way in args.ways:
      for n in args.sizes:
        times = contenders[(xla, way, n)][2]
        ratio = statistics.median(ratios[(xla, way, n)])
        print(f"{way:9s} {n:3d} {statistics.median(times) * 1e3:10.3f} "
              f"{min(times) * 1e3:8.3f} {ratio:7.2f} "
              f"{min(times) / min(solo):8.2f} {ratio / n:10.3f}")


if __name__ == "__main__":
  main()
