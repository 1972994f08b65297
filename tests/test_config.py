"""Configuration: key validation with suggestions, coercion, ranges, aliases, recipes."""

from __future__ import annotations

import pytest

from unlearnkit.catalog import ASUConfig, NPOConfig
from unlearnkit.config import TrainConfig, build_configs, load_recipe, parse_set
from unlearnkit.errors import UserError
from unlearnkit.train.methods import get_method


def test_defaults_follow_the_papers():
    asu = ASUConfig()
    assert (asu.tau, asu.forget_weight, asu.retain_loss) == (2.3, 0.1, "nll")
    assert NPOConfig().beta == 0.1
    tok = get_method("t-npo").config()
    assert (tok.r, tok.alpha, tok.selection, tok.retain_loss) == (0.2, 0.7, "hard", "kl")
    assert get_method("asu_kl").config().retain_loss == "kl"


def test_set_values_are_coerced_and_split():
    train, method = build_configs(
        ASUConfig,
        parse_set(
            ["lr=1e-4", "tau=3", "lambda=0.2", "layers=0,1", "gradient_checkpointing=true", "lora.r=8"]
        ),
    )
    assert train.lr == 1e-4 and train.gradient_checkpointing is True and train.lora_r == 8
    assert method.tau == 3.0 and method.forget_weight == 0.2 and method.layer_list() == [0, 1]


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"tua": "2"}, "did you mean 'tau'"),
        ({"lr": "-1"}, "lr=-1.0 is invalid"),
        ({"tau": "0"}, "tau=0.0 is invalid"),
        ({"lr": "fast"}, "expected a number"),
        ({"batch_size": "2.5"}, "expected an integer"),
        ({"retain_loss": "mse"}, "retain_loss='mse' is invalid"),
        ({"layers": "a,b"}, "layers='a,b' is invalid"),
        ({"idk": "maybe"}, "expected true or false"),
    ],
)
def test_bad_values_are_one_line_user_errors(values, message):
    with pytest.raises(UserError, match=message) as err:
        build_configs(ASUConfig, values)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"r": "0"}, "r=0.0"),
        ({"alpha": "1.5"}, "alpha=1.5"),
        ({"tau_w": "0"}, "tau_w=0.0"),
        ({"selection": "top"}, "selection"),
    ],
)
def test_token_selection_ranges(values, message):
    with pytest.raises(UserError, match=message):
        build_configs(get_method("t-npo").config, values)


def test_method_specific_keys_are_rejected_elsewhere():
    with pytest.raises(UserError, match="unknown key 'tau'"):
        build_configs(NPOConfig, {"tau": "2"})


def test_parse_set_rejects_missing_equals():
    with pytest.raises(UserError, match="expected key=value"):
        parse_set(["lr"])


def test_recipe_flattening_and_errors(tmp_path):
    recipe = tmp_path / "r.yaml"
    recipe.write_text("lr: 1.0e-5\nlora:\n  r: 8\n  alpha: 16\n", encoding="utf-8")
    values = load_recipe(recipe)
    assert values == {"lr": 1e-5, "lora.r": 8, "lora.alpha": 16}
    train, _ = build_configs(NPOConfig, values)
    assert train.lora_r == 8 and train.lora_alpha == 16.0
    bad = tmp_path / "bad.yaml"
    bad.write_text("lr: [1\n", encoding="utf-8")
    with pytest.raises(UserError, match="invalid YAML"):
        load_recipe(bad)


def test_train_config_ranges():
    with pytest.raises(ValueError, match="reference"):
        TrainConfig(reference="shared")


def test_an_alias_and_its_field_name_are_one_setting():
    """`lambda` is ASU's forget_weight: a tuned recipe saying `lambda` must not outvote an explicit
    forget_weight in a later dict (the ASU tau x lambda bench ran every lambda at the recipe's value)."""
    from unlearnkit.config import canonical

    merged = {**canonical({"lambda": 0.935, "tau": 6.7}), **canonical({"forget_weight": 0.1})}
    assert merged == {"forget_weight": 0.1, "tau": 6.7}
    _, cfg = build_configs(ASUConfig, merged)
    assert cfg.forget_weight == 0.1
    with pytest.raises(UserError, match="'lambda' and 'forget_weight' are the same setting"):
        build_configs(ASUConfig, {"lambda": 0.935, "forget_weight": 0.1})
    _, cfg = build_configs(ASUConfig, {"lambda": 0.5, "forget_weight": 0.5})  # the same value twice is fine
    assert cfg.forget_weight == 0.5


def test_the_quickstart_overrides_win_over_a_tuned_recipe(tmp_path, monkeypatch):
    from unlearnkit.pipelines import quickstart

    (tmp_path / "asu.yaml").write_text("method: asu\nlr: 1.0e-4\nepochs: 8\nlambda: 0.935\ntau: 6.7\n")
    monkeypatch.setattr(quickstart, "TUNED_DIR", tmp_path)
    tuned = quickstart.method_overrides("asu", 0)
    assert tuned["forget_weight"] == 0.935 and "lambda" not in tuned and tuned["lr"] == 1e-4
    shared = quickstart.method_overrides("asu", 0, tuned=False)
    assert shared["lr"] == quickstart.TINY_UNLEARN["lr"] and shared["forget_weight"] == 1.0


def test_set_wins_over_the_recipe_whichever_name_each_uses(tmp_path):
    import argparse

    from unlearnkit.commands._common import overrides

    recipe = tmp_path / "asu.yaml"
    recipe.write_text("method: asu\nlambda: 0.935\n")
    args = argparse.Namespace(config=str(recipe), set=["forget_weight=0.1"], method="asu")
    assert overrides(args)["forget_weight"] == "0.1"  # --set values stay strings until build_configs
    args = argparse.Namespace(config=str(recipe), set=["lambda=0.2"], method="asu")
    assert overrides(args) == {"forget_weight": "0.2"}
