"""``--method NAME`` -> its config dataclass without importing torch, so ``--method`` / ``--set`` are checked
at once.

The table itself is :mod:`unlearnkit.methods` (``light_config``; ``tests/test_cli_validation.py`` checks it
against the real registry, ``unlearnkit.train.methods.METHODS``, field by field); this module adds the
command line's error for an unknown name, with the registry's hint.
"""

from __future__ import annotations

from unlearnkit.errors import UserError
from unlearnkit.methods import light_config, light_names, normalise

__all__ = ["light_config", "light_names", "method_config", "normalise"]


def method_config(name: str) -> type:
    """The config class of ``name``; an unknown name is one error line with a hint, still without torch.

    The table agrees with the real registry (tested), so a name it does not know is not a method.
    """
    cls = light_config(name)
    if cls is not None:
        return cls
    import difflib

    from unlearnkit.commands.settings_doc import COMMANDS

    known = sorted(light_names())
    near = difflib.get_close_matches(normalise(name), known + list(COMMANDS), n=1)
    hint = f"; did you mean '{near[0]}'?" if near else ""
    if normalise(name) in COMMANDS:
        hint = f"; `{normalise(name)}` is a command, not an unlearning method: `unlearnkit methods {normalise(name)}` lists its settings"
    raise UserError(f"--method {name}: unknown method{hint} (known: {', '.join(known)})")
