"""Errors of the Python API: every bad input is an :class:`~unlearnkit.errors.ArgumentError` (a
``ValueError``) whose message names the Python argument, not the command-line flag.

The checks deeper down (the pipelines, the data loaders, the evaluation plan) are shared with the
command line and word their errors for it (``--set lr=...``, ``--eval-every``); :func:`python_errors`
rewords those flags as the keywords the API takes, so both keep one set of checks.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator, Mapping

from unlearnkit.errors import ArgumentError, UserError

# ``result.save(path, overwrite=False)``: the output folder's errors in its keywords
SAVE_FLAGS = {"output": "path", "overwrite": "overwrite=True"}
_SET = re.compile(r"--set (?=[A-Za-z_][\w.]*=)")
_FLAG = re.compile(r"--([a-z][a-z-]*)")
_FLAG_VALUE = re.compile(r"--([a-z][a-z-]*) ([A-Z][A-Z_]*)\b")  # a flag with its metavar: --eval-every N
_FLAG_NUMBER = re.compile(r"--([a-z][a-z-]*) (-?\d[\d.e+-]*)(?![\w.])")  # a flag with a number: --lr 1e-05


def reworded(message: str, flags: Mapping[str, str] | None = None) -> str:
    """``message`` with ``--set key=value`` as ``key=value``, ``--flag METAVAR`` and ``--flag 0.5`` as
    ``keyword=METAVAR`` / ``keyword=0.5``, and every other ``--flag`` as its keyword.

    ``flags`` maps a flag without dashes to its keyword (others: dashes as underscores), or a flag with
    a word value (``"relearn-control retain"``) to the whole argument (``'relearn_control="retain"'``):
    after a flag, a word may be its value or the sentence going on, so only the words named are values.
    """
    names = dict(flags or {})

    def keyword(flag: str) -> str:
        return names.get(flag, flag.replace("-", "_"))

    text = _SET.sub("", message)
    for flag_and_word in (k for k in names if " " in k):  # the word values named: --relearn-control retain
        text = re.sub(rf"--{re.escape(flag_and_word)}\b", names[flag_and_word], text)
    text = _FLAG_NUMBER.sub(lambda m: f"{keyword(m.group(1))}={m.group(2)}", text)  # --lr 1e-05
    text = _FLAG_VALUE.sub(lambda m: f"{keyword(m.group(1))}={m.group(2)}", text)  # --base MODEL
    return _FLAG.sub(lambda m: keyword(m.group(1)), text)


@contextlib.contextmanager
def python_errors(flags: Mapping[str, str] | None = None) -> Iterator[None]:
    """Turn a :class:`UserError` raised inside into an :class:`ArgumentError` in the API's words."""
    try:
        yield
    except ArgumentError:
        raise
    except UserError as err:
        raise ArgumentError(reworded(str(err), flags)) from None
