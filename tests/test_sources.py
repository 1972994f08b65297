"""``resolve_data``: benchmark folders, and TOFU / MUSE / WMDP from the hub or a local copy.

The hub is never contacted: ``tests/fixtures/hub`` holds a few made-up rows per split in exactly the
hub schemas, laid out as ``<hub_id>/<config>...``. The hub path is tested by replacing
``datasets.load_dataset`` with a fake that records which (id, config, split) was requested and
answers with the fixture, so both paths share everything after the download.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import datasets
import pytest

from unlearnkit.data import Benchmark
from unlearnkit.data.encode import IGNORE_INDEX, PromptFormat, encode_qa, pad_batch
from unlearnkit.data.sources import (
    DATA_ROOT_ENV,
    SourceBenchmark,
    describe,
    local_files,
    resolve_data,
)
from unlearnkit.errors import UserError

HUB = Path(__file__).parent / "fixtures" / "hub"
REAL_LOAD = datasets.load_dataset


@pytest.fixture(autouse=True)
def _no_env_root(monkeypatch):
    monkeypatch.delenv(DATA_ROOT_ENV, raising=False)
    # the fake hub loads fixtures with datasets' json builder, which would ping the download counter
    monkeypatch.setattr(datasets.config, "HF_UPDATE_DOWNLOAD_COUNTS", False)


@pytest.fixture
def fake_hub(monkeypatch):
    """``datasets.load_dataset(hub_id, config, split=...)`` answered from the fixtures; calls recorded."""
    calls: list[tuple[str, str | None, str]] = []

    def fake(path, name=None, split=None, **kwargs):
        if path in ("json", "parquet"):  # the local-file path still works
            return REAL_LOAD(path, name, split=split, **kwargs)
        calls.append((path, name, split))
        files = local_files(HUB, path, name, split)
        if not files:
            raise FileNotFoundError(f"Couldn't find '{path}' on the Hugging Face Hub")
        return REAL_LOAD("json", data_files=[str(f) for f in files], split="train")

    monkeypatch.setattr(datasets, "load_dataset", fake)
    return calls


def _strip(bench: SourceBenchmark) -> dict:
    """Everything but provenance (which says hub vs local)."""
    return {
        "forget": bench.forget,
        "retain": bench.retain,
        "holdout": bench.holdout,
        "general": bench.general,
        "extra": bench.extra,
        "eval": bench.eval_splits,
    }


# --- TOFU ------------------------------------------------------------------------------------


def test_tofu_from_local_root_has_every_split():
    bench = resolve_data("tofu:forget01", path=HUB, eval_fields=True)
    assert isinstance(bench, SourceBenchmark) and isinstance(bench, Benchmark)
    assert bench.name == "tofu:forget01" and bench.kind == "qa"
    assert len(bench.forget) == 2 and bench.has_eval_fields
    assert len(bench.forget[0]["perturbed_answer"]) == 5
    assert len(bench.retain) == 6 and "perturbed_answer" not in bench.retain[0]  # retain99: training rows
    assert len(bench.holdout) == 2
    # real authors and world facts stay distinguishable (TOFU's 9-number model utility)
    assert sorted(bench.general_parts) == ["real_authors", "world_facts"]
    assert [r["source"] for r in bench.general] == ["real_authors"] * 2 + ["world_facts"] * 2
    assert bench.general_parts["world_facts"][0]["answer"] == "Tarsith"
    assert "option1" in bench.general[0]  # extra hub columns are kept
    # truth ratios on retain come from retain_perturbed, training uses retain99
    assert len(bench.eval_split("retain")) == 3 and "paraphrased_answer" in bench.eval_split("retain")[0]
    assert bench.eval_split("forget") is bench.forget
    assert bench.provenance["forget"].endswith("locuslab/TOFU/forget01_perturbed.json")
    assert bench.provenance["forget"].startswith("local:")


def test_tofu_without_eval_fields_reads_the_plain_forget_config():
    bench = resolve_data("tofu:forget01", path=HUB)
    assert not bench.has_eval_fields and bench.eval_splits == {}
    assert bench.provenance["forget"].endswith("forget01.json")


def test_tofu_hub_path_requests_the_right_configs_and_matches_local(fake_hub):
    hub = resolve_data("tofu:forget01", eval_fields=True)
    assert fake_hub == [
        ("locuslab/TOFU", "forget01_perturbed", "train"),
        ("locuslab/TOFU", "retain99", "train"),
        ("locuslab/TOFU", "holdout01", "train"),
        ("locuslab/TOFU", "real_authors_perturbed", "train"),
        ("locuslab/TOFU", "world_facts_perturbed", "train"),
        ("locuslab/TOFU", "retain_perturbed", "train"),
    ]
    assert hub.provenance["forget"] == "hub:locuslab/TOFU/forget01_perturbed[train]"
    assert _strip(hub) == _strip(resolve_data("tofu:forget01", path=HUB, eval_fields=True))


def test_env_var_root_is_used(monkeypatch, fake_hub):
    monkeypatch.setenv(DATA_ROOT_ENV, str(HUB))
    bench = resolve_data("tofu:forget01")
    assert fake_hub == [] and bench.provenance["retain"].startswith("local:")


def test_tofu_forget10_asks_for_retain90_and_holdout10(fake_hub):
    with pytest.raises(UserError, match="could not load locuslab/TOFU"):
        resolve_data("tofu:forget10")  # not in the fixtures: the first request fails
    assert fake_hub == [("locuslab/TOFU", "forget10", "train")]
    from unlearnkit.data.sources import TOFU_SPLITS

    assert TOFU_SPLITS["forget10"] == ("retain90", "holdout10")


def test_hub_failure_is_one_line_naming_the_env_var(fake_hub):
    with pytest.raises(UserError) as err:
        resolve_data("muse:books")
    assert DATA_ROOT_ENV in str(err.value) and "\n" not in str(err.value)


# --- MUSE ------------------------------------------------------------------------------------


def test_muse_local_and_hub_agree(fake_hub):
    hub = resolve_data("muse:news")
    assert sorted(set(fake_hub)) == sorted(
        {
            ("muse-bench/MUSE-News", "raw", "forget"),
            ("muse-bench/MUSE-News", "raw", "retain1"),
            ("muse-bench/MUSE-News", "verbmem", "forget"),
            ("muse-bench/MUSE-News", "knowmem", "forget_qa"),
            ("muse-bench/MUSE-News", "knowmem", "retain_qa"),
            ("muse-bench/MUSE-News", "knowmem", "forget_qa_icl"),
            ("muse-bench/MUSE-News", "knowmem", "retain_qa_icl"),
            ("muse-bench/MUSE-News", "privleak", "forget"),
            ("muse-bench/MUSE-News", "privleak", "retain"),
            ("muse-bench/MUSE-News", "privleak", "holdout"),
        }
    )
    local = resolve_data("muse:news", path=HUB)
    assert _strip(hub) == _strip(local)
    assert local.kind == "text" and set(local.forget[0]) == {"text", "_line"}
    assert set(local.extra["verbmem"][0]) >= {"prompt", "gt"}
    assert local.holdout == local.extra["privleak_holdout"]


def test_muse_parquet_shards_in_the_hub_layout(tmp_path):
    """``<config>/<split>-00000-of-00001.parquet`` (the hub's own files) load like JSON Lines."""
    src = HUB / "muse-bench" / "MUSE-News"
    for jsonl in src.rglob("*.json"):
        rel = jsonl.relative_to(src)
        out = tmp_path / "muse-bench" / "MUSE-News" / rel.parent / f"{rel.stem}-00000-of-00001.parquet"
        out.parent.mkdir(parents=True, exist_ok=True)
        REAL_LOAD("json", data_files=str(jsonl), split="train").to_parquet(str(out))
    assert _strip(resolve_data("muse:news", path=tmp_path)) == _strip(resolve_data("muse:news", path=HUB))


def test_max_rows_caps_every_set_but_icl_shots():
    bench = resolve_data("muse:news", path=HUB, max_rows=1)
    assert len(bench.forget) == 1 and len(bench.extra["knowmem_forget"]) == 1
    assert len(bench.extra["knowmem_forget_icl"]) == 1


MINI_MUSE = Path(__file__).parent / "fixtures" / "mini_muse"
# (config, split) of the hub layout -> the MUSE-like folder's file holding the same rows
MUSE_FOLDER_FILES = {
    ("raw", "forget"): "forget",
    ("raw", "retain1"): "retain",
    ("privleak", "forget"): "forget",
    ("privleak", "retain"): "retain",
    ("privleak", "holdout"): "holdout",
    ("verbmem", "forget"): "verbmem",
    ("knowmem", "forget_qa"): "knowmem_forget",
    ("knowmem", "retain_qa"): "knowmem_retain",
    ("knowmem", "forget_qa_icl"): "knowmem_forget_icl",
    ("knowmem", "retain_qa_icl"): "knowmem_retain_icl",
}


def test_muse_like_folder_equals_muse_from_the_same_rows(tmp_path):
    """A MUSE-like folder gives the object ``muse:news`` gives when its hub files hold the same rows."""
    hub = tmp_path / "muse-bench" / "MUSE-News"
    for (config, split), name in MUSE_FOLDER_FILES.items():
        (hub / config).mkdir(parents=True, exist_ok=True)
        shutil.copy(MINI_MUSE / f"{name}.jsonl", hub / config / f"{split}.jsonl")
    folder, named = resolve_data(MINI_MUSE), resolve_data("muse:news", path=tmp_path)
    assert type(folder) is SourceBenchmark and folder.kind == named.kind == "text"
    assert _strip(folder) == _strip(named)
    assert (
        folder.extra["privleak_forget"] == folder.forget
        and folder.holdout == folder.extra["privleak_holdout"]
    )
    assert set(folder.provenance) == set(named.provenance) | {"holdout"}  # muse:news: privleak_holdout
    assert folder.provenance["forget"] == f"local:{(MINI_MUSE / 'forget.jsonl').resolve()}"
    assert folder.name == "mini-muse" and describe(folder)["data"] == "mini-muse"


def test_muse_like_folder_without_icl_files_is_zero_shot(tmp_path):
    shutil.copytree(MINI_MUSE, tmp_path / "m")
    for part in ("forget", "retain"):
        (tmp_path / "m" / f"knowmem_{part}_icl.jsonl").unlink()
    bench = resolve_data(tmp_path / "m")
    assert "knowmem_forget_icl" not in bench.extra and len(bench.extra["knowmem_forget"]) == 3
    (tmp_path / "m" / "verbmem.jsonl").unlink()
    with pytest.raises(UserError, match="verbmem.jsonl is missing: a MUSE-like folder needs it"):
        resolve_data(tmp_path / "m")


# --- WMDP ------------------------------------------------------------------------------------


def test_wmdp_cyber_uses_wikitext_without_blank_lines(fake_hub):
    bench = resolve_data("wmdp:cyber")
    assert fake_hub == [
        ("cais/wmdp-corpora", "cyber-forget-corpus", "train"),
        ("Salesforce/wikitext", "wikitext-2-raw-v1", "test"),
    ]
    assert bench.kind == "text" and len(bench.forget) == 2
    assert len(bench.retain) == 2  # the empty line and the " = heading = " line are dropped
    assert all(len(r["text"].strip()) >= 50 for r in bench.retain)


def test_wmdp_bio_forget_corpus_and_retain_corpus(fake_hub):
    bench = resolve_data("wmdp:bio", wmdp_retain="corpus")
    assert fake_hub == [
        ("cais/wmdp-bio-forget-corpus", None, "train"),
        ("cais/wmdp-corpora", "bio-retain-corpus", "train"),
    ]
    assert set(bench.forget[0]) == {"text", "title", "_line"}  # abstract / doi dropped
    local = resolve_data("wmdp:bio", path=HUB, wmdp_retain="corpus")
    assert _strip(local) == _strip(bench)


# --- folders and errors ----------------------------------------------------------------------


def test_folder_is_delegated_to_load_benchmark(mini_world):
    bench = resolve_data(str(mini_world), eval_fields=True)
    assert type(bench) is Benchmark and bench.has_eval_fields


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("nope:thing", "not a known benchmark"),
        ("tofu:forget02", "unknown TOFU forget split"),
        ("muse:poems", "unknown MUSE corpus"),
        ("wmdp:chem", "unknown WMDP domain"),
        ("no/such/folder", "is not a folder"),
    ],
)
def test_bad_specs_are_user_errors(spec, message):
    with pytest.raises(UserError, match=message):
        resolve_data(spec, path=HUB)


