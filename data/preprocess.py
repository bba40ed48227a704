"""Parquet datasets -> OpenRLHF JSONL (train.jsonl, test.jsonl, stats.json) for coderl, or TRL / verl layouts.

    python data/preprocess.py --input_dir /path/to/parquet --output_dir /path/to/coderl_data [--verify]
    ... --output_format trl     # train/test.jsonl: {"prompt": [system, user], "coderl_label": ...}
    ... --output_format verl    # train/test.parquet: data_source, prompt, ability, reward_model, extra_info

Schemas and rules: docs/datasets.md. Row and label format: docs/label_format.md.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

if __package__ in (None, "") and importlib.util.find_spec("coderl") is None:
    # Run by path from a checkout where coderl is not installed (a bare GPU box): the checkout's coderl/
    # links its folders as the package.
    sys.path.append(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from coderl.rewards.errors import missing_dependency
from coderl.rewards.version import add_version_flag

try:
    from coderl.data import io, prompting, schemas, writers
    from coderl.data.schemas import CellError, Problem, RowContext, Skip
    from coderl.data.stats import RunStats, summary
    from coderl.rewards.labels import FORMATS as LABEL_FORMATS
    from coderl.rewards.labels import Label, LabelError, parse_label
except ModuleNotFoundError as _e:
    if (_e.name or "coderl").startswith("coderl"):
        raise
    sys.exit(missing_dependency(_e))


VERIFY_REPORT = "verify.jsonl"  # --verify: per verified row, the cases kept of how many and those dropped


class _Help(argparse.RawDescriptionHelpFormatter, argparse.ArgumentDefaultsHelpFormatter):
    """The docstring as written, and every option's default where it has one its help does not already give."""

    def _get_help_string(self, action: argparse.Action) -> str:
        if action.default in (None, False) or "default" in (action.help or ""):
            return action.help or ""
        return super()._get_help_string(action)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=_Help)
    add_version_flag(p)
    p.add_argument("--input_dir", required=True,
                   help="A parquet (or JSON Lines: .jsonl) file, or a directory searched recursively.")
    p.add_argument("--output_dir", required=True,
                   help="Gets train/test.jsonl (train/test.parquet for verl) and stats.json, atomically.")
    p.add_argument("--output_format", default="openrlhf", choices=writers.OUTPUT_FORMATS,
                   help="Row layout: openrlhf JSONL (input, label), trl JSONL (prompt, coderl_label), "
                        "verl parquet (train/test.parquet). Layouts: data/writers.py.")
    p.add_argument("--input_glob", default="*.parquet",
                   help="File-name pattern under --input_dir (LiveCodeBench's JSON Lines files: 'test*.jsonl').")
    p.add_argument("--format", default=None, help=f"Force a schema: {', '.join(schemas.known())}.")
    p.add_argument("--columns", nargs="+", action="extend", default=[], metavar="SCHEMA_COLUMN=FILE_COLUMN",
                   help="Read a renamed copy of a known dataset: e.g. --columns question=problem reads the file's "
                        "`problem` column as the schema's `question`.")
    p.add_argument("--splits", choices=("dataset", "hash"), default="dataset",
                   help="dataset: keep the dataset's own splits (split files, benchmarks to test) and hash-split "
                        "only a dataset with one split; hash: every row by --test_ratio (a benchmark may land in "
                        "train: stats.json counts it).")
    p.add_argument("--test_ratio", type=float, default=0.1,
                   help="Fraction of the hash-split problems in test.jsonl (rows without a split of their own); a benchmark "
                        "goes to test.jsonl whole, for coderl-evaluate.")
    p.add_argument("--seed", type=int, default=42, help="Seed of the hash-based split.")
    p.add_argument("--max_samples", type=int, default=None, help="Stop after writing this many problems.")
    p.add_argument("--max_tests_per_problem", type=int, default=None, help="Keep at most N tests per problem.")
    p.add_argument("--source", default=None, help="label.source for every row (default: per schema).")
    sp = p.add_mutually_exclusive_group()
    sp.add_argument("--system_prompt", default="think_answer", help="A key of configs/prompts.yaml.")
    sp.add_argument("--system_prompt_file", default=None, help="A text file holding the system prompt.")
    p.add_argument("--answer_format", default="think_answer", choices=prompting.ANSWER_FORMATS,
                   help="Answer format a --system_prompt_file asks for (label.extra.answer_format).")
    p.add_argument("--keep_reference", action="store_true", help="Store the reference solution in the label.")
    p.add_argument("--verify", action="store_true", help="Run reference solutions; drop tests they fail.")
    p.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="Sandbox workers for --verify.")
    p.add_argument("--test_timeout_s", type=float, default=None,
                   help="Per-test limit for --verify; default: the grading cap (sandbox time_cap_s), so a slow "
                        "but legit test is kept, and its ref_time_s sets the limit it is graded under.")
    p.add_argument("--job_timeout_s", type=float, default=120.0,
                   help="Per-problem limit for --verify (all of a reference's tests; CodeRM rows can have hundreds).")
    p.add_argument("--verify_batch", type=int, default=256, help="Problems per sandbox call in --verify.")
    p.add_argument("--on_error", choices=("stop", "skip"), default="stop",
                   help="Bad cell or corrupt file: stop with an error, or skip and count it.")
    p.add_argument("--batch_size", type=int, default=64, help="Parquet rows per record batch read.")
    p.add_argument("--tokenizer", default=None,
                   help="The training model's tokenizer directory: measures each prompt under its chat template "
                        "as OpenRLHF does (stats.json prompt_tokens).")
    p.add_argument("--max_prompt_tokens", type=int, default=None,
                   help="Token budget of a prompt (the trainer's PROMPT_MAX_LEN; needs --tokenizer): a longer "
                        "prompt is truncated in training, matches no problem and scores 0.")
    p.add_argument("--over_budget", choices=("drop", "report"), default="drop",
                   help="Prompts over --max_prompt_tokens: drop them (dropped.prompt_too_long), or keep them "
                        "and only count them.")
    p.add_argument("--no_progress", action="store_true", help="No progress bars (off anyway when not a tty).")
    return p


