"""The shipped default configs (reward.yaml, prompts.yaml, ds_config_zero2.json), installed as package data."""

from pathlib import Path

CONFIG_DIR = Path(__file__).resolve().parent
