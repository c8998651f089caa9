"""The start-up the bench scripts share: the repository's root, an argument parser that
a script's docstring describes, and Django set up in the script's own process.

Run as ``python bench/<script>.py``, a script has ``bench/`` on ``sys.path``, not the
repository, so it puts the root there itself before it imports this module::

    if __package__ in (None, ""):  # run as a script: make the repository importable
        sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

SETTINGS = "patience_site.settings"


def parser(doc: str | None, **kwargs: Any) -> argparse.ArgumentParser:
    """An argument parser whose description is the first paragraph of ``doc``."""
    return argparse.ArgumentParser(description=(doc or "").split("\n\n")[0], **kwargs)


def django_setup(env: Mapping[str, str] | None = None) -> None:
    """Set up Django in this process: ``env`` goes into the environment first (the
    settings read it), on the project's settings unless ``env`` names others."""
    os.environ.update({"DJANGO_SETTINGS_MODULE": SETTINGS, **(env or {})})
    import django

    django.setup()
