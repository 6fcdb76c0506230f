"""The GAN scenario and its parts: losses and penalties, PacGAN packing, the
generator's moving average, data checks and evaluators."""
