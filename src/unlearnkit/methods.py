"""Every unlearning method's settings as one config class, importable without torch.

``from unlearnkit.methods import NPOConfig`` gives the class a researcher passes to
:func:`unlearnkit.unlearn` (``method=NPOConfig(lr=1e-4, beta=0.2)``), the way TRL's trainers take a
``DPOConfig``: one class per registered method, named by its method's name in capitals without ``-`` /
``_`` plus ``Config`` (``npo`` -> ``NPOConfig``, ``asu_kl`` -> ``ASUKLConfig``, ``t-npo`` ->
``TNPOConfig``). Its fields are the training settings (:class:`unlearnkit.config.TrainConfig`: ``lr``,
``epochs``, ``batch_size`` ...) and the method's own (its dataclass in :mod:`unlearnkit.catalog`:
``beta``, ``tau``, ``forget_weight`` ...), with their defaults and checks, read from those dataclasses:
nothing here repeats a default.

A config remembers which fields its caller set (passed to it, or assigned afterwards): only those override
what a model folder records for its scale (a tiny model's recipe, :func:`unlearnkit.models.scale_defaults`),
exactly as ``--set`` does on the command line; the others are the defaults the command would use too.
``dataclasses.replace`` passes every field again, so on a copy made with it every field counts as set.

Which settings dataclass each method has, its paper and its name are read from the method's one
declaration in :mod:`unlearnkit.catalog`; this module only joins them with the training settings.
"""

from __future__ import annotations

import dataclasses
import functools
import re
import typing
from typing import Any, ClassVar

from unlearnkit import catalog
from unlearnkit import config as C
from unlearnkit.errors import ArgumentError, UserError


def class_name(method: str) -> str:
    """``npo`` -> ``NPOConfig``, ``asu_kl`` -> ``ASUKLConfig``, ``t-npo`` -> ``TNPOConfig``."""
    return "".join(part.upper() for part in re.split(r"[-_]", catalog.normalise(method))) + "Config"


def check_method_name(name: Any, argument: str = "method") -> str:
    """The registered name ``name`` means (``T_NPO`` -> ``t-npo``), or an :class:`ArgumentError` naming
    ``argument`` with the nearest name and the known ones."""
    if not isinstance(name, str):
        raise ArgumentError(
            f"{argument}={name!r}: give a method name ('npo') or a config from unlearnkit.methods "
            "(NPOConfig(...))"
        )
    spec = catalog.find(name)
    if spec is not None:
        return spec.name
    near = catalog.nearest(name)
    hint = f"; did you mean {near!r}?" if near else ""
    raise ArgumentError(
        f"{argument}={name!r}: unknown method{hint} (known: {', '.join(sorted(catalog.METHODS))})"
    )


class UnlearnConfig:
    """What every method's config class shares: the method it runs, and the fields its caller set.

    ``given()`` is what counts as the caller's own settings (the model folder's recorded scale defaults
    fill in the rest, as on the command line); ``values()`` is every field.
    """

    method: ClassVar[str]
    _given: frozenset[str]

    def __setattr__(self, name: str, value: Any) -> None:
        if getattr(self, "_tracking", False) and name in self.__dataclass_fields__:
            object.__setattr__(self, "_given", self._given | {name})
        object.__setattr__(self, name, value)

    def given(self) -> dict[str, Any]:
        """The fields passed to the constructor or assigned since, with their values."""
        return {name: getattr(self, name) for name in self.__dataclass_fields__ if name in self._given}

    def values(self) -> dict[str, Any]:
        """Every field with its value (defaults included)."""
        return {name: getattr(self, name) for name in self.__dataclass_fields__}

    def __post_init__(self) -> None:
        try:
            train_cfg, method_cfg = C.build_configs(
                catalog.settings_class(self.method), self.values(), caller=type(self).__name__
            )
        except ArgumentError:
            raise
        except UserError as err:
            raise ArgumentError(str(err)) from None
        checked = C.config_dict(train_cfg, method_cfg)
        for name in self.__dataclass_fields__:  # values as the method reads them ("1e-4" -> 1e-4)
            object.__setattr__(self, name, checked[name])


def _tracking_init(init):
    @functools.wraps(init)
    def __init__(self, **kwargs: Any) -> None:
        object.__setattr__(self, "_tracking", False)
        object.__setattr__(self, "_given", frozenset(kwargs))
        init(self, **kwargs)
        object.__setattr__(self, "_tracking", True)

    return __init__


def _fields_of(cls: type) -> list[tuple[str, Any, Any]]:
    hints = typing.get_type_hints(cls)
    out = []
    for f in dataclasses.fields(cls):
        default = (
            dataclasses.field(default_factory=f.default_factory)
            if f.default is dataclasses.MISSING
            else dataclasses.field(default=f.default)
        )
        out.append((f.name, hints[f.name], default))
    return out


def _doc_of(cls: type) -> str:
    """The first real docstring up ``cls``'s bases (``make_dataclass`` writes a bare signature)."""
    for klass in cls.__mro__:
        doc = klass.__dict__.get("__doc__") or ""
        if doc and not doc.startswith(f"{klass.__name__}("):
            return " ".join(doc.split())
    return ""


