"""Stand-in for sglang/srt/server_args.py: ``ServerArgs``, its CLI, and the argument rules.

Up to 0.5.21 SGLang validates in ``ServerArgs.__post_init__`` (511 server_args.py:782-909), so the
rules below raise from here and the traceback an operator sees names this module and SGLang's method
names. From 0.5.22 ``__post_init__`` is a no-op and ``resolve_once()`` runs ``srt/arg_groups`` hooks.
Each rule cites the 0.5.11 source line FACTS.md gives for it; the order is SGLang's.
"""

from __future__ import annotations

import argparse
import dataclasses
import logging
import os
from dataclasses import dataclass

import gdnsim.config as sim_config
from gdnsim.server import flags, models, sizing, version

logger = logging.getLogger(__name__)

EAGLE_FAMILY = ("EAGLE", "EAGLE3", "STANDALONE")  # NEXTN is renamed EAGLE first
PAGED_TOPK_BACKENDS = ("flashinfer", "fa3")  # 511 server_args.py:3548-3555
FLA_CHUNK_SIZE = 64  # srt/layers/attention/fla/chunk_delta_h.py


@dataclass
class ServerArgs:
    # model
    model_path: str
    tokenizer_path: str | None = None
    trust_remote_code: bool = False
    context_length: int | None = None
    dtype: str = "auto"
    kv_cache_dtype: str = "auto"
    quantization: str | None = None
    load_format: str = "auto"
    revision: str | None = None
    served_model_name: str | None = None
    chat_template: str | None = None
    reasoning_parser: str | None = None
    tool_call_parser: str | None = None
    random_seed: int | None = None
    # serving
    host: str = "127.0.0.1"
    port: int = 30000
    api_key: str | None = None
    skip_server_warmup: bool = False
    enable_metrics: bool = False
    watchdog_timeout: float = 300
    max_running_requests: int | None = None
    max_queued_requests: int | None = None
    max_total_tokens: int | None = None
    chunked_prefill_size: int | None = None
    max_prefill_tokens: int = 16384
    schedule_policy: str = "fcfs"
    disable_radix_cache: bool = False
    disable_overlap_schedule: bool = False
    enable_mixed_chunk: bool = False
    stream_interval: int = 1
    mem_fraction_static: float | None = None
    page_size: int | None = None
    # parallelism
    tp_size: int = 1
    dp_size: int = 1
    pp_size: int = 1
    base_gpu_id: int = 0
    gpu_id_step: int = 1
    enable_dp_attention: bool = False
    attn_dp_size: int = 1  # 0.5.22+
    nnodes: int = 1
    node_rank: int = 0
    # kernels
    attention_backend: str | None = None
    prefill_attention_backend: str | None = None
    decode_attention_backend: str | None = None
    sampling_backend: str | None = None
    enable_torch_compile: bool = False
    linear_attn_backend: str = "triton"
    # speculative decoding
    speculative_algorithm: str | None = None
    speculative_draft_model_path: str | None = None
    speculative_draft_model_revision: str | None = None
    speculative_num_steps: int | None = None
    speculative_eagle_topk: int | None = None
    speculative_num_draft_tokens: int | None = None
    speculative_accept_threshold_single: float = 1.0
    speculative_accept_threshold_acc: float = 1.0
    speculative_token_map: str | None = None
    speculative_attention_mode: str = "prefill"
    speculative_draft_attention_backend: str | None = None
    speculative_ngram_max_bfs_breadth: int = 10
    # mamba / hybrid linear attention
    max_mamba_cache_size: int | None = None
    mamba_ssm_dtype: str = "float32"
    mamba_track_interval: int = 256
    mamba_scheduler_strategy: str = "auto"  # up to 0.5.13 (an alias until 0.5.19)
    mamba_radix_cache_strategy: str = "auto"  # 0.5.14+
    # CUDA graphs
    disable_cuda_graph: bool = False
    disable_cuda_graph_padding: bool = False
    cuda_graph_max_bs: int | None = None
    cuda_graph_max_bs_prefill: int | None = None
    cuda_graph_bs: list[int] | None = None
    # logging
    log_level: str = "info"
    log_level_http: str | None = None
    log_requests: bool = False
    log_requests_level: int = 2
    decode_log_interval: int = 40
    show_time_cost: bool = False
    enable_cache_report: bool = False

    def __post_init__(self) -> None:
        if version.resolution_pipeline():
            return  # 523 server_args.py:241: a no-op; resolve_once() does the work
        self._handle_model_config()  # the first get_model_config() (511 _handle_pd_disaggregation, :3823)
        self._handle_missing_default_values()
        self._handle_gpu_memory_settings()
        self._handle_model_specific_adjustments()
        self._handle_attention_backend_compatibility()
        self._handle_page_size()
        self._handle_data_parallelism()
        self._handle_speculative_decoding()

    # --- CLI ---------------------------------------------------------------------------------------------

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser) -> None:
        flags.add_cli_args(parser)

    @classmethod
    def from_cli_args(cls, args: argparse.Namespace) -> ServerArgs:
        names = [f.name for f in dataclasses.fields(cls)]
        return cls(**{name: getattr(args, name) for name in names if getattr(args, name, None) is not None})

    # --- facts about the host and the model (SGLang asks torch.cuda and the HF config) -------------------

    def get_model_spec(self) -> models.ModelSpec:
        return models.describe(self.model_path)

    def _handle_model_config(self) -> None:
        """ModelConfig's checks of the checkpoint: context length, then quantization (issue 26)."""
        from sglang.srt.configs import model_config

        self.quantization = model_config.verify(self.model_path, self.context_length, self.quantization)

    @property
    def mamba_strategy(self) -> str:
        """The strategy whichever flag name set it (0.5.14-0.5.19 accept both)."""
        if version.radix_strategy_renamed():
            return self.mamba_radix_cache_strategy
        return self.mamba_scheduler_strategy

    @mamba_strategy.setter
    def mamba_strategy(self, value: str) -> None:
        if version.radix_strategy_renamed():
            self.mamba_radix_cache_strategy = value
        else:
            self.mamba_scheduler_strategy = value

    # --- 0.5.11 __post_init__ steps, in SGLang's order ---------------------------------------------------

    def _handle_missing_default_values(self) -> None:
        if self.tokenizer_path is None:
            self.tokenizer_path = self.model_path
        if self.served_model_name is None:
            self.served_model_name = self.model_path
        if self.random_seed is None:
            self.random_seed = 1000 + os.getpid() % 9000
        if self.log_level_http is None:
            self.log_level_http = self.log_level

    def _handle_gpu_memory_settings(self) -> None:
        cfg = sim_config.load()
        gpu_gib = cfg.gpu_mib / 1024
        spec = self.get_model_spec()
        if self.chunked_prefill_size is None:
            self.chunked_prefill_size = sizing.default_chunked_prefill_size(gpu_gib)
        if self.cuda_graph_max_bs is None:
            self.cuda_graph_max_bs = sizing.default_cuda_graph_max_bs(
                gpu_gib, self.tp_size, self.speculative_algorithm is not None
            )
        if self.mem_fraction_static is None:
            self.mem_fraction_static = sizing.default_mem_fraction_static(
                gpu_gib,
                self.chunked_prefill_size,
                self.cuda_graph_max_bs,
                self.speculative_algorithm is not None,
                spec.hybrid_gdn,
            )

    def _handle_model_specific_adjustments(self) -> None:
        spec = self.get_model_spec()
        if spec.hybrid_gdn:
            self._handle_mamba_radix_cache(spec.arch)

    def _handle_mamba_radix_cache(self, arch: str) -> None:
        # 511 server_args.py:1079-1082: "auto" always resolves to no_buffer in this version.
        if self.mamba_strategy == "auto":
            self.mamba_strategy = "no_buffer"
        if self.mamba_strategy == "extra_buffer":
            self._check_mamba_extra_buffer(arch)
            return
        if self.disable_radix_cache:
            return
        if self.speculative_algorithm is not None:
            # 511 server_args.py:2366-2457 (note: no space after "no_buffer.", as in SGLang).
            raise ValueError(
                f"Speculative decoding for {arch} is not compatible with radix cache when using "
                "--mamba-scheduler-strategy no_buffer."
                "To use radix cache with speculative decoding, please use --mamba-scheduler-strategy "
                "extra_buffer and set SGLANG_ENABLE_SPEC_V2=1."
            )
        if self.page_size is not None and self.page_size > 1:
            logger.warning(
                "Mamba no_buffer with radix cache only supports page_size=1. Setting page_size to 1."
            )
            self.page_size = 1
        if not self.disable_overlap_schedule:
            logger.warning(
                "Disabling overlap schedule since mamba no_buffer is not compatible with overlap schedule, "
                "try to use --disable-radix-cache if overlap schedule is necessary"
            )
            self.disable_overlap_schedule = True

    def _check_mamba_extra_buffer(self, arch: str) -> None:
        # 511 _handle_mamba_radix_cache (server_args.py:2366-2457), extra_buffer rows of FACTS §4.3.
        assert arch in models.EXTRA_BUFFER_ARCHS, f"mamba extra_buffer is not supported for {arch} model"
        if self.disable_radix_cache:
            raise ValueError(
                "mamba extra_buffer is not compatible with --disable-radix-cache Overlap scheduling is "
                "already supported with no_buffer + disable_radix_cache. Please use "
                "--mamba-scheduler-strategy no_buffer instead."
            )
        if self.speculative_num_draft_tokens is not None:  # whether or not an algorithm is set (:2406)
            assert self.mamba_track_interval >= self.speculative_num_draft_tokens, (
                f"mamba_track_interval {self.mamba_track_interval} must be greater than or equal to "
                f"speculative_num_draft_tokens {self.speculative_num_draft_tokens}"
            )
        if self.page_size is not None:
            assert self.mamba_track_interval % self.page_size == 0, (
                f"mamba_track_interval {self.mamba_track_interval} must be divisible by "
                f"page_size {self.page_size}"
            )
            chunk = FLA_CHUNK_SIZE
            assert max(chunk, self.page_size) % min(chunk, self.page_size) == 0, (  # :2415-2419
                "For SSM models with extra buffer, either FLA_CHUNK_SIZE or page_size must be divisible by "
                f"the other, got FLA_CHUNK_SIZE={chunk}, self.page_size={self.page_size}"
            )

    def _handle_attention_backend_compatibility(self) -> None:
        major = _compute_capability_major()
        if self.attention_backend is None:
            self.attention_backend = self._get_default_attn_backend(major)
            logger.warning(
                f"Attention backend not specified. Use {self.attention_backend} backend by default."
            )
        # 511 server_args.py:2618-2645: trtllm_mha prefill needs Blackwell (SM100), Hopper included in the
        # refusal; trtllm_mha decode needs SM90, SM100 or SM120.
        prefill = self.prefill_attention_backend or self.attention_backend
        decode = self.decode_attention_backend or self.attention_backend
        if prefill == "trtllm_mha" and major != 10:
            raise ValueError(
                "TRTLLM MHA backend for prefill is only supported on Blackwell GPUs (SM100). "
                "Please use a different prefill backend."
            )
        if decode == "trtllm_mha" and major not in (9, 10, 12):
            raise ValueError(
                "TRTLLM MHA backend for decode is only supported on Hopper (SM90), Blackwell (SM100) and "
                "(SM120) GPUs. Please use a different decode backend."
            )

    def _get_default_attn_backend(self, major: int) -> str:
        # 511 server_args.py:2464-2531 (abridged): fa3 on Hopper, trtllm_mha on SM100 with topk <= 1.
        topk = self.speculative_eagle_topk
        if major == 9:
            return "fa3"
        if major == 10 and (topk is None or (topk == 1 and self.page_size in (1, None))):
            return "trtllm_mha"
        return "flashinfer"

    def _handle_page_size(self) -> None:
        if self.page_size is None:
            self.page_size = 1

    def _handle_data_parallelism(self) -> None:
        """511 server_args.py:2928-2940; 523 arg_groups/parallel_hook.py:313-333 (with attn_dp_size)."""
        if version.resolution_pipeline():
            if self.attn_dp_size > 1:
                assert self.tp_size % self.attn_dp_size == 0  # a bare assert, as in SGLang
                assert self.chunked_prefill_size is not None
                self.chunked_prefill_size //= self.attn_dp_size
            return
        if self.dp_size == 1:
            self.enable_dp_attention = False
        if self.enable_dp_attention:
            assert self.tp_size % self.dp_size == 0  # a bare assert, as in SGLang
            assert self.chunked_prefill_size is not None
            self.chunked_prefill_size //= self.dp_size

    def _handle_deprecated_dp_attention(self) -> None:
        """523 parallel_hook.py:39-61: ``--dp N --enable-dp-attention`` means ``--attn-dp-size N``."""
        if not self.enable_dp_attention:
            return
        if self.attn_dp_size == 1:
            self.attn_dp_size, self.dp_size = self.dp_size, 1
        self.enable_dp_attention = False

    def _handle_speculative_decoding(self) -> None:
        if self.speculative_algorithm is None:
            return
        if self.speculative_algorithm == "NEXTN":  # 511 server_args.py:3310
            self.speculative_algorithm = "EAGLE"
        if self.speculative_algorithm in EAGLE_FAMILY:
            self._handle_eagle_family()
        elif self.speculative_algorithm == "DFLASH" and self.speculative_draft_model_path is None:
            # 511 server_args.py:3319-3333
            raise ValueError("DFLASH speculative decoding requires setting --speculative-draft-model-path.")
        elif self.speculative_algorithm == "NGRAM":
            self._handle_ngram()

    def _handle_eagle_family(self) -> None:
        self._choose_spec_version()  # 511 server_args.py:3458-3481
        if self.max_running_requests is None:
            self.max_running_requests = 48
            logger.warning(
                "Max running requests is reset to 48 for speculative decoding. You can override this by "
                "explicitly setting --max-running-requests."
            )
        if self.speculative_num_steps is None:
            # 511 server_args.py:3518-3523: a bare assert, no message.
            assert self.speculative_eagle_topk is None and self.speculative_num_draft_tokens is None
            (
                self.speculative_num_steps,
                self.speculative_eagle_topk,
                self.speculative_num_draft_tokens,
            ) = auto_choose_speculative_params(self)
        backends = (self.attention_backend, self.prefill_attention_backend, self.decode_attention_backend)
        if "trtllm_mha" in backends and self.speculative_eagle_topk > 1:  # type: ignore[operator]  # 511 server_args.py:3527-3537
            raise ValueError("trtllm_mha backend only supports topk = 1 for speculative decoding.")
        if (  # 511 server_args.py:3539-3546
            self.speculative_eagle_topk == 1
            and self.speculative_num_draft_tokens != self.speculative_num_steps + 1
        ):
            logger.warning(
                "speculative_num_draft_tokens is adjusted to speculative_num_steps + 1 when "
                "speculative_eagle_topk == 1"
            )
            self.speculative_num_draft_tokens = self.speculative_num_steps + 1
        # 511 server_args.py:3548-3555 (with topk still None this comparison raises TypeError, as in SGLang)
        if (
            self.speculative_eagle_topk > 1  # type: ignore[operator]
            and self.page_size > 1  # type: ignore[operator]
            and self.attention_backend not in PAGED_TOPK_BACKENDS
        ):
            raise ValueError(
                "speculative_eagle_topk > 1 with page_size > 1 is unstable and produces incorrect results "
                "for paged attention backends. This combination is only supported for the 'flashinfer' "
                "backend."
            )

    def _choose_spec_version(self) -> None:
        # 511 server_args.py:3458-3481: spec v2 needs SGLANG_ENABLE_SPEC_V2 (default on), overlap, topk <= 1.
        enabled = os.environ.get("SGLANG_ENABLE_SPEC_V2", "1").lower() not in ("0", "false", "no")
        if not enabled:
            self.disable_overlap_schedule = True
            reason = "SGLANG_ENABLE_SPEC_V2=False"
        elif self.speculative_eagle_topk is not None and self.speculative_eagle_topk > 1:
            self.disable_overlap_schedule = True
            reason = "spec v2 currently only supports topk = 1"
        elif self.disable_overlap_schedule:
            reason = "overlap schedule is disabled"
        else:
            logger.warning("Spec v2 is enabled by default for eagle/eagle3/standalone speculative decoding.")
            return
        logger.warning(f"Spec v1 is used for eagle/eagle3/standalone speculative decoding because {reason}.")

    def _handle_ngram(self) -> None:
        # 511 server_args.py:3602-3612: NGRAM's topk is its BFS breadth.
        self.speculative_eagle_topk = self.speculative_ngram_max_bfs_breadth
        if self.speculative_num_draft_tokens is None:
            self.speculative_num_draft_tokens = 12
        self.disable_overlap_schedule = True
        if self.speculative_eagle_topk > 1 and self.page_size > 1 and self.attention_backend != "flashinfer":  # type: ignore[operator]
            raise ValueError(
                f"speculative_eagle_topk({self.speculative_eagle_topk}) > 1 with page_size({self.page_size}) "
                "> 1 is unstable and produces incorrect results for paged attention backends. This "
                "combination is only supported for the 'flashinfer' backend."
            )

    # --- later checks --------------------------------------------------------------------------------------

    def resolve_once(self) -> None:
        """0.5.22+: the resolution pipeline (523 srt/arg_groups/pipeline.py)."""
        from sglang.srt.arg_groups.pipeline import run_resolution_pipeline

        run_resolution_pipeline(self)

    def check_server_args(self) -> None:
        # 511 server_args.py:6774-6777; 523 arg_groups/validation_hook.py:177-181
        ranks = self.tp_size * self.pp_size
        assert ranks % self.nnodes == 0, "tp_size must be divisible by number of nodes"
        # 523 arg_groups/validation_hook.py:204-205
        assert self.base_gpu_id >= 0, "base_gpu_id must be non-negative"
        assert self.gpu_id_step >= 1, "gpu_id_step must be positive"
        # 511 server_args.py:6821-6826; 523 arg_groups/validation_hook.py:241-246
        chunk, page = self.chunked_prefill_size, self.page_size
        if chunk is not None and page and chunk > 0:
            assert chunk % page == 0, "chunked_prefill_size must be divisible by page_size"


