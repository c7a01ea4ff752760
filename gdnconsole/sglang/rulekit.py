"""The pieces SGLang's argument rules are written in (``ruletables``): the context a rule reads (the
values as SGLang holds them at that point), rules, resolutions, and running a table in order. Pure."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from gdnconsole.sglang import flags as flagmod
from gdnconsole.sglang.findings import Finding, Severity
from gdnconsole.sglang.models import is_hybrid_gdn


@dataclass
class Ctx:
    """What a rule reads: the values as SGLang holds them at that point of its processing."""

    sglang: str
    values: dict[str, Any]
    given: dict[str, str]
    compute_capability: tuple[int, int] | None
    architecture: str | None
    env: Mapping[str, str]
    gpu_memory_mb: float | None = None
    # The checkpoint's config.json where the host has it (issue 26): its context length and quantization.
    model_config: Mapping[str, Any] | None = None

    def __getattr__(self, name: str) -> Any:
        try:
            return self.__dict__["values"][name]
        except KeyError:
            raise AttributeError(name) from None

    def set(self, **values: Any) -> None:
        self.values.update(values)

    @property
    def major(self) -> int | None:
        return self.compute_capability[0] if self.compute_capability else None

    @property
    def hybrid(self) -> bool:
        return is_hybrid_gdn(self.architecture)

    @property
    def arch(self) -> str:
        return self.architecture or "this model"

    @property
    def spec(self) -> bool:
        return self.values["speculative_algorithm"] is not None

    @property
    def backends(self) -> tuple[str | None, str | None]:
        """(prefill, decode) attention backends (511 ``get_attention_backends``)."""
        base = self.values["attention_backend"]
        return (
            self.values["prefill_attention_backend"] or base,
            self.values["decode_attention_backend"] or base,
        )

    @property
    def dp_attention(self) -> bool:
        return bool(self.values.get("enable_dp_attention")) or int(self.values.get("attn_dp_size") or 1) > 1


Condition = Callable[[Ctx], bool]
Text = Callable[[Ctx], str]


@dataclass(frozen=True)
class Rule:
    """One thing SGLang checks or silently changes. ``flags``: the dests of the fields it concerns."""

    id: str
    flags: tuple[str, ...]
    severity: Severity
    when: Condition
    message: Text
    source: str
    raises: str | None = None  # for errors: the exception type SGLang raises
    sglang_text: Text | None = None  # for errors: the exception's text
    then: Callable[[Ctx], None] | None = None  # what SGLang changes when the rule applies

    def marked_flag(self, ctx: Ctx) -> str | None:
        """The first of the rule's flags that the argv sets, else the first one."""
        if not self.flags:
            return None
        dest = next((d for d in self.flags if d in ctx.given), self.flags[0])
        return flag_for(ctx, dest)

    def finding(self, ctx: Ctx) -> Finding:
        return Finding(
            id=self.id,
            flag=self.marked_flag(ctx),
            message=self.message(ctx),
            source=self.source,
            severity=self.severity,
            raises=self.raises,
            sglang_text=self.sglang_text(ctx) if self.sglang_text else None,
        )


@dataclass(frozen=True)
class Resolve:
    """A default SGLang fills in at this point (no finding of its own)."""

    id: str
    apply: Callable[[Ctx], None]
    source: str
    when: Condition = field(default=lambda ctx: True)


Step = Rule | Resolve


def mamba_option(sglang: str) -> str:
    renamed = flagmod.parse_version(sglang) >= (0, 5, 14)
    return "--mamba-radix-cache-strategy" if renamed else "--mamba-scheduler-strategy"


def flag_for(ctx: Ctx, dest: str) -> str:
    """The flag of ``dest`` as typed, else this version's spelling of it."""
    if dest in ctx.given:
        return ctx.given[dest]
    if dest == "mamba_strategy":
        return mamba_option(ctx.sglang)
    table = flagmod.flag_table(ctx.sglang)
    for flag in table.flags:
        if flag.dest == dest:
            return flag.options[0]
    return "--" + dest.replace("_", "-")