def _config_class(method: str) -> type:
    settings = catalog.settings_class(method)
    train = _fields_of(C.TrainConfig)
    own = _fields_of(settings)
    clash = {n for n, _, _ in train} & {n for n, _, _ in own}
    if clash:  # build_configs would give such a key to the method alone
        raise AssertionError(f"{method}: {sorted(clash)} are both training and method settings")
    name = class_name(method)
    cls = dataclasses.make_dataclass(
        name,
        own + train,
        bases=(UnlearnConfig,),
        namespace={"method": method, "__module__": __name__},
        kw_only=True,
    )
    cls.__init__ = _tracking_init(cls.__init__)
    cls.__doc__ = (
        f"The settings of ``{method}``: its own ({', '.join(n for n, _, _ in own)}; from "
        f"unlearnkit.catalog.{settings.__name__}: {_doc_of(settings)}) and the training settings of "
        "unlearnkit.config.TrainConfig (lr, epochs, batch_size ...). Keyword arguments only."
    )
    return cls


@functools.cache
def configs() -> dict[str, type]:
    """Method name -> its config class, for every registered method (built on first use: importing this
    module stays as cheap as the ``--method`` check)."""
    return {name: _config_class(name) for name in catalog.METHODS}


def config_class(method: str) -> type:
    """The config class of the method ``method`` (``"npo"`` -> :class:`NPOConfig`)."""
    return configs()[check_method_name(method)]


STUB_HEAD = '''\
# Generated from unlearnkit.catalog by `python -m unlearnkit.methods > src/unlearnkit/methods.pyi`: do not edit.
# The config classes are built at run time (unlearnkit/methods.py); this stub gives IDEs and type checkers
# their signatures. tests/test_api.py fails when it differs from what the catalog declares.

from typing import Any, ClassVar

class UnlearnConfig:
    """What every method's config class shares: the method it runs, and the fields its caller set."""

    method: ClassVar[str]
    def given(self) -> dict[str, Any]: ...
    def values(self) -> dict[str, Any]: ...

def class_name(method: str) -> str: ...
def check_method_name(name: Any, argument: str = "method") -> str: ...
def config_class(method: str) -> type[UnlearnConfig]: ...
def configs() -> dict[str, type[UnlearnConfig]]: ...
def stub_text() -> str: ...
'''
STUB_WIDTH = 100  # docstring lines in the stub (the line length is 110 with the indent)


def stub_text() -> str:
    """The text of ``methods.pyi``: every config class with its fields' types, defaults and meanings, so
    that an IDE completes and checks ``NPOConfig(beta=...)`` although the classes are built at run time.
    ``python -m unlearnkit.methods`` prints it; a test checks the file against it, so it cannot drift."""
    return STUB_HEAD + "".join(_class_stub(name, cls) for name, cls in configs().items())


def _class_stub(method: str, cls: type) -> str:
    """One config class: its docstring, each field with its meaning, and the keyword-only ``__init__``."""
    settings = catalog.settings_class(method)
    hints = typing.get_type_hints(cls)
    fields = dataclasses.fields(cls)
    lines = ["", f"class {cls.__name__}(UnlearnConfig):", *_docstring(cls.__doc__ or ""), ""]
    for f in fields:
        lines.append(f"    {f.name}: {hints[f.name].__name__}")
        meaning = C.help_of(settings, f.name) or C.help_of(C.TrainConfig, f.name)
        if meaning is not None:
            lines += _docstring(f"{meaning[0]} (valid: {meaning[1]})")
    lines += ["    def __init__(", "        self,", "        *,"]
    lines += [f"        {f.name}: {hints[f.name].__name__} = {_literal(f.default)}," for f in fields]
    lines.append("    ) -> None: ...")
    return "\n".join(lines) + "\n"


def _literal(value: Any) -> str:
    """A default as source text, strings double-quoted (as the formatter writes them)."""
    import json

    return json.dumps(value) if isinstance(value, str) else repr(value)


def _docstring(text: str) -> list[str]:
    """``text`` as a class-body docstring, wrapped, with no character that would end it early."""
    import textwrap

    text = " ".join(text.replace("\\", "/").replace('"', "'").split())
    wrapped = textwrap.wrap(text, width=STUB_WIDTH)
    if len(wrapped) == 1:
        return [f'    """{wrapped[0]}"""']
    return [f'    """{wrapped[0]}', *(f"    {line}" for line in wrapped[1:]), '    """']


__all__ = [
    "UnlearnConfig",
    "check_method_name",
    "config_class",
    "configs",
    "stub_text",
    *(class_name(name) for name in catalog.METHODS),
]


def __getattr__(name: str) -> Any:
    """``NPOConfig`` and the other classes, built on first use."""
    for cls in configs().values():
        if cls.__name__ == name:
            return cls
    if name.endswith("Config"):
        raise AttributeError(
            f"unlearnkit.methods has no {name}; the config classes are "
            f"{', '.join(cls.__name__ for cls in configs().values())}"
        )
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


if __name__ == "__main__":  # python -m unlearnkit.methods > src/unlearnkit/methods.pyi
    print(stub_text(), end="")