def split_of(norm_question: str, seed: int, test_ratio: float) -> str:
    """'test' or 'train' from sha256(seed, question): stable across runs, row orders and file splits."""
    h = hashlib.sha256(f"{seed}\x00{norm_question}".encode()).digest()
    return "test" if int.from_bytes(h[:8], "big") / 2**64 < test_ratio else "train"


def graded_key(p: Problem) -> str:
    """What a row's reward depends on besides the program: its label's format, entry point, setup and tests."""
    return json.dumps([p.format, p.entry_point, p.setup_code, p.tests], ensure_ascii=False, sort_keys=True,
                      default=repr)


def _digest(*parts: str | bytes) -> bytes:
    h = hashlib.sha256()
    for part in parts:
        h.update(part if isinstance(part, bytes) else part.encode("utf-8", "surrogatepass"))
        h.update(b"\x00")
    return h.digest()[:16]


@dataclass
class Input:
    """One readable input file and how it is read."""

    file: Path
    reader: object  # io.open_input's ParquetFile or JsonlFile
    schema: ModuleType
    file_columns: list[str]  # the columns read, as the file names them
    columns: list[str]  # ... and as the schema names them (--columns)
    has_reference: bool  # its rows have the schema's reference column (--verify runs it)
    split: str = "hash"  # 'train' or 'test' (the dataset's own), or 'hash' (by --test_ratio)


