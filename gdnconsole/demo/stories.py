"""The stories `gdnconsole demo --scenario NAME` plays (the engine that plays them is ``demo.player``).

Each story names the hosts it opens (simulated GPU hosts shaped like the built-in `demo` host of the
example hosts file, each with its own home under the story's temporary folder, or a host that cannot be
reached) and a script: the keys an operator would press on the dashboard, what to wait for between them,
and a one-line caption for each step. This module stays light (no Textual): the command line lists the
stories' names without loading the UI.
"""

from __future__ import annotations

import dataclasses
import socket
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, cast

from gdnconsole.config import writer as config_writer
from gdnconsole.config.hosts import Host, Profile, SshTarget
from gdnconsole.timefmt import span

if TYPE_CHECKING:
    from gdnconsole.demo.player import Director
    from gdnconsole.ui.screens.tune import TuneScreen

HostsFactory = Callable[[Path, float], list[Host]]  # (the folder for the hosts' homes, the sim's speed)
Script = Callable[["Director"], Awaitable[None]]

SPEC_V2 = "SGLANG_ENABLE_SPEC_V2"
DEFAULT_SPEED = 4.0  # the simulated timeline of a story: a startup takes about 5 s instead of 20


@dataclass(frozen=True)
class Story:
    name: str
    summary: str  # a few words: the error for an unknown name lists the stories with them
    hosts: HostsFactory
    script: Script


# -- hosts -----------------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def demo_host() -> Host:
    """The built-in `demo` host of the example hosts file: ct129 as it finally ran, simulated."""
    return config_writer.example_config().hosts["demo"]


def demo_profile() -> Profile:
    profile = demo_host().profile
    assert profile is not None, "the built-in demo host has a launch profile"
    return profile


def sim_host(name: str, home: Path, speed: float, **table: object) -> Host:
    """The built-in demo host named ``name``, its home at ``home``, its server on a free port."""
    base = demo_host()
    assert base.simulate is not None
    merged: dict[str, object] = {**base.simulate.table, "home": str(home), "speed": speed, **table}
    simulate = dataclasses.replace(base.simulate, speed=speed, scenario=str(merged["scenario"]), table=merged)
    profile = dataclasses.replace(demo_profile(), port=free_port())
    return dataclasses.replace(
        base, name=name, simulate=simulate, profiles={profile.name: profile}, default_profile=profile.name
    )


def unreachable_host(name: str) -> Host:
    """A host reached over SSH on a loopback port where nothing listens: its link stays down."""
    port = free_port()  # free a moment ago: nothing listens there
    ssh = SshTarget(alias=f"root@127.0.0.1:{port}", user="root", hostname="127.0.0.1", port=port)
    profile = demo_profile()
    return Host(
        name=name, ssh=ssh, local=False, profiles={profile.name: profile}, default_profile=profile.name
    )


def first_try(profile: Profile) -> Profile:
    """ct129's first launch: NEXTN with topk and draft tokens but no num steps, and no env.

    It keeps the mamba strategy: without it SGLang 0.5.11 stops earlier, at the radix cache check of a
    hybrid GDN model (a ValueError), and never reaches the topk assertion the journey began with."""
    spec = dataclasses.replace(profile.speculative, num_steps=None)
    return dataclasses.replace(profile, speculative=spec, env={})


def seed_hosts(homes: Path, speed: float) -> list[Host]:
    host = sim_host("ct129", homes / "ct129", speed)  # ffmpeg = false: the libavutil warning shows
    profile = first_try(demo_profile())
    profile = dataclasses.replace(profile, port=free_port())
    return [dataclasses.replace(host, profiles={profile.name: profile}, default_profile=profile.name)]


def crash_hosts(homes: Path, speed: float) -> list[Host]:
    return [sim_host("ct129", homes / "ct129", speed, scenario="crash-serving")]


def fleet_hosts(homes: Path, speed: float) -> list[Host]:
    return [
        sim_host("ct129", homes / "ct129", speed),
        sim_host("ct130", homes / "ct130", speed, scenario="oom-graph"),
        unreachable_host("ct131"),
    ]


# -- seed: the five launches of ARCHITECTURE.md ----------------------------------------------------------


