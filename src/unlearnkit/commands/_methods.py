"""Method name -> config dataclass without importing torch, so ``--method`` / ``--set`` are checked at once.

``unlearnkit.train.methods`` holds the real registry (steps, objectives: it imports torch). This table only
mirrors which config class each built-in method uses; ``tests/test_cli_validation.py`` checks that it
agrees with ``methods.METHODS`` field by field. An unknown name is rejected here, with the registry's hint.
"""

from __future__ import annotations

import dataclasses

from unlearnkit import config as C
from unlearnkit.errors import UserError

_PLAIN = {
    "ga": C.GAConfig,
    "gd": C.GDConfig,
    "npo": C.NPOConfig,
    "wga": C.WGAConfig,
    "idk": C.IDKConfig,
    "simnpo": C.SimNPOConfig,
    "idk_dpo": C.DPOConfig,
    "idk_ap": C.IDKAPConfig,
    "me_gd": C.MEConfig,
    "undial": C.UNDIALConfig,
    "rmu": C.RMUConfig,
    "asu_rmu": C.ASURMUConfig,
    "asu": C.ASUConfig,
    "asu_gd": C.ASUConfig,
}
_WITH_DEFAULTS = {"asu_kl": (C.ASUConfig, {"retain_loss": "kl"}), "asu_idk": (C.ASUConfig, {"idk": True})}
_TOKEN_BASES = ("ga", "wga", "npo", "rmu", "asu")


def _with_default(cls: type, **defaults) -> type:
    fields = [(k, type(v), dataclasses.field(default=v)) for k, v in defaults.items()]
    return dataclasses.make_dataclass(cls.__name__, fields, bases=(cls,))


def normalise(name: str) -> str:
    """As ``methods.get_method``: case-insensitive, ``t_npo`` = ``t-npo``."""
    key = name.strip().lower()
    return key.replace("_", "-") if key.startswith(("t_", "s_")) else key


def light_config(name: str) -> type | None:
    """The config class of a built-in method, or None when this table does not know ``name``."""
    key = normalise(name)
    if key in _PLAIN:
        return _PLAIN[key]
    if key in _WITH_DEFAULTS:
        base, defaults = _WITH_DEFAULTS[key]
        return _with_default(base, **defaults)
    prefix, _, base = key.partition("-")
    if prefix in ("t", "s") and base in _TOKEN_BASES:
        extra = {"retain_loss": "none"} if base == "rmu" else {}
        selection = "hard" if prefix == "t" else "soft"
        return _with_default(C.token_variant(_PLAIN[base]), selection=selection, **extra)
    return None


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


def light_names() -> list[str]:
    tokens = [f"{p}-{b}" for b in _TOKEN_BASES for p in ("t", "s")]
    return [*_PLAIN, *_WITH_DEFAULTS, *tokens]