def test_missing_local_file_names_the_paths_tried(tmp_path):
    with pytest.raises(UserError, match=r"no local copy of locuslab/TOFU .*forget01_perturbed"):
        resolve_data("tofu:forget01", path=tmp_path, eval_fields=True)
    with pytest.raises(UserError, match="is not a folder"):
        resolve_data("tofu:forget01", path=tmp_path / "missing")


def test_bad_row_in_a_local_copy_names_the_file_and_row(tmp_path):
    root = tmp_path / "locuslab" / "TOFU"
    root.mkdir(parents=True)
    for f in (HUB / "locuslab" / "TOFU").iterdir():
        (root / f.name).write_text(f.read_text())
    rows = [json.loads(x) for x in (root / "retain99.json").read_text().splitlines()]
    rows[1]["answer"] = " "
    (root / "retain99.json").write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(UserError, match=r"retain99.json:2: field 'answer' must be a non-empty string"):
        resolve_data("tofu:forget01", path=tmp_path)


def test_describe_records_provenance_and_counts():
    info = describe(resolve_data("tofu:forget01", path=HUB, eval_fields=True))
    assert info["data"] == "tofu:forget01"
    assert info["rows"]["general.real_authors"] == 2 and info["rows"]["eval.retain"] == 3
    assert set(info["provenance"]) >= {"forget", "retain", "holdout", "general.world_facts", "eval.retain"}