async def seed(d: Director) -> None:
    d.caption("ct129: 2x RTX A6000, Qwen3.6-27B, MTP (NEXTN), SGLang 0.5.11. How it was brought up, replayed")
    await d.connected(0)
    await d.pause(1.5)

    # 1. topk and draft tokens without num steps: our checker says no, nothing starts.
    d.caption("e opens the profile in the flag form: NEXTN, topk 1, 2 draft tokens, no num steps", "1/5")
    await d.press("e")
    await d.on_screen("FlagFormScreen")
    await d.pause(1.5)
    d.caption("our rules for SGLang 0.5.11 mark the field as you type; ctrl+l launches anyway", "1/5")
    await d.pause()
    await d.press("ctrl+l")
    await d.on_screen("confirm-rejected")
    rejected = await d.attempt_ends(0, 1)
    rule = rejected.rule
    d.caption(f"rejected, nothing started: {rule.message if rule else ''}", "1/5")
    await d.pause(2.5)
    await d.press("n")
    await d.on_dashboard()

    # 2. the same flags without the checker: SGLang's own AssertionError.
    d.caption("the same flags started without our checker, as nohup did: SGLang checks them itself", "2/5")
    crashed = await d.launch_unchecked(0)
    fatal = crashed.fatal.summary if crashed.fatal else ""
    d.caption(f"crashed: {fatal}. E jumps to the first error in the log", "2/5")
    await d.first_error(0)
    await d.pause(2.5)
    await d.press("end")  # follow the log again

    # 3. num steps: the libavutil warning, ready anyway.
    d.caption("e: num steps 1, which SGLang's assertion wants beside topk and draft tokens", "3/5")
    await d.press("e")
    await d.on_screen("FlagFormScreen")
    await d.type_field("num_steps", "1")
    await d.pause()
    d.caption("ctrl+l launches. This box has no FFmpeg", "3/5")
    await d.press("ctrl+l")
    await d.on_dashboard()
    await d.ready(0, 3)
    d.caption("/ searches the log: the libavutil 'Ignore import error' block is a warning, not fatal", "3/5")
    await d.search("Ignore import error")
    await d.pause(1.5)
    await d.settled(0, 3)
    await d.press("end")
    d.caption(
        "ready anyway. Back then a curl timed out while graphs were captured: nobody knew it answered", "3/5"
    )
    await d.pause(1.5)

    # 4. the flags that finally worked: ready, then VERIFIED by a real answer.
    d.caption(f"e: env {SPEC_V2}=1, for the flags that finally worked", "4/5")
    await d.press("e")
    await d.on_screen("FlagFormScreen")
    await d.type_field("env", f"{SPEC_V2}=1")
    await d.pause()
    await d.press("ctrl+l")
    await d.on_screen("confirm-relaunch")
    d.caption("a relaunch first says what it stops (pids, process group) and the flags that change", "4/5")
    await d.pause(2.5)
    await d.press("y")
    await d.on_dashboard()
    d.caption("the old server drains, its GPU memory is released, the new one starts", "4/5")
    await d.ready(0, 4)
    d.caption("ready: the console sends its verification prompt", "4/5")
    verified = await d.verified(0, 4)
    latency = verified.verify.latency_ms if verified.verify else None
    took = f" in {span(latency / 1000)}" if isinstance(latency, int | float) else ""
    d.caption(f"VERIFIED: the model answered{took}. A log saying ready is not a server that answers", "4/5")
    await d.pause(2)

    # 5. the prompt panel: a streamed prompt and its figures, then a small burst.
    d.caption("p opens the prompt panel; ctrl+r streams a prompt to /v1/chat/completions", "5/5")
    await d.press("p")
    await d.on_screen("PromptScreen")
    await d.pause(0.5)
    await d.press("ctrl+r")
    await d.prompt_done(1)
    d.caption("its time to first token, tokens per second and speculative accept length", "5/5")
    await d.pause(2)
    d.caption("ctrl+g sends a burst of 8 concurrent copies: p50 / p90 / p99", "5/5")
    await d.press("ctrl+g")
    await d.prompt_done(2)
    await d.pause(2.5)
    await d.press("escape")
    await d.on_dashboard()
    d.caption("ct129 serves, VERIFIED. j: the journal of the four launches; q quits, stopping the server")
    await d.pause(2)
    await d.press("j")
    await d.on_screen("JournalScreen")
    await d.pause(3)
    await d.press("escape")
    await d.on_dashboard()
    await d.pause(1)


# -- crash: a crash on the first real request, and the relaunch that fixes it -----------------------


async def crash(d: Director) -> None:
    d.caption("ct129 rehearses a crash on the first real request (simulator scenario crash-serving)")
    await d.connected(0)
    await d.pause(1.5)
    d.caption("L launches the profile; the log follows the startup, stage by stage", "1/3")
    await d.press("L")
    await d.ready(0, 1)
    d.caption("ready. The console sends its verification prompt: the first real request", "1/3")
    crashed = await d.crash_recorded(0, 1)
    fatal = crashed.fatal
    line = f" (log line {fatal.line})" if fatal and fatal.line else ""
    d.caption(f"crashed: {fatal.summary if fatal else ''}{line}. E jumps to the first error", "2/3")
    await d.first_error(0)
    await d.pause(2.5)
    d.caption("j: the journal keeps the attempt, its stages and its fatal error", "2/3")
    await d.press("j")
    await d.on_screen("JournalScreen")
    await d.pause(2)
    await d.press("escape")
    await d.on_dashboard()
    await d.press("end")
    d.set_simulation(0, scenario="ok")
    d.caption("the cause fixed (the simulator's scenario back to ok), R relaunches", "3/3")
    await d.pause()
    await d.press("R")
    await d.ready(0, 2)
    d.caption("ready, and the verification prompt goes out again", "3/3")
    verified = await d.verified(0, 2)
    latency = verified.verify.latency_ms if verified.verify else None
    took = f" in {span(latency / 1000)}" if isinstance(latency, int | float) else ""
    d.caption(f"VERIFIED: the model answered{took}. Attempt 1 crashed, attempt 2 serves")
    await d.pause(2.5)


