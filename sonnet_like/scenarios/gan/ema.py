"""`GeneratorEMA`: the generator's weight average, now the engine's `ema`.

`GAN(generator_ema=decay)` is `ema={"generator": decay}`: the average is a
`scenarios.ema.WeightEMA` of the generator's trainable variables, kept in
the checkpoint as "generator_ema".
"""

from sonnet_like.scenarios.updates.ema import WeightEMA as GeneratorEMA

__all__ = ["GeneratorEMA"]
