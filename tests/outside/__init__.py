"""Probes of Sonnet 2 usage, run with both libraries (test_sonnet_outside)."""
