"""The GRPO learning check (issue 14): tokenizer, model, supervised warm start and report for a tiny policy."""
