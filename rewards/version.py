"""coderl's version, and the `--version` flag every command line tool has. Standard library only."""

from __future__ import annotations

import argparse


def version() -> str:
    """The installed distribution's version; a checkout nobody pip-installed says so."""
    try:
        from importlib.metadata import PackageNotFoundError
        from importlib.metadata import version as dist_version

        return dist_version("coderl")
    except PackageNotFoundError:
        return "0.1.0+checkout"


class _Version(argparse.Action):
    """argparse's version action without its line wrapping (a long program path split the version in two)."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, **kwargs) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        print(f"{parser.prog} (coderl {version()})")  # to stdout, as argparse's own
        parser.exit()


def add_version_flag(parser: argparse.ArgumentParser) -> None:
    """`--version`: prints `PROG (coderl VERSION)` on one line and exits 0."""
    parser.add_argument("--version", action=_Version, help="show the program's version and exit")
