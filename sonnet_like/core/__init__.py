"""Core: the Module base class, `once`, initializers, types and checks."""