# The values the rules read, with SGLang's defaults (511 ServerArgs fields; 523 arg_groups/fields).
DEFAULTS: dict[str, Any] = {
    "speculative_algorithm": None,
    "speculative_num_steps": None,
    "speculative_eagle_topk": None,
    "speculative_num_draft_tokens": None,
    "speculative_draft_model_path": None,
    "speculative_ngram_max_bfs_breadth": 10,
    "speculative_ngram_external_corpus_path": None,
    "speculative_ngram_external_sam_budget": 0,
    "speculative_ngram_external_corpus_max_tokens": 0,
    "speculative_dflash_block_size": None,
    "speculative_moe_runner_backend": None,
    "speculative_skip_dp_mlp_sync": False,
    "speculative_adaptive": False,
    "speculative_use_rejection_sampling": False,
    "speculative_draft_window_size": None,
    "speculative_draft_sink_size": None,
    "page_size": None,
    "attention_backend": None,
    "prefill_attention_backend": None,
    "decode_attention_backend": None,
    "linear_attn_backend": "triton",
    "linear_attn_decode_backend": None,
    "mamba_ssm_dtype": None,
    "disable_radix_cache": False,
    "disable_overlap_schedule": False,
    "max_running_requests": None,
    "enable_dp_attention": False,
    "enable_dp_lm_head": False,
    "attn_dp_size": 1,
    "pp_size": 1,
    "mamba_strategy": "auto",
    "mamba_track_interval": 256,
    "tp_size": 1,
    "dp_size": 1,
    "ep_size": 1,
    "nnodes": 1,
    "chunked_prefill_size": None,
    "chunked_prefill_candidates": (),  # the sizes SGLang may pick (coretables.chunk_default)
    "disaggregation_mode": "null",
    "enable_mixed_chunk": False,
    "kv_cache_dtype": "auto",
    "quantization": None,
    "moe_runner_backend": "auto",
    "moe_a2a_backend": "none",
    "deepep_mode": "auto",
    "enable_eplb": False,
    "moe_dense_tp_size": None,
    "schedule_policy": "fcfs",
    "enable_priority_scheduling": False,
    "schedule_conservativeness": 1.0,
    "context_length": None,
    "log_level": "info",
    "enable_two_batch_overlap": False,
    "enable_hierarchical_cache": False,
    "enable_deterministic_inference": False,
    "enable_lora": None,
    "enable_lora_overlap_loading": None,
    "lora_paths": None,
    "max_lora_rank": None,
    "lora_target_modules": None,
    "max_loras_per_batch": 8,
    "max_loaded_loras": None,
}

# 0.5.11's parser stores the long spellings; SGLang copies them to the short names (server_args.py:6677-6683).
_LONG_NAMES = {
    "tensor_parallel_size": "tp_size",
    "pipeline_parallel_size": "pp_size",
    "data_parallel_size": "dp_size",
    "expert_parallel_size": "ep_size",
}


def context(
    parsed: flagmod.ParsedArgv,
    sglang: str,
    *,
    compute_capability: str | None,
    architecture: str | None,
    env: Mapping[str, str] | None,
    gpu_memory_mb: float | None = None,
    model_config: Mapping[str, Any] | None = None,
) -> Ctx:
    values = dict(DEFAULTS)
    values.update(parsed.values)
    given = dict(parsed.given)
    for long, short in _LONG_NAMES.items():
        if long in parsed.values:
            values[short] = parsed.values[long]
            given[short] = parsed.given[long]
    for dest in ("mamba_scheduler_strategy", "mamba_radix_cache_strategy"):
        if dest in parsed.values:
            values["mamba_strategy"] = parsed.values[dest]
            given["mamba_strategy"] = parsed.given[dest]
    return Ctx(
        sglang=sglang,
        values=values,
        given=given,
        compute_capability=_capability(compute_capability),
        architecture=architecture,
        env=env or {},
        gpu_memory_mb=gpu_memory_mb,
        model_config=model_config,
    )


def _capability(text: str | None) -> tuple[int, int] | None:
    if not text:
        return None
    major, _, minor = text.strip().partition(".")
    try:
        return int(major), int(minor or 0)
    except ValueError:
        return None


def run_steps(steps: Sequence[Step], ctx: Ctx) -> tuple[list[Finding], list[Finding]]:
    """Apply the table in order. SGLang stops at the first error; we go on, as if that one were fixed,
    so the operator sees every error in one pass. Rules are ordered as SGLang's code runs them, so the
    first error found is the one SGLang raises."""
    errors: list[Finding] = []
    notices: list[Finding] = []
    for step in steps:
        if not step.when(ctx):
            continue
        if isinstance(step, Resolve):
            step.apply(ctx)
            continue
        finding = step.finding(ctx)
        if step.severity == "error":
            if all(e.id != finding.id for e in errors):
                errors.append(finding)
            continue
        notices.append(finding)
        if step.then is not None:
            step.then(ctx)
    return errors, notices


def mark_first(errors: Sequence[Finding]) -> list[Finding]:
    """The first error is the one SGLang raises: marked so."""
    return [replace(e, sglang_first=(i == 0)) for i, e in enumerate(errors)]
