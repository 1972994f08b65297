"""A deterministic fictitious-authors world in the TOFU schema (forget / retain / holdout / general)."""

from unlearnkit.world.generator import (
    FACT_TYPES,
    FIELDS,
    GENERAL_FACT_TYPES,
    SPLITS,
    generate_world,
    write_world,
)

__all__ = ["FACT_TYPES", "FIELDS", "GENERAL_FACT_TYPES", "SPLITS", "generate_world", "write_world"]
