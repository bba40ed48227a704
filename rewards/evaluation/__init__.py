"""pass@k of a checkpoint on held-out problems, graded by the training reward's own extraction and sandbox.

    tasks.py     the data JSONL (as data/preprocess.py writes it) keyed by task_id = label.source_id
    samples.py   samples.jsonl rows {"task_id", "completion"}: read with clear errors, written atomically
    generate.py  samples from a checkpoint: vLLM when it imports, else HF generate; training's chat template
    score.py     samples -> per-sample results (sandbox pool) -> per-problem counts
    passk.py     the unbiased pass@k estimator (Chen et al., 2021) and which k a run can report
    report.py    results.jsonl, summary.json and the stdout table
    compare.py   two runs side by side with per-problem flips
    cli.py       `coderl-evaluate` / `python scripts/evaluate.py`
"""
