"""Run statistics for the preprocessing CLI: stats.json content and the one-screen summary."""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field

_BUCKETS = [(1, 1), (2, 4), (5, 9), (10, 19), (20, 49), (50, 99), (100, None)]


@dataclass
class RunStats:
    started: float = field(default_factory=time.monotonic)
    files: list = field(default_factory=list)  # [{"file", "schema", "rows"}]
    files_skipped: list = field(default_factory=list)  # [{"file", "error"}]
    rows_read: int = 0
    rows_written: int = 0
    duplicates: int = 0
    same_question: int = 0  # rows kept that share an earlier row's question text but not its tests
    same_prompt: int = 0  # ... of which the user prompt too: the reward server's prompt index matches one
    same_question_examples: list = field(default_factory=list)  # [{"source_id", "first"}]
    dropped: Counter = field(default_factory=Counter)
    errors_sample: list = field(default_factory=list)
    splits: Counter = field(default_factory=Counter)
    formats: Counter = field(default_factory=Counter)
    tests_per_row: list = field(default_factory=list)
    tests_truncated: int = 0
    verify: dict | None = None
    prompt_tokens: list = field(default_factory=list)  # per written-or-dropped prompt, when --tokenizer
    prompts_over: int = 0
    split_overlap: int = 0  # questions written to both train and test
    split_overlap_examples: list = field(default_factory=list)  # source_ids of the first such rows
    benchmark_rows_in_train: int = 0  # --splits hash only

    def note_error(self, msg: str) -> None:
        if len(self.errors_sample) < 20:
            self.errors_sample.append(msg)

    def note_same_question(self, source_id: str, first: str, same_prompt: bool) -> None:
        self.same_question += 1
        self.same_prompt += same_prompt
        if len(self.same_question_examples) < 10:
            self.same_question_examples.append({"source_id": source_id, "first": first, "same_prompt": same_prompt})

    def prompt_tokens_dict(self, tokenizer: str, budget: int | None, policy: str) -> dict:
        """stats.json `prompt_tokens`: the prompts measured under the tokenizer's chat template."""
        t = self.prompt_tokens
        return {"tokenizer": tokenizer, "max_prompt_tokens": budget, "over_budget": policy,
                "measured": len(t), "over": self.prompts_over, "min": min(t, default=0), "max": max(t, default=0),
                "mean": round(sum(t) / len(t), 1) if t else 0.0}

    def to_dict(self, args: dict) -> dict:
        elapsed = time.monotonic() - self.started
        t = self.tests_per_row
        hist = {}
        for lo, hi in _BUCKETS:
            key = f"{lo}-{hi}" if hi and hi != lo else (str(lo) if hi else f"{lo}+")
            hist[key] = sum(lo <= n and (hi is None or n <= hi) for n in t)
        schemas = sorted({f["schema"] for f in self.files})
        return {
            "schema": schemas[0] if len(schemas) == 1 else (schemas or None),
            "files": self.files,
            "files_skipped": self.files_skipped,
            "rows_read": self.rows_read,
            "rows_written": self.rows_written,
            "duplicates": self.duplicates,
            "same_question": {"kept": self.same_question, "same_prompt": self.same_prompt,
                              "examples": self.same_question_examples},
            "dropped": dict(sorted(self.dropped.items())),
            "dropped_total": sum(self.dropped.values()),
            "splits": {"train": self.splits["train"], "test": self.splits["test"]},
            "split_overlap": {"questions": self.split_overlap, "examples": self.split_overlap_examples},
            "benchmark_rows_in_train": self.benchmark_rows_in_train,
            "formats": dict(self.formats),
            "tests_per_row": {
                "min": min(t) if t else 0, "mean": round(sum(t) / len(t), 3) if t else 0.0,
                "max": max(t) if t else 0, "total": sum(t), "histogram": hist,
                "truncated_rows": self.tests_truncated},
            "verify": self.verify or {"enabled": False},
            "errors_sample": self.errors_sample,
            "elapsed_s": round(elapsed, 3),
            "rows_per_s": round(self.rows_read / elapsed, 1) if elapsed > 0 else None,
            "args": args,
        }


