"""Settings are discoverable: every ``--set`` key has a meaning and a range, and
``unlearnkit methods NAME`` / ``unlearn --method NAME --help`` show them with the real defaults."""

from __future__ import annotations

import dataclasses
import subprocess
import sys

import pytest

from unlearnkit import catalog
from unlearnkit import config as C
from unlearnkit.commands.settings_doc import settings_rows
from unlearnkit.config import help_of, setting


def _config_classes() -> list[type]:
    found = [c for m in (C, catalog) for c in vars(m).values() if isinstance(c, type)]
    found += [spec.config for spec in catalog.METHODS.values()]
    return [c for c in found if dataclasses.is_dataclass(c) and c is not catalog.MethodSpec]


def test_every_field_of_every_config_dataclass_has_a_meaning_and_a_range():
    missing = sorted(
        f"{cls.__name__}.{f.name}"
        for cls in _config_classes()
        for f in dataclasses.fields(cls)
        if help_of(cls, f.name) is None
    )
    assert not missing, (
        f"declare these fields with unlearnkit.config.setting(default, meaning, range): {missing}"
    )
    for cls in _config_classes():
        for f in dataclasses.fields(cls):
            meaning, valid = help_of(cls, f.name)
            assert meaning.strip() and valid.strip(), (cls, f.name)


def test_a_field_without_words_is_caught_and_a_subclass_keeps_its_base_words():
    """The check above can fail: a field declared without :func:`setting` has no meaning to print."""

    @dataclasses.dataclass
    class Base:
        beta: float = setting(0.1, "inverse temperature", "> 0")
        gamma: float = 0.0

    @dataclasses.dataclass
    class Child(Base):
        beta: float = 0.5  # a new default keeps the base's words

    assert help_of(Child, "beta") == ("inverse temperature", "> 0")
    assert help_of(Child, "gamma") is None
    rows = {r[0]: r for r in settings_rows(Child)}
    assert rows["beta"][1:] == ("0.5", "> 0", "inverse temperature")
    assert "not documented" in rows["gamma"][3]


def test_every_registered_method_documents_all_its_keys():
    from unlearnkit.train.methods import METHODS

    for name, method in METHODS.items():
        rows = settings_rows(method.config)
        assert {r[0] for r in rows} == {f.name for f in dataclasses.fields(method.config)}, name
        assert all("not documented" not in r[3] for r in rows), name


def test_defaults_shown_are_the_dataclass_defaults():
    rows = {r[0]: r for r in settings_rows(catalog.ASUConfig)}
    assert rows["tau"][1] == "2.3" and rows["forget_weight"][1] == "0.1" and rows["idk"][1] == "false"
    rows = {r[0]: r for r in settings_rows(C.TrainConfig)}
    assert rows["lr"][1] == "1e-05" and rows["reference"][2].startswith("auto | copy")


def test_methods_name_lists_every_key_with_default_range_and_meaning(capsys):
    from unlearnkit.cli import main
    from unlearnkit.train.methods import get_method

    assert main(["methods", "t-npo"]) == 0
    out = capsys.readouterr().out
    fields = [f.name for f in dataclasses.fields(get_method("t-npo").config)]
    fields += [f.name for f in dataclasses.fields(C.TrainConfig)]
    for key in fields:
        assert f"    {key} " in out, key
    assert "arXiv 2605.00364" in out
    assert "(0, 1]" in out  # r's range
    assert main(["methods", "npoo"]) == 2
    assert "did you mean 'npo'" in capsys.readouterr().err


@pytest.mark.parametrize(
    "argv", [["unlearn", "--method", "asu", "--help"], ["unlearn", "--help", "--method=asu"]]
)
def test_unlearn_help_with_a_method_shows_its_settings_without_torch(argv):
    code = (
        "import sys\nfrom unlearnkit.cli import main\nrc = main(sys.argv[1:])\n"
        "print('HEAVY', [m for m in ('torch', 'transformers') if m in sys.modules], rc)"
    )
    proc = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, timeout=120)
    assert "HEAVY [] 0" in proc.stdout, proc.stdout[-500:] + proc.stderr[-2000:]
    assert "--set keys of asu" in proc.stdout
    assert "    tau                      2.3" in proc.stdout


def _listed(out: str) -> dict[str, str]:
    """``key -> the rest of its line`` for every key row of a settings table (4-space indent)."""
    rows = {}
    for line in out.splitlines():
        if line.startswith("    ") and not line.startswith("     ") and len(line.split()) >= 2:
            key, _, rest = line.strip().partition(" ")
            rows[key.rstrip(",:")] = rest.strip()
    return rows


def test_methods_distill_lists_every_key_with_the_defaults_distill_uses(capsys):
    """``unlearnkit methods distill`` lists the distill command's keys, not the unlearning methods'."""
    from unlearnkit.cli import main
    from unlearnkit.train.distill import HF_DEFAULTS, TINY_BASE_DEFAULTS, TINY_DEFAULTS

    assert main(["methods", "distill"]) == 0
    out = capsys.readouterr().out
    rows = _listed(out)
    for key in [f.name for f in dataclasses.fields(C.DistillConfig)]:
        assert key in rows, key
    for key in [f.name for f in dataclasses.fields(C.TrainConfig) if not f.name.startswith("lora")]:
        assert key in rows, key
    assert rows["distill_on"].startswith("retain,general") and "corpus, text" in rows["distill_on"]
    assert rows["retain_nll_weight"].startswith("3.0")
    # a pretrained model's default, then [a small model's toward init / toward the base] where they differ
    assert rows["lr"].startswith(f"{HF_DEFAULTS['lr']} [{TINY_DEFAULTS['lr']} / {TINY_BASE_DEFAULTS['lr']}]")
    assert rows["epochs"].startswith(f"{HF_DEFAULTS['epochs']} [{TINY_DEFAULTS['epochs']} / 30.0]")
    assert rows["stop_epochs"].startswith("0.0 [0.0 / 15.0]")
    assert rows["reference"].split()[-5:] == ["auto", "|", "copy", "|", "cache"]  # no adapter for distill
    assert "lora_r, lora_alpha" in out and "refused" in out
    assert "never a model's own build seed" in out and "pretraining data" in out


def test_methods_finetune_lists_its_keys_and_says_which_it_ignores(capsys):
    from unlearnkit.cli import main
    from unlearnkit.commands.settings_doc import FINETUNE_UNUSED
    from unlearnkit.train.finetune import TINY_DEFAULTS

    assert main(["methods", "finetune"]) == 0
    out = capsys.readouterr().out
    rows = _listed(out)
    used = [f.name for f in dataclasses.fields(C.TrainConfig) if f.name not in FINETUNE_UNUSED]
    for key in used:
        assert key in rows, key
    assert rows["epochs"].startswith(
        f"5.0 [{TINY_DEFAULTS['epochs']}]"
    )  # --model tiny: the from-scratch recipe
    unused = out.split("not used by finetune:")[1]
    assert all(key in unused for key in FINETUNE_UNUSED)
    assert "distill_on" not in out and "forget_weight" not in out


def test_a_command_name_where_a_method_is_expected_points_to_its_settings(capsys):
    from unlearnkit.cli import main

    assert main(["methods", "distil"]) == 2
    assert "did you mean 'distill'" in capsys.readouterr().err
    assert main(["unlearn", "--method", "distill", "--model", "m", "--data", "d", "--output", "o"]) == 2
    assert "`unlearnkit methods distill` lists its settings" in capsys.readouterr().err
