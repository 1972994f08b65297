"""ASU's temperature, found per model (issue 58 item 4): the rule on hand-made measurements, the
``unlearnkit teacher`` command, and ``tau=auto`` on the command line and from Python."""

from __future__ import annotations

import json

import pytest

from unlearnkit.cli import main
from unlearnkit.errors import UserError
from unlearnkit.evaluation.teacher_search import (
    choose,
    for_validation,
    is_auto_tau,
    parse_layer_ranges,
    parse_taus,
)


def _setting(tau, forget, degenerate=(0.0, 0.0, 0.0), layers=""):
    f, r, g = degenerate
    return {
        "tau": tau,
        "layers": layers,
        "forget": {"fact_score": forget, "degenerate": f},
        "retain": {"fact_score": 0.5, "degenerate": r},
        "general": {"fact_score": 0.5, "degenerate": g},
    }


def test_rule_smallest_tau_that_forgets_half_and_stays_fluent():
    base = _setting(1.0, 0.8)
    settings = [
        base,
        _setting(1.5, 0.6),  # fluent, keeps too much (0.6 > 0.4)
        _setting(1.8, 0.4),  # fluent, exactly half: chosen
        _setting(2.0, 0.1),
        _setting(3.0, 0.0, (1.0, 1.0, 1.0)),
    ]
    chosen, met = choose(settings)
    assert met and chosen["tau"] == 1.8
    # all layers before a layer range at the same temperature
    ranged = [base, _setting(1.8, 0.2, layers="0,1"), _setting(1.8, 0.3)]
    assert choose(ranged)[0]["layers"] == ""


def test_rule_fluency_bar_and_fallbacks():
    base = _setting(1.0, 0.8, (0.1, 0.0, 0.0))
    # forget answers 0.3 degenerate: allowed up to max(0.2, 0.1 + 0.1) = 0.2 -> not fluent
    assert choose([base, _setting(2.0, 0.0, (0.3, 0.0, 0.0))]) == (None, False)
    # nothing forgets half while fluent: the fluent setting that forgot most, rule not met
    chosen, met = choose([base, _setting(1.3, 0.7), _setting(1.5, 0.5), _setting(2.0, 0.0, (0, 0.5, 0))])
    assert chosen["tau"] == 1.5 and not met


def test_parsing():
    assert parse_taus("2,1.5") == (1.0, 1.5, 2.0)
    with pytest.raises(UserError):
        parse_taus("a,b")
    with pytest.raises(UserError):
        parse_taus("0,2")
    assert parse_layer_ranges("all,0-1", 2) == [None, (0, 1)]
    with pytest.raises(UserError, match="outside the model's layers 0-1"):
        parse_layer_ranges("0-5", 2)
    assert is_auto_tau({"tau": "Auto"}) and not is_auto_tau({"tau": 2.0})
    assert for_validation({"tau": "auto", "lr": 1}) == {"lr": 1}
    assert for_validation({"tau": 2.0}) == {"tau": 2.0}


def test_teacher_command(tiny_model_dir, mini_world, tmp_path, capsys):
    out = tmp_path / "teacher"
    code = main(
        ["teacher", "--model", str(tiny_model_dir), "--data", str(mini_world), "--output", str(out),
         "--taus", "2,5", "--layers", "all,1-1", "--max-items", "3", "--max-new-tokens", "6"]
    )
    printed = capsys.readouterr()
    assert code == 0, printed.err
    record = json.loads((out / "teacher.json").read_text())
    labels = [s["label"] for s in record["settings"]]
    assert labels == ["tau 1", "tau 2", "tau 2, layers 1", "tau 5", "tau 5, layers 1"]
    for s in record["settings"]:
        for part in ("forget", "retain", "general"):
            assert len(s[part]["answers"]) == 3
            assert 0.0 <= s[part]["degenerate"] <= 1.0 and 0.0 <= s[part]["token_entropy"] <= 1.0
    assert record["fact_score"] == "fact recall"  # the lab's rows carry fact_value
    assert "rule" in record and "chosen_tau" in record
    assert "tau 5, layers 1" in printed.out and "forget question:" in printed.out
    # the unsmoothed row is the model itself: its answers are plain greedy answers
    from unlearnkit.data.encode import PromptFormat
    from unlearnkit.metrics.passes import generate_answers
    from unlearnkit.models import load

    model, tok = load(str(tiny_model_dir))
    fmt = PromptFormat.for_tokenizer(tok, "auto")
    plain, _ = generate_answers(model, tok, fmt, record["questions"]["forget"], 6)
    assert record["settings"][0]["forget"]["answers"] == plain


def test_teacher_command_bad_input(tiny_model_dir, mini_world, tmp_path, capsys):
    out = tmp_path / "t"
    assert main(["teacher", "--model", str(tiny_model_dir), "--data", str(mini_world), "--output", str(out),
                 "--layers", "0-9"]) == 2
    assert "outside the model's layers" in capsys.readouterr().err and not out.exists()
    assert main(["teacher", "--model", str(tiny_model_dir), "--data", str(mini_world), "--output", str(out),
                 "--taus", "x"]) == 2
    assert not out.exists()


def test_tau_auto_from_python_records_the_search(tiny_model_dir, mini_bench, monkeypatch):
    from unlearnkit import unlearn
    from unlearnkit.evaluation import teacher_search

    monkeypatch.setattr(teacher_search, "DEFAULT_TAUS", (1.0, 2.0, 5.0))
    monkeypatch.setattr(teacher_search, "AUTO_NEW_TOKENS", 6)
    # a random model's answers are noise at any tau: make the fluency bar pass so that a tau is chosen
    monkeypatch.setattr(teacher_search, "DEGENERATE_MAX", 1.0)
    result = unlearn(
        str(tiny_model_dir), None, mini_bench.forget[:4], mini_bench.retain[:4], method="asu",
        tau="auto", max_steps=1, batch_size=2, quiet=True,
    )
    search = result.source["tau_search"]
    assert search["chosen_tau"] in (2.0, 5.0)
    assert result.config["tau"] == search["chosen_tau"]
    assert [s["tau"] for s in search["settings"]] == [1.0, 2.0, 5.0]
    assert "answers" not in search["settings"][0]["forget"]


def test_tau_auto_no_fluent_teacher_is_one_clear_error(tiny_model_dir, mini_world, tmp_path, capsys, monkeypatch):
    from unlearnkit.evaluation import teacher_search

    monkeypatch.setattr(teacher_search, "DEFAULT_TAUS", (1.0, 2.0))
    monkeypatch.setattr(teacher_search, "AUTO_NEW_TOKENS", 4)
    monkeypatch.setattr(teacher_search, "DEGENERATE_MAX", -1.0)  # nothing counts as fluent
    monkeypatch.setattr(teacher_search, "DEGENERATE_SLACK", -1.0)
    out = tmp_path / "u"
    code = main(["unlearn", "--model", str(tiny_model_dir), "--data", str(mini_world), "--method", "asu",
                 "--output", str(out), "--set", "tau=auto", "max_steps=1", "batch_size=2"])
    err = capsys.readouterr().err
    assert code == 2 and "tau=auto: no temperature above 1" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # no output, no work folder left