def summary(d: dict, out_dir: str) -> str:
    """A short human-readable report of a stats dict."""
    lines = [
        f"coderl preprocess: {d['rows_read']} rows read from {len(d['files'])} file(s) "
        f"(schema: {d['schema']}) in {d['elapsed_s']:.1f}s ({d['rows_per_s']} rows/s)",
        f"  written: {d['rows_written']}  (train {d['splits']['train']}, test {d['splits']['test']})  "
        f"formats: {d['formats']}",
        *([f"  WARNING: {d['split_overlap']['questions']} question(s) in both train and test, e.g. "
           + ", ".join(map(str, d['split_overlap']['examples'][:3]))] if d.get("split_overlap", {}).get("questions")
          else []),
        *([f"  WARNING: {d['benchmark_rows_in_train']} benchmark row(s) written to train (--splits hash)"]
          if d.get("benchmark_rows_in_train") else []),
        f"  duplicates: {d['duplicates']}  dropped: {d['dropped_total']}" + (f" {d['dropped']}" if d['dropped'] else ""),
        *([f"  same question, other tests: {d['same_question']['kept']} kept as distinct tasks, e.g. "
           + ", ".join(f"{e['source_id']} (as {e['first']})" for e in d["same_question"]["examples"][:3])
           + (f"; {d['same_question']['same_prompt']} with the very same prompt (the reward server matches "
              "prompts by text: it grades those with the first row's label, unless the trainer sends labels)"
              if d["same_question"]["same_prompt"] else "")]
          if d.get("same_question", {}).get("kept") else []),
        # Label entries, not test cases: a unittest module or HumanEval check program holds several cases
        # (counting those needs an ast parse of every test, which would dominate the run time).
        f"  test entries per row (modules / asserts / I/O cases / check programs): "
        f"min {d['tests_per_row']['min']}, mean {d['tests_per_row']['mean']}, max {d['tests_per_row']['max']}",
    ]
    v = d["verify"]
    if v.get("enabled"):
        lines.append(f"  verify: {v.get('problems_checked', 0)} checked, {v.get('problems_kept', 0)} kept "
                     f"({v.get('problems_with_tests_dropped', 0)} of them with failing tests dropped), "
                     f"{v.get('problems_dropped', 0)} dropped (no test passed); test cases: "
                     f"{v.get('cases_kept', 0)} of {v.get('cases_checked', 0)} kept, {v.get('cases_failed', 0)} "
                     f"failed ({v.get('test_methods_dropped', 0)} unittest methods cut out of their modules, "
                     f"{v.get('tests_dropped', 0)} whole entries dropped); failing cases by status "
                     f"{v.get('failed_statuses')}; per row: verify.jsonl")
    pt = d.get("prompt_tokens")
    if pt:
        budget = pt["max_prompt_tokens"]
        line = f"  prompt tokens ({pt['tokenizer']}): min {pt['min']}, mean {pt['mean']}, max {pt['max']}"
        if budget is not None:
            line += f"; {pt['over']} over {budget}: " + (
                "dropped" if pt["over_budget"] == "drop" else
                "KEPT (--over_budget report): the trainer truncates them and they score 0 unless its "
                "PROMPT_MAX_LEN is raised")
        lines.append(line)
    if d["files_skipped"]:
        lines.append(f"  files skipped: {len(d['files_skipped'])} (see stats.json)")
    out = d.get("output") or {"format": "openrlhf", "files": ["train.jsonl", "test.jsonl"]}
    lines.append(f"  output ({out['format']}): {out_dir}/{', '.join(out['files'] + out.get('reports', []))}, "
                 "stats.json")
    if not d["rows_written"]:
        # Exit status stays 0 (an empty result can be legitimate), but it must not pass unnoticed.
        lines.append(f"  WARNING: no rows written ({' and '.join(out['files'])} are empty): see dropped "
                     "and errors_sample in stats.json")
    return "\n".join(lines)
