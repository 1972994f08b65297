"""Datasets: benchmark folders of JSON Lines in the TOFU schema, prompt formatting, collation."""

from unlearnkit.data.qa import Benchmark, load_benchmark, read_jsonl, validate_qa

__all__ = ["Benchmark", "load_benchmark", "read_jsonl", "validate_qa"]
