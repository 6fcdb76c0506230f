"""How gradients become updates: accumulation, loss scale, learning rates and the weight average."""
