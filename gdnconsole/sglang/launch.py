"""A launch profile as the exact argv and environment SGLang will receive.

Each value becomes exactly one argv element: nothing here is ever joined into a shell string.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gdnconsole.config import Profile

# The flag that each speculative setting becomes (`sglang serve --help`, FACTS §4.1).
SPECULATIVE_FLAGS: dict[str, str] = {
    "algorithm": "--speculative-algorithm",
    "num_steps": "--speculative-num-steps",
    "eagle_topk": "--speculative-eagle-topk",
    "num_draft_tokens": "--speculative-num-draft-tokens",
    "draft_model": "--speculative-draft-model-path",
}


@dataclass(frozen=True)
class LaunchSpec:
    argv: tuple[str, ...]  # starting with the interpreter: ("python3", "-m", "sglang.launch_server", …)
    env: dict[str, str] = field(default_factory=dict)
    port: int = 30000


def server_args(profile: Profile) -> list[str]:
    """The SGLang flags of a profile, in the order an operator would type them."""
    args = ["--model-path", profile.model, "--tp-size", str(profile.tp)]
    args += ["--host", profile.host, "--port", str(profile.port)]
    if profile.mem_fraction is not None:
        args += ["--mem-fraction-static", _number(profile.mem_fraction)]
    for name, flag in SPECULATIVE_FLAGS.items():
        value = getattr(profile.speculative, name)
        if value is not None:
            args += [flag, str(value)]
    args += list(profile.args)
    return args


def launch_spec(profile: Profile, python: str = "python3") -> LaunchSpec:
    argv = (python, "-m", "sglang.launch_server", *server_args(profile))
    return LaunchSpec(argv=argv, env=dict(profile.env), port=profile.port)


def _number(value: float) -> str:
    """0.85 stays "0.85", not "0.8500000000000001"."""
    return repr(float(value)).rstrip("0").rstrip(".") if "e" not in repr(value) else repr(value)
