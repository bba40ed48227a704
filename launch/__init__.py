"""Python that the launch scripts in scripts/ run (`python -m coderl.launch.X`): preflight checks, the
DeepSpeed config -> OpenRLHF flags plan, and the quickstart's batch helper. User commands stay in scripts/."""
