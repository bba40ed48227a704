"""Fidelity measurement: does the sandbox judge programs the way plain Python does (docs/fidelity.md)."""
