"""Display names of bank vocabulary (topics, seniorities, kinds), marked for translation.

Templates show them with ``_(...)``; the slugs stay English in URLs and files.
"""

from __future__ import annotations

from functools import cache

from app.i18n import N_, translations

TOPICS = {
    "collectives": N_("Collectives and their cost"),
    "data-parallel": N_("Data parallelism (DDP)"),
    "bucketing": N_("Gradient bucketing and overlap"),
    "memory": N_("Memory accounting"),
    "zero-fsdp": N_("ZeRO and FSDP"),
    "tensor-parallel": N_("Tensor parallelism"),
    "pipeline-parallel": N_("Pipeline parallelism"),
    "long-context": N_("Sequence and context parallelism"),
    "moe": N_("Mixture of experts"),
    "parallelism-strategy": N_("Combining parallelisms"),
    "hardware": N_("Hardware and interconnect"),
    "low-precision": N_("Low precision (bf16, FP8)"),
    "efficiency": N_("FLOPs, MFU and bottlenecks"),
    "fault-tolerance": N_("Fault tolerance"),
    "frameworks": N_("Frameworks"),
}
SENIORITIES = {"junior": N_("Junior"), "mid": N_("Mid-level"), "senior": N_("Senior")}
KINDS = {"single_choice": N_("Single choice"), "multi_choice": N_("Multiple choice"),
         "numeric": N_("Numeric"), "open": N_("Open answer")}
DIFFICULTIES = {1: N_("Warm-up"), 2: N_("Solid"), 3: N_("Hard")}
LABELS = {"topic": TOPICS, "seniority": SENIORITIES, "kind": KINDS, "difficulty": DIFFICULTIES}
AREAS = {"collectives": N_("Collectives"), "compute": N_("Compute and MFU"), "ddp": N_("DDP"),
         "fault-tolerance": N_("Fault tolerance"), "memory": N_("Memory"),
         "pipeline": N_("Pipeline"), "tensor-parallel": N_("Tensor parallelism"),
         "units": N_("Units")}


@cache
def translated(lang: str) -> dict[str, dict[object, str]]:
    """Every label in ``lang``, computed once per language (catalogs do not change at run time)."""
    catalog = translations(lang)
    return {group: {key: catalog.gettext(text) for key, text in names.items()}
            for group, names in (LABELS | {"area": AREAS}).items()}
