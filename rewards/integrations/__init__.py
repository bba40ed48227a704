"""coderl's reward through other trainers' hooks: TRL (trl.py), verl (verl.py); backend.py does the scoring."""
