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


def add_version_flag(parser: argparse.ArgumentParser) -> None:
    """`--version`: prints `PROG coderl VERSION` and exits 0."""
    parser.add_argument("--version", action="version", version=f"%(prog)s (coderl {version()})")
