"""Shared fixtures: tiny random models built in-process and a miniature embedded world (no downloads)."""

from __future__ import annotations

import os
import sys
import tempfile

# The environment every test runs in, fixed here before anything imports huggingface_hub, datasets or
# transformers (they read these variables once, at import). A caller's HF_HUB_OFFLINE=1, HF_ENDPOINT,
# HF_HOME cache or UNLEARNKIT_* settings must not change what a test sees; a test that needs one of
# them sets it itself (monkeypatch, or the env of its subprocess).
HUB_VARIABLES = (
    "HF_HUB_OFFLINE",
    "TRANSFORMERS_OFFLINE",
    "HF_DATASETS_OFFLINE",
    "HF_ENDPOINT",
    "HF_HUB_CACHE",
    "HF_DATASETS_CACHE",
    "TRANSFORMERS_CACHE",
    "UNLEARNKIT_DATA_ROOT",
    "UNLEARNKIT_CACHE",
)
CLOSED_PORT = "http://127.0.0.1:9"  # the hub "unreachable" at once, on any network
for _var in HUB_VARIABLES:
    os.environ.pop(_var, None)
os.environ["HF_ENDPOINT"] = CLOSED_PORT
os.environ["HF_HOME"] = tempfile.mkdtemp(prefix="unlearnkit-tests-hf-")  # no user cache leaks in
os.environ["TOKENIZERS_PARALLELISM"] = "false"

import pytest  # noqa: E402
import torch  # noqa: E402


@pytest.fixture(scope="session")
def mini_world(tmp_path_factory):
    """12 authors x 4 facts (3 forget, 3 holdout, 6 retain authors) + 10 world facts and 2 real authors
    x 4 facts in general (and small corpus / muse / wmdp parts)."""
    from unlearnkit.world import write_world

    path = tmp_path_factory.mktemp("world") / "mini"
    write_world(
        path,
        n_authors=12,
        facts_per_author=4,
        forget_fraction=0.25,
        holdout_fraction=0.25,
        n_general=10,
        seed=0,
        n_real_authors=2,
        n_agents=2,
        n_articles=10,
    )
    return path


@pytest.fixture(scope="session")
def mini_bench(mini_world):
    from unlearnkit.data import load_benchmark

    return load_benchmark(mini_world, eval_fields=True)


@pytest.fixture(scope="session")
def world_tokenizer(mini_bench):
    from unlearnkit.world.tiny import corpus_of, train_tokenizer

    rows = mini_bench.forget + mini_bench.retain + mini_bench.holdout + mini_bench.general
    return train_tokenizer(corpus_of(rows), vocab_size=512)


@pytest.fixture
def make_tiny_llama(world_tokenizer):
    """Factory: a fresh 2-layer, hidden-16 random Llama over the world's tokenizer (same seed, same weights)."""
    from tiny_models import random_llama

    return lambda: random_llama(world_tokenizer)


@pytest.fixture
def tiny_random_llama(make_tiny_llama):
    """A 2-layer, hidden-16 random Llama over the world's tokenizer (float32, eval mode)."""
    return make_tiny_llama()


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory, mini_bench, world_tokenizer):
    """A tiny random Llama saved as an HF folder with safetensors (no training)."""
    from tiny_models import random_llama

    from unlearnkit.models import save_model

    model = random_llama(world_tokenizer, hidden=32, kv_heads=4, tie_word_embeddings=True)
    path = tmp_path_factory.mktemp("models") / "tiny"
    save_model(model, world_tokenizer, path, {"kind": "test model"})
    return path


@pytest.fixture(autouse=True, scope="session")
def _one_thread():
    """Tests run on 2 shared cores: one intra-op thread avoids oversubscription stalls."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(autouse=True)
def _hub_state_reset():
    """Code under test may switch this process offline (``models._go_offline`` after a failed probe)
    or set the hub variables; undo it, so no test sees what an earlier one left behind."""
    yield
    for var in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE"):
        os.environ.pop(var, None)
    os.environ["HF_ENDPOINT"] = CLOSED_PORT
    constants = sys.modules.get("huggingface_hub.constants")
    if constants is not None:
        constants.HF_HUB_OFFLINE = False
    models = sys.modules.get("unlearnkit.models")
    clear = getattr(getattr(models, "hub_reachable", None), "cache_clear", None)
    if clear is not None:
        clear()