def auto_choose_speculative_params(self: ServerArgs) -> tuple[int, int, int]:
    """(steps, topk, draft_tokens) when none is given (511 server_args.py:7471-7506)."""
    arch = self.get_model_spec().arch
    if self.speculative_algorithm == "STANDALONE":
        return 3, 1, 4
    if arch in ("LlamaForCausalLM", "Grok1ForCausalLM"):
        return 5, 4, 8
    return 3, 1, 4


def _compute_capability_major() -> int:
    return int(sim_config.load().compute_capability.split(".")[0])


def prepare_server_args(argv: list[str]) -> ServerArgs:
    """Parse argv the way SGLang does (argparse, ``allow_abbrev`` on) and build ``ServerArgs``."""
    parser = argparse.ArgumentParser()
    ServerArgs.add_cli_args(parser)
    raw_args = parser.parse_args(argv)
    _check_parser_choices(parser, raw_args)
    # 511 server_args.py:7292-7298; 523 :703-709: a level logging lacks is an AttributeError here.
    getattr(logging, raw_args.log_level.upper())
    return ServerArgs.from_cli_args(raw_args)


def _check_parser_choices(parser: argparse.ArgumentParser, raw_args: argparse.Namespace) -> None:
    """SGLang's argparse takes these flags' choices from its parser registries (srt/parser_names.py)."""
    from sglang.srt import parser_names as names

    new = version.current() >= (0, 5, 14)
    registries = {
        "--reasoning-parser": (
            raw_args.reasoning_parser,
            names.REASONING_PARSERS_0_5_23 if new else names.REASONING_PARSERS_0_5_11,
        ),
        "--tool-call-parser": (
            raw_args.tool_call_parser,
            names.TOOL_CALL_PARSERS_0_5_23 if new else names.TOOL_CALL_PARSERS_0_5_11,
        ),
    }
    for option, (value, choices) in registries.items():
        if value is not None and value not in choices:
            shown = ", ".join(repr(c) for c in choices)
            parser.error(f"argument {option}: invalid choice: {value!r} (choose from {shown})")


# Warnings from argument processing come before configure_logger() (511 server_args.py:7292).
logging.basicConfig(format="[%(asctime)s] %(message)s", datefmt="%Y-%m-%d %H:%M:%S", level=logging.INFO)