class Run:
    """One preprocessing run: read, convert, dedup, (verify), write."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.stats = RunStats()
        self.system = prompting.load_system_prompt(args.system_prompt, args.system_prompt_file,
                                                   args.answer_format)
        self.seen: set[bytes] = set()  # (prompt, graded label) digests: exact duplicates
        self.questions: dict[bytes, tuple[str, bytes]] = {}  # question digest -> (first source_id, its prompt)
        self.pending: list[tuple[Problem, object]] = []
        self.split_seen: dict[bytes, list] = {}  # question digest -> [splits bitmask, first source_id]
        self.verifier = None
        self.progress = not args.no_progress and sys.stderr.isatty()
        self.tokenizer = None
        if args.tokenizer:
            from coderl.data.prompt_budget import load_tokenizer

            self.tokenizer = load_tokenizer(args.tokenizer)

    def inputs(self) -> list[Input]:
        """The readable input files, each with its schema and split."""
        files = io.list_input_files(self.args.input_dir, self.args.input_glob)
        sidecars = {f: schemas.sidecar_of(f, self.args.input_dir) for f in files}
        sidecars = {f: s for f, s in sidecars.items() if s}
        if sidecars:
            print(f"[preprocess] {len(sidecars)} file(s) of {', '.join(sorted(set(sidecars.values())))} read with "
                  f"their problems, not as inputs (e.g. {next(iter(sidecars))})", file=sys.stderr)
        rename = schemas.parse_columns(self.args.columns)
        out = []
        for f in (f for f in files if f not in sidecars):
            try:
                pf = io.open_input(f)
            except io.DataError as e:
                self._file_error(f, e)
                continue
            file_cols = pf.columns
            cols = [rename.get(c, c) for c in file_cols]
            if self.args.format:
                mod = schemas.get(self.args.format)
                missing = [c for c in mod.REQUIRED if c not in cols]
                if missing:
                    self._file_error(f, io.DataError(f"--format {mod.NAME} needs columns {missing}; columns found: "
                                                 f"{', '.join(cols)}", file=str(f)))
                    continue
            else:
                try:
                    mod = schemas.detect(cols)
                except ValueError as e:
                    self._file_error(f, io.DataError(str(e), file=str(f)))
                    continue
            wanted = {*mod.REQUIRED, *mod.OPTIONAL}
            read = [(fc, c) for fc, c in zip(file_cols, cols, strict=True) if c in wanted]
            # A schema's reference column may be missing from some of its files (DeepCoder's lcbv5 has no
            # solutions): their rows are kept unverified, as verl's are.
            has_ref = mod.HAS_REFERENCE and getattr(mod, "REFERENCE", None) in (None, *cols)
            out.append(Input(f, pf, mod, [fc for fc, _ in read], [c for _, c in read], has_ref))
        self._assign_splits(out)
        return out

    def _assign_splits(self, inputs: list[Input]) -> None:
        """Each input's split: a benchmark's test, the split its name gives, else the hash split."""
        if self.args.splits == "hash":
            return
        named = [io.file_split(i.file, self.args.input_dir) for i in inputs]
        held_out = "test" in named  # the dataset brought its own test split
        for i, name in zip(inputs, named, strict=True):
            if schemas.is_benchmark(i.schema):
                i.split = "test"
            elif name == "test" or (name == "train" and held_out):
                i.split = name

    def _file_error(self, f, e: Exception) -> None:
        if self.args.on_error == "stop":
            raise e
        self.stats.files_skipped.append({"file": str(f), "error": str(e)})

    def execute(self) -> dict:
        a = self.args
        inputs = self.inputs()
        total = sum(i.reader.num_rows for i in inputs)
        from tqdm import tqdm
        bar = tqdm(total=total, unit="row", desc="read", disable=not self.progress, file=sys.stderr)
        # counts rows, as `read` does (a row dropped before verification is done too): a total known up front
        self.vbar = tqdm(total=total, unit="row", desc="verify", position=1, file=sys.stderr,
                         disable=not (self.progress and a.verify))
        names = writers.file_names(a.output_format)
        binary = names if a.output_format == "verl" else ()
        reports = [VERIFY_REPORT] if a.verify else []
        with io.AtomicOutputs(a.output_dir, names + reports, binary) as out, self._sandbox() as sb:
            self.out = out
            if sb is not None:
                from coderl.data.verify import Verifier
                from coderl.rewards.sandbox import count_tests
                self.verifier = Verifier(sb, count_tests)
            self.rows = writers.RowWriter(a.output_format, out)
            for i in inputs:
                f, mod = i.file, i.schema
                self.stats.files.append({"file": str(f), "schema": mod.NAME, "rows": i.reader.num_rows,
                                         "split": i.split})
                self.input = i
                try:
                    for row_idx, row in io.iter_rows(i.reader, f, i.file_columns, a.batch_size):
                        bar.update(1)
                        self.stats.rows_read += 1
                        if i.file_columns != i.columns and isinstance(row, dict):
                            row = {c: row[fc] for fc, c in zip(i.file_columns, i.columns, strict=True)}
                        self._row(f, row_idx, row, mod)
                        self.vbar.update(self.stats.rows_read - len(self.pending) - self.vbar.n)
                        if self._full():
                            break
                except io.DataError as e:
                    self._file_error(f, e)
                if self._full():
                    break
            self._flush()
            self.vbar.update(self.stats.rows_read - self.vbar.n)
            self.rows.close()
            bar.close()
            self.vbar.close()
            self.stats.split_overlap = sum(m == 3 for m, _ in self.split_seen.values())
            self.stats.split_overlap_examples = [sid for m, sid in self.split_seen.values() if m == 3][:10]
            d = self.stats.to_dict({k: v for k, v in vars(a).items()})
            if self.tokenizer is not None:
                d["prompt_tokens"] = self.stats.prompt_tokens_dict(a.tokenizer, a.max_prompt_tokens,
                                                                   a.over_budget)
            d["output"] = {"format": a.output_format, "files": names, "reports": reports}
            if self.verifier is not None:
                d["verify"] = {"enabled": True, **dict(self.verifier.stats),
                               "failed_statuses": dict(self.verifier.failed_statuses)}
            out.commit({"stats.json": json.dumps(d, indent=2, default=str) + "\n"})
        return d

    def _sandbox(self):
        import contextlib
        if not self.args.verify:
            return contextlib.nullcontext()
        from coderl.rewards.config import SandboxConfig
        from coderl.rewards.sandbox import Sandbox
        # Measured runs (no probe), under the most any test gets in grading: a test slower than the default
        # 4 s is no reason to drop it, only one slower than grading could ever allow.
        kw = {"workers": self.args.workers, "job_timeout_s": self.args.job_timeout_s, "probe_s": 0}
        kw["test_timeout_s"] = self.args.test_timeout_s or SandboxConfig().time_cap_s
        return Sandbox(SandboxConfig(**kw))

    def _full(self) -> bool:
        m = self.args.max_samples
        return m is not None and self.stats.rows_written + len(self.pending) >= m

    def _row(self, f, row_idx: int, row: dict | io.DataError, mod) -> None:
        try:
            if isinstance(row, io.DataError):  # a cell io could not read (invalid UTF-8)
                raise row
            p = mod.convert(row, RowContext(str(f), row_idx))
            if p.format not in LABEL_FORMATS:  # e.g. pytest files before that label format exists: not gradable yet
                raise Skip(f"needs_format_{p.format}")
        except Skip as s:
            self.stats.dropped[s.reason] += 1
            return
        except (CellError, io.DataError) as e:
            err = e if isinstance(e, io.DataError) else io.DataError(str(e), file=str(f), row=row_idx, field=e.field)
            if self.args.on_error == "stop":
                raise err from None
            self.stats.dropped["bad_cell"] += 1
            self.stats.note_error(str(err))
            return
        norm = prompting.normalize_question(p.question)
        p.source = self.args.source or p.source or mod.SOURCE
        if self._duplicate(p, norm):
            return
        # a row's own split (MBPP's task ids) where its file gives none
        split = p.split if self.input.split == "hash" and p.split and self.args.splits == "dataset" \
            else self.input.split
        self.pending.append((p, (mod, norm, f, row_idx, split, self.input.has_reference)))
        if self.verifier is None or len(self.pending) >= self.args.verify_batch or self._full():
            self._flush()

    def _duplicate(self, p: Problem, norm: str) -> bool:
        """True (counted) when an earlier row asked the same prompt and grades the same way; a row that only
        shares the question text with an earlier one is another task (e.g. another function name and tests):
        kept, and reported in stats.json `same_question`."""
        asked = _digest(prompting.normalize_question(p.user))
        key = _digest(asked, graded_key(p))
        if key in self.seen:
            self.stats.duplicates += 1
            self.stats.dropped["duplicate"] += 1
            return True
        self.seen.add(key)
        q = _digest(norm)
        first = self.questions.get(q)
        if first is None:
            self.questions[q] = (p.source_id, asked)
        else:
            self.stats.note_same_question(p.source_id, first[0], same_prompt=first[1] == asked)
        return False

    def _flush(self) -> None:
        batch, self.pending = self.pending, []
        if not batch:
            return
        if self.verifier is not None:
            results = self.verifier.run([p for p, _ in batch], [m[5] for _, m in batch])
            for rep, res, (_, (_, _, f, row_idx, _, _)) in zip(self.verifier.reports, results, batch, strict=True):
                if rep is not None:
                    line = {"file": str(f), "row": row_idx, "kept": not isinstance(res, str), **rep}
                    self.out[VERIFY_REPORT].write(json.dumps(line, ensure_ascii=False) + "\n")
            self.vbar.set_postfix(kept=self.verifier.stats["problems_kept"], refresh=False)
        else:
            results = [p for p, _ in batch]
        for res, (_, (mod, norm, f, row_idx, rule, _)) in zip(results, batch, strict=True):
            if isinstance(res, str):
                self.stats.dropped[res] += 1
                continue
            if self.args.max_samples is not None and self.stats.rows_written >= self.args.max_samples:
                return
            self._write(res, mod, norm, f, row_idx, rule)

    def _within_budget(self, messages: list[dict], f, row_idx: int) -> bool:
        """Measure the prompt as the trainer will; False when it is over budget and gets dropped."""
        from coderl.data.prompt_budget import prompt_lengths

        a = self.args
        n = prompt_lengths(self.tokenizer, [messages])[0]
        self.stats.prompt_tokens.append(n)
        if a.max_prompt_tokens is None or n <= a.max_prompt_tokens:
            return True
        self.stats.prompts_over += 1
        self.stats.note_error(f"file {f}, row {row_idx}: prompt has {n} tokens, over --max_prompt_tokens "
                              f"{a.max_prompt_tokens}" + (" (dropped)" if a.over_budget == "drop" else " (kept)"))
        if a.over_budget == "drop":
            self.stats.dropped["prompt_too_long"] += 1
            return False
        return True

    def _write(self, p: Problem, mod, norm: str, f, row_idx: int, rule: str) -> None:
        a = self.args
        tests = p.tests
        if a.max_tests_per_problem and p.format != "humaneval" and len(tests) > a.max_tests_per_problem:
            tests = tests[:a.max_tests_per_problem]
            self.stats.tests_truncated += 1
        label = Label(format=p.format, tests=tuple(tests), entry_point=p.entry_point, setup_code=p.setup_code,
                      source=p.source, source_id=p.source_id, ref_time_s=p.ref_time_s,
                      time_limit_s=p.time_limit_s,
                      reference_solution=p.reference if a.keep_reference else None,
                      extra={"answer_format": self.system.answer_format, "schema": mod.NAME, **p.extra})
        label_dict = label.to_dict()
        try:
            parse_label(label_dict)  # the reward server will parse it: fail here, naming the row
        except LabelError as e:
            err = io.DataError(f"produces an invalid label: {e}", file=str(f), row=row_idx)
            if a.on_error == "stop":
                raise err from None
            self.stats.dropped["invalid_label"] += 1
            self.stats.note_error(str(err))
            return
        split = split_of(norm, a.seed, a.test_ratio) if rule == "hash" else rule
        messages = [{"role": "system", "content": self.system.text}, {"role": "user", "content": p.user}]
        if self.tokenizer is not None and not self._within_budget(messages, f, row_idx):
            return
        label_json = json.dumps(label_dict, ensure_ascii=False, sort_keys=True)  # == label.to_json()
        self.rows.write(split, messages, label_json, label.source, label.source_id)
        self.stats.rows_written += 1
        self.stats.splits[split] += 1
        if rule == "hash" and schemas.is_benchmark(mod) and split == "train":
            self.stats.benchmark_rows_in_train += 1
        seen = self.split_seen.setdefault(_digest(norm), [0, label.source_id])
        seen[0] |= 1 if split == "train" else 2
        self.stats.formats[p.format] += 1
        self.stats.tests_per_row.append(len(tests))


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if not 0 <= args.test_ratio <= 1:
        print("error: --test_ratio must be in [0, 1]", file=sys.stderr)
        return 2
    if args.workers < 1:
        print("error: --workers must be at least 1", file=sys.stderr)
        return 2
    if args.max_prompt_tokens is not None and (args.max_prompt_tokens < 1 or not args.tokenizer):
        print("error: --max_prompt_tokens needs a positive budget and --tokenizer (the training model's "
              "tokenizer directory: prompts are measured under its chat template)", file=sys.stderr)
        return 2
    if os.path.exists(args.output_dir) and not os.path.isdir(args.output_dir):
        print(f"error: --output_dir {args.output_dir} exists and is not a directory", file=sys.stderr)
        return 2
    try:
        d = Run(args).execute()
    except (io.DataError, ValueError, OSError, RuntimeError) as e:  # RuntimeError: SandboxError
        print(f"error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted: no output written", file=sys.stderr)
        return 130
    print(summary(d, args.output_dir))
    return 0


if __name__ == "__main__":
    sys.exit(main())