# -- fleet: three hosts in tabs ----------------------------------------------------------------------


async def fleet(d: Director) -> None:
    d.caption("three hosts, a tab each; the rows above the tabs are one line per host")
    await d.connected(0)
    await d.connected(1)
    await d.link_down(2)
    await d.pause(1.5)
    d.caption("ct129: L launches its profile", "1/4")
    await d.press("L")
    await d.pause(0.5)
    d.caption("] goes to the next host: on ct130, L launches the same profile", "1/4")
    await d.press("right_square_bracket")
    await d.on_host(1)
    await d.press("L")
    crashed = await d.attempt_ends(1, 1)
    fatal = crashed.fatal.summary if crashed.fatal else "the server exited"
    rank = await d.leave_rank(1, gpu=1, mib=30_720, title="sglang::scheduler_TP1")
    d.caption(f"ct130 crashed: {fatal}", "2/4")
    await d.first_error(1)
    await d.orphan_shown(1, rank)
    await d.pause(2)
    d.caption(f"and a rank that outlived the crash (pid {rank}) still holds 30 GiB of GPU 1", "2/4")
    await d.pause(2.5)
    d.caption("] ct131: unreachable. The link is down and is retried with backoff", "3/4")
    await d.press("right_square_bracket")
    await d.on_host(2)
    await d.pause(2.5)
    d.caption("] back to ct129: serving, VERIFIED", "4/4")
    await d.press("right_square_bracket")
    await d.on_host(0)
    await d.verified(0, 1)
    await d.pause(2)
    d.caption("[ goes back a host, 1 to 9 jump to one", "4/4")
    await d.press("left_square_bracket")
    await d.on_host(2)
    await d.pause()
    await d.press("left_square_bracket")
    await d.on_host(1)
    await d.pause()
    await d.press("1")
    await d.on_host(0)
    d.caption("ct129 serving and VERIFIED, ct130 crashed with a leftover rank, ct131 down")
    await d.pause(2)


# -- tune: the fastest speculative flags on ct129, measured ----------------------------------------------


DEMO_TOKENS_PER_S = 40.0  # ct129's decode rate, one request without speculation


def tune_hosts(homes: Path, speed: float) -> list[Host]:
    """ct129, its decode as much faster as its timeline: a sweep of ten launches plays in minutes."""
    return [sim_host("ct129", homes / "ct129", speed, tokens_per_s=DEMO_TOKENS_PER_S * speed)]


def _tune_screen(d: Director) -> TuneScreen | None:
    """The tune screen when it is shown (by its class name: this module loads no Textual)."""
    screen = d.app.screen
    return cast("TuneScreen", screen) if type(screen).__name__ == "TuneScreen" else None


def _sweep_ended(d: Director) -> bool:
    screen = _tune_screen(d)
    return screen is not None and screen.sweep is not None and not screen.running


async def tune(d: Director) -> None:
    d.caption("ct129: which speculative flags are fastest on this box? u opens the tune screen")
    await d.connected(0)
    await d.pause(1.5)
    await d.press("u")
    await d.on_screen("TuneScreen")
    d.caption("the grid: num steps 1-3, topk 1, draft tokens 2-4; 8 chat prompts at batch 1 and 8", "1/3")
    await d.pause(2)
    await d.press("ctrl+r")
    d.caption(
        "checked against SGLang 0.5.11's rules, then the baseline and each: launch, VERIFIED, measure", "2/3"
    )
    await d.until(lambda: _sweep_ended(d), "the sweep to end", timeout=12 * d.startup_timeout)
    screen = _tune_screen(d)
    ended = screen.last_message if screen is not None else ""
    d.caption(f"{ended}. ctrl+b would save it into the profile", "3/3")
    await d.pause(5)
    await d.press("escape")
    await d.on_dashboard()
    await d.pause(1)


STORIES: dict[str, Story] = {
    story.name: story
    for story in (
        Story("seed", "how ct129 was brought up: rejected, crashed, ready, VERIFIED", seed_hosts, seed),
        Story("crash", "a crash on the first real request, its fatal error, a relaunch", crash_hosts, crash),
        Story("fleet", "three hosts in tabs: serving, crashed, unreachable", fleet_hosts, fleet),
        Story("tune", "the fastest speculative flags on ct129, measured", tune_hosts, tune),
    )
}