# --- padding never masks real tokens -----------------------------------------------------------


def test_eos_of_the_answer_survives_padding_when_pad_is_eos(world_tokenizer):
    """pad_token == eos_token: the answer's EOS keeps its label and attention; only padding is masked."""
    tok = world_tokenizer
    eos = tok.eos_token_id
    fmt = PromptFormat("plain")
    short = encode_qa(tok, fmt, "Where?", "Here.", 64)
    long = encode_qa(tok, fmt, "Where was the author born, exactly?", "In a small town by the sea.", 64)
    batch = pad_batch([short, long], pad_id=eos)  # padding with the EOS id itself
    n = len(short["input_ids"])
    assert short["input_ids"][-1] == eos and short["labels"][-1] == eos
    ids, labels, attn = batch["input_ids"][0], batch["labels"][0], batch["attention_mask"][0]
    assert int(ids[n - 1]) == eos and int(labels[n - 1]) == eos and int(attn[n - 1]) == 1
    assert (ids[n:] == eos).all() and (labels[n:] == IGNORE_INDEX).all() and (attn[n:] == 0).all()
    # the longer row is untouched: its EOS is the last position, labelled and attended
    assert int(batch["labels"][1][-1]) == eos and int(batch["attention_mask"][1][-1]) == 1
    # the same holds with left padding (generation batches)
    left = pad_batch([short, long], pad_id=eos, side="left")
    gap = left["input_ids"].shape[1] - n
    assert int(left["labels"][0][-1]) == eos and int(left["attention_mask"][0][-1]) == 1
    assert (left["attention_mask"][0][:gap] == 0).all() and (left["labels"][0][:gap] == IGNORE_INDEX).all()
