"""Layers built on `Module`. The public names are exported by the package."""
