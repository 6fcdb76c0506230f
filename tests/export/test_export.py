"""Every kind of export loads in a Python without sonnet_like, bit for bit.

One subprocess for all of them (TensorFlow's import is the slow part). The
references are the modules called here, at batch sizes the exports never
saw.
"""

import numpy as np
import tensorflow as tf

import sonnet_like as snt
from sonnet_like.scenarios.rl.parts import policies
from tests import export_common


def _codes(rng: tf.random.Generator, num_samples) -> tf.Tensor:
  return rng.uniform([num_samples, 3], -1.0, 1.0)


def test_module_sampler_and_policy_exports_load_without_sonnet_like(
    tmp_path):
  tf.random.set_seed(0)
  mlp, conv = snt.nets.MLP([16, 3], name="mlp"), export_common.conv_net()
  generator = snt.nets.MLP([8, 2], name="generator")
  generator_3 = snt.nets.MLP([8, 2], name="generator_3")  # Latents of 3.
  actor, box_actor = snt.nets.MLP([8, 3], name="actor"), snt.Linear(
      2, name="box_actor")
  box = snt.envs.Box(low=[-1.0, -0.5], high=[1.0, 0.5])
  log_std = tf.Variable([-1.0, 0.5])
  export = snt.export
  paths = {
      "mlp": export.save_module(mlp, tmp_path / "mlp",
                                tf.TensorSpec([None, 5])),
      # An example batch of 3: exported with an unknown batch size.
      "conv": export.save_module(conv, tmp_path / "conv",
                                 export_common.normal((3, 8, 8, 1)),
                                 classifier=True),
      "sampler": export.save_sampler(generator, tmp_path / "sampler",
                                     tf.TensorSpec([None, 4])),
      "custom": export.save_sampler(generator_3, tmp_path / "custom",
                                    tf.TensorSpec([None, 3]),
                                    latent_sampler=_codes),
      "discrete": export.save_policy(actor, tmp_path / "discrete",
                                     tf.TensorSpec([4]),
                                     snt.envs.Discrete(3)),
      "box": export.save_policy(box_actor, tmp_path / "box",
                                tf.TensorSpec([4]), box, log_std=log_std),
  }
  x, images = export_common.normal((7, 5), 1), export_common.normal(
      (11, 8, 8, 1), 2)
  codes, observations = export_common.normal((6, 4), 3), export_common.normal(
      (13, 4), 4)
  count_seed = {"num_samples": np.int32(10), "seed": np.int64(42)}
  seeded = {"observation": observations, "seed": np.int64(9)}
  got = export_common.load_and_call([
      (paths["mlp"], "serving_default", {"inputs": x}),
      (paths["mlp"], "__call__", x),
      (paths["conv"], "serving_default", {"inputs": images}),
      (paths["sampler"], "serving_default", {"latents": codes}),
      (paths["sampler"], "sample", count_seed),
      (paths["custom"], "sample", count_seed),
      (paths["discrete"], "serving_default", {"observation": observations}),
      (paths["discrete"], "sample", seeded),
      (paths["box"], "serving_default", {"observation": observations}),
      (paths["box"], "sample", seeded),
  ])
  logits = conv(images).numpy()
  discrete = policies.Policy("test", snt.envs.Discrete(3))
  box_policy = policies.Policy("test", box)
  key = tf.constant([9, 0], tf.int64)
  uniform = tf.random.stateless_uniform([13, 3], key, minval=1e-20,
                                        maxval=1.0)
  gumbel = -tf.math.log(-tf.math.log(uniform))
  box_noise = tf.random.stateless_normal([13, 2], key)
  expected = [
      {"outputs": mlp(x)},
      mlp(x),
      {"outputs": logits, "probabilities": tf.nn.softmax(logits),
       "classes": np.argmax(logits, axis=-1)},
      {"samples": generator(codes)},
      {"samples": generator(tf.random.Generator.from_seed(42).normal(
          [10, 4]))},
      {"samples": generator_3(_codes(tf.random.Generator.from_seed(42), 10))},
      {"action": discrete.greedy(actor(observations))},
      {"action": tf.argmax(actor(observations) + gumbel, axis=-1,
                           output_type=tf.int32)},
      {"action": box_policy.greedy(box_actor(observations))},
      {"action": box_policy.to_env(box_actor(observations) +
                                   tf.exp(log_std) * box_noise)},
  ]
  for result, reference in zip(got, expected):
    export_common.assert_bitwise(
        result, tf.nest.map_structure(np.asarray, reference))
