"""The `gdnconsole` command line."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import socket
import sys
from typing import Any, NoReturn

import click
from click.shell_completion import CompletionItem

from gdnconsole import __version__
from gdnconsole.cli import completion, opener
from gdnconsole.cli.common import COMMANDS_META, EXIT_FAILED, EXIT_INTERRUPTED, THEME_HELP, fail, load_config
from gdnconsole.cli.lazy import LazyGroup
from gdnconsole.cli.opener import console_options, open_hosts, theme_option
from gdnconsole.config import hosts as config_hosts
from gdnconsole.config import writer as config_writer
from gdnconsole.config.hosts import ConfigError, Host
from gdnconsole.logs.textsafe import shell_line, visible
from gdnconsole.sglang.launch import launch_spec, redact, redact_env

OPEN_COMMAND = "open"

THEME_META = "gdnconsole.theme"  # the main group's --theme, in the context's meta


# Commands whose modules pull in heavy libraries (asyncssh, rich) load only when they run: `log summarize`
# should not pay for SSH, nor `status` for the log view. name -> "module:attribute".
LAZY_COMMANDS: dict[str, str] = {
    "log": "gdnconsole.cli.log:log_group",
    "status": "gdnconsole.cli.status:status_cmd",
    "check": "gdnconsole.cli.check:check_cmd",
    "launch": "gdnconsole.cli.launch:launch_cmd",
    "stop": "gdnconsole.cli.launch:stop_cmd",
    "adopt": "gdnconsole.cli.launch:adopt_cmd",
    "prompt": "gdnconsole.cli.prompt:prompt_cmd",
    "tune": "gdnconsole.cli.tune:tune_cmd",
    "serving": "gdnconsole.cli.serving:serving_cmd",
}


def interrupted() -> NoReturn:
    print("\ngdnconsole: interrupted", file=sys.stderr)  # after the terminal's ^C
    sys.exit(EXIT_INTERRUPTED)


class HostsGroup(LazyGroup):
    """`gdnconsole HOST [HOST...]`: a first argument that names no command is a host, and goes with the
    rest to the hidden `open` command. Real commands win over hosts of the same name."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, lazy=LAZY_COMMANDS, **kwargs)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        command = super().get_command(ctx, cmd_name)
        return None if command is None else completion.with_host_completion(command)

    def shell_complete(self, ctx: click.Context, incomplete: str) -> list[CompletionItem]:
        """The first word: a command, or a host (`gdnconsole ct1<TAB>`)."""
        hosts = [CompletionItem(name) for name in completion.host_names(incomplete)]
        return [*super().shell_complete(ctx, incomplete), *hosts]

    def invoke(self, ctx: click.Context) -> Any:
        """Ctrl-C in any command: one line and exit 130, as a shell expects of an interrupted command
        (click's own "Aborted!" and exit 1 would read as a failure)."""
        ctx.meta[COMMANDS_META] = frozenset(self.list_commands(ctx))  # the reserved names, from the group
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            interrupted()
        except click.exceptions.Abort as exc:  # a question (adopt's) answered with Ctrl-C, or no stdin
            if isinstance(exc.__context__, KeyboardInterrupt):  # click raises it "from None"
                interrupted()
            fail("no answer to the question: stdin ended", EXIT_FAILED)

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        name = args[0] if args else ""
        if name and not name.startswith("-") and self.get_command(ctx, name) is None:
            command = self.get_command(ctx, OPEN_COMMAND)
            if command is not None:
                return OPEN_COMMAND, command, args
        return super().resolve_command(ctx, args)


READONLY_META = "gdnconsole.readonly"  # the main group's --readonly, in the context's meta
READONLY_HELP = "Watch only: no launch, relaunch or stop (for someone else's box)."
# Commands that start or stop a server: never run under the group's --readonly.
CHANGING_COMMANDS = frozenset({"demo", "launch", "stop", "adopt"})


@click.group(
    cls=HostsGroup,
    invoke_without_command=True,
    subcommand_metavar="HOST... | COMMAND [ARGS]...",
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.version_option(__version__, prog_name="gdnconsole")
@click.option("--theme", "theme", metavar="NAME", help=THEME_HELP)
@click.option("--readonly", is_flag=True, help=READONLY_HELP)
@click.pass_context
def main(ctx: click.Context, theme: str | None, readonly: bool) -> None:
    """A console for SGLang on your own GPU boxes: GPU memory per rank, the live server log by startup
    stage, one-key launch with checked speculative flags, and test prompts.

    `gdnconsole HOST [HOST...]` opens the dashboard on those hosts (names from the hosts file, `demo`, or
    ssh targets / ~/.ssh/config aliases); plain `gdnconsole` lets you pick among the configured hosts."""
    ctx.meta[THEME_META] = theme  # `gdnconsole --theme NAME HOST`: the command that opens the UI takes it
    ctx.meta[READONLY_META] = readonly
    if readonly and ctx.invoked_subcommand in CHANGING_COMMANDS:
        # `gdnconsole --readonly demo` meant to watch, and `demo` starts a server: never run it.
        name = ctx.invoked_subcommand
        fail(
            f"--readonly watches hosts, and `{name}` changes one; to watch a host named {name!r}: "
            f"gdnconsole open --readonly {name}"
        )
    if ctx.invoked_subcommand is not None:
        return
    cfg = load_config()
    if not cfg.hosts:
        click.echo(first_steps(cfg))
        return
    if not opener.interactive():
        click.echo(ctx.get_help())
        return
    themed = theme_option(theme, cfg)
    from gdnconsole.ui.app import run_dashboard  # Textual loads only when a screen is shown

    run_dashboard(
        [],
        choices=list(cfg.hosts.values()),
        config_path=str(cfg.path),
        **themed,
        **console_options(cfg, readonly),
    )


def first_steps(cfg: config_hosts.Config) -> str:
    """What plain `gdnconsole` says before there is a host to pick: where the file is looked for, and
    the three ways to begin."""
    path = visible(str(cfg.path))
    state = f"no hosts file at {path}" if not cfg.exists else f"{path} defines no hosts"
    return (
        f"{state} yet. To begin:\n"
        "  gdnconsole demo          the console on a simulated GPU host, nothing to set up\n"
        "  gdnconsole HOST          any SSH target or ~/.ssh/config alias, e.g. gdnconsole root@ct129\n"
        "  gdnconsole config init   write a commented example hosts file to edit\n"
        "`gdnconsole --help` lists every command."
    )


def _theme_asked(ctx: click.Context, theme: str | None) -> str | None:
    """``--theme`` after the command, else before it (``gdnconsole --theme NAME HOST``)."""
    before: str | None = ctx.meta.get(THEME_META)
    return theme if theme is not None else before


@main.command(OPEN_COMMAND)
@click.argument("names", nargs=-1, required=True, metavar="HOST...")
@click.option("--theme", "theme", metavar="NAME", help=THEME_HELP)
@click.option("--readonly", is_flag=True, help=READONLY_HELP)
@click.pass_context
def open_cmd(ctx: click.Context, names: tuple[str, ...], theme: str | None, readonly: bool) -> None:
    """Open the dashboard on HOST... (one tab per host), even a host named like a command (`open demo`)."""
    open_hosts(names, _theme_asked(ctx, theme), readonly or bool(ctx.meta.get(READONLY_META)))


@main.command("completion")
@click.argument("shell", type=click.Choice(completion.SHELLS))
def completion_cmd(shell: str) -> None:
    """Print the shell completion script for SHELL (bash, zsh or fish): commands, options and the host
    names of the hosts file. E.g. in ~/.bashrc: eval "$(gdnconsole completion bash)"."""
    click.echo(completion.script(main, shell), nl=False)  # as the variable prints it


# -- config ----------------------------------------------------------------------------------------


@main.group("config")
def config_group() -> None:
    """The hosts file: where it is, a commented example, a check."""


@config_group.command("path")
def config_path_cmd() -> None:
    """Print the path of the hosts file ($GDNCONSOLE_CONFIG or the user config dir)."""
    click.echo(str(config_hosts.config_path()))


@config_group.command("init")
@click.option("--force", is_flag=True, help="Replace an existing file (it is kept as .bak).")
def config_init(force: bool) -> None:
    """Write a commented example hosts file with a `ct129` host and a simulated `demo` host."""
    path = config_hosts.config_path()
    try:
        backup = config_writer.write_example(path, force=force)
    except FileExistsError:
        fail(f"{path} already exists; use --force to replace it (the old file is kept as .bak)")
    except OSError as exc:
        fail(f"cannot write {path}: {exc.strerror}")
    if backup:
        click.echo(f"kept the previous file as {backup}")
    click.echo(f"wrote {path}")


@config_group.command("check")
@click.option("--sglang", "version", metavar="VERSION", help="Check every profile against this SGLang.")
@click.option("--compute-capability", metavar="X.Y", help="With --sglang: the GPUs' compute capability.")
@click.option("--gpus", type=click.IntRange(min=0), help="With --sglang: how many GPUs.")
@click.option(
    "--gpu-memory", type=click.FloatRange(min=1), metavar="GIB", help="With --sglang: one GPU's GiB."
)
def config_check(
    version: str | None, compute_capability: str | None, gpus: int | None, gpu_memory: float | None
) -> None:
    """Validate the hosts file (exit 2 with a precise message when it is malformed), then run SGLang's
    rules on every profile whose host's SGLang is known (exit 1 when SGLang would reject one)."""
    from gdnconsole.cli.configcheck import given_facts, rule_report

    given = given_facts(version, compute_capability, gpus, gpu_memory)
    cfg = load_config()
    if not cfg.exists:
        fail(f"no hosts file at {cfg.path} (create one with `gdnconsole config init`)")
    theme_option(None, cfg)  # a [console] theme that names no theme file
    if cfg.console.keys:  # binding ids and key names need the screens' bindings: checked only when set
        from gdnconsole.ui import keymap

        try:
            keymap.checked(cfg)
        except ConfigError as exc:
            fail(str(exc))
    profiles = sum(len(h.profiles) for h in cfg.hosts.values())
    lines, checked, rejected = rule_report(cfg, given)
    for line in lines:
        click.echo(visible(line))  # the profiles' values and what the hosts said of themselves
    if rejected:
        click.echo(f"{cfg.path}: SGLang would reject {rejected} of {checked} checked profiles")
        sys.exit(1)
    click.echo(f"{cfg.path}: ok, {len(cfg.hosts)} hosts, {profiles} profiles")


# -- hosts -----------------------------------------------------------------------------------------


def _transport(host: Host) -> str:
    if host.ssh:
        return f"ssh {host.ssh.alias}"
    return "local"


def _host_json(host: Host) -> dict[str, Any]:
    return {
        "name": host.name,
        "ssh": host.ssh.alias if host.ssh else None,
        "local": host.local,
        "python": host.python,
        "workdir": host.workdir,
        "log": host.log,
        "default_profile": host.profile.name if host.profile else None,
        "simulate": dict(host.simulate.table) if host.simulate else None,
        "profiles": {
            name: {
                **{k: v for k, v in dataclasses.asdict(p).items() if k != "name"},
                "env": redact_env(p.env),  # tokens and API keys masked, as everywhere they are shown
                "args": redact(p.args),
            }
            for name, p in host.profiles.items()
        },
    }


def _profile_summary(host: Host, name: str) -> str:
    p = host.profiles[name]
    parts = [p.model, f"tp {p.tp}", f"port {p.port}"]
    if p.speculative.algorithm:
        spec = p.speculative
        detail = ", ".join(
            f"{label} {value}"
            for label, value in (
                ("steps", spec.num_steps),
                ("topk", spec.eagle_topk),
                ("draft", spec.num_draft_tokens),
            )
            if value is not None
        )
        parts.append(f"{spec.algorithm}" + (f" ({detail})" if detail else ""))
    mark = "*" if host.profile and host.profile.name == name else " "
    return f"  {mark} {name}: " + ", ".join(parts)


@main.command("hosts")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object for scripts.")
def hosts_cmd(as_json: bool) -> None:
    """List the hosts and their launch profiles (* marks each host's default profile)."""
    cfg = load_config()
    if as_json:
        payload = {
            "config": str(cfg.path),
            "exists": cfg.exists,
            "hosts": [_host_json(h) for h in cfg.hosts.values()],
        }
        click.echo(json.dumps(payload))  # one line, as every --json
        return
    if not cfg.exists:
        click.echo(f"no hosts file at {cfg.path}; `gdnconsole config init` writes a commented example")
        return
    if not cfg.hosts:
        click.echo(f"{cfg.path} defines no hosts")
        return
    for host in cfg.hosts.values():
        sim = ""
        if host.simulate:
            s = host.simulate
            sim = f", simulated {s.gpus}x {s.gpu_name}, SGLang {s.sglang}"
            if s.scenario != "ok":
                sim += f", scenario {s.scenario}"
        # Names and values come from a file anyone may have written: shown, never obeyed by the terminal.
        click.echo(visible(f"{host.name}  ({_transport(host)}{sim})"))
        if not host.profiles:
            click.echo("    no launch profiles")
        for name in host.profiles:
            click.echo(visible(_profile_summary(host, name)))


# -- demo ------------------------------------------------------------------------------------------


def _port_free(host: str, port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind((host, port))
        except OSError:
            return False
    return True


def _free_port(host: str) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        port: int = s.getsockname()[1]
        return port


def _scenario_names() -> str:
    from gdnconsole.demo.stories import STORIES  # light: the stories' names, not the UI

    stories = ", ".join(f"{name} ({story.summary})" for name, story in STORIES.items())
    return f"stories: {stories}; simulator scenarios: {', '.join(config_hosts.SIM_SCENARIOS)}"


def _stop_demo_server(host: Host) -> str:
    """Stop the server the demo's console launched last (a relaunch's, an L after S): what happened."""
    from gdnconsole.cli.launch import stop_owned  # asyncssh and the launcher load only here

    return stop_owned(host)


def _play_story(
    ctx: click.Context, name: str, speed: float | None, pace: float, exit_at_end: bool, theme: str | None
) -> None:
    """`demo --scenario STORY`: the story plays on the dashboard; exits with the story's status."""
    if not opener.interactive():
        fail(f"the {name} story plays on the dashboard: run it in a terminal")
    from gdnconsole.demo.player import StoryOptions, run_story  # Textual loads here
    from gdnconsole.demo.stories import DEFAULT_SPEED

    themed = theme_option(_theme_asked(ctx, theme), load_config())
    options = StoryOptions(pace=pace, speed=speed or DEFAULT_SPEED, exit_at_end=exit_at_end)
    code = run_story(name, options, **themed)
    if code:
        sys.exit(code)


@main.command("demo")
@click.option("--profile", "profile_name", help="Launch profile of the demo host (default: its default).")
@click.option(
    "--scenario",
    metavar="STORY|SCENARIO",
    help="A story to play (seed: how ct129 was brought up, to VERIFIED; crash: a crash and its relaunch; "
    "fleet: three hosts in tabs; tune: a sweep for the fastest speculative flags), or a failure to rehearse: "
    + ", ".join(config_hosts.SIM_SCENARIOS)
    + ".",
)
@click.option(
    "--speed",
    type=click.FloatRange(min=0.01),
    help="Timeline speed (1.0: ~20 s startup; a story's default: 4).",
)
@click.option(
    "--pace",
    type=click.FloatRange(min=0.0),
    default=1.0,
    show_default=True,
    help="A story's pauses between steps, scaled (0: none).",
)
@click.option("--exit-at-end", is_flag=True, help="Quit when the story ends (for recordings).")
@click.option("--plain", is_flag=True, help="Print the log instead of opening the dashboard.")
@click.option("--theme", "theme", metavar="NAME", help=THEME_HELP)
@click.pass_context
def demo_cmd(
    ctx: click.Context,
    profile_name: str | None,
    scenario: str | None,
    speed: float | None,
    pace: float,
    exit_at_end: bool,
    plain: bool,
    theme: str | None,
) -> None:
    """Start SGLang on the simulated `demo` host and open the dashboard on it, or play a story (`--scenario
    seed|crash|fleet`: the dashboard driven by the keys an operator would press, with captions)."""
    from gdnconsole.demo.stories import STORIES

    if scenario in STORIES:
        if plain or profile_name:
            fail(f"--plain and --profile do not apply to the {scenario} story")
        _play_story(ctx, scenario, speed, pace, exit_at_end, theme)
        return
    if scenario is not None and scenario not in config_hosts.SIM_SCENARIOS:
        fail(f"unknown scenario {scenario!r}: {_scenario_names()}")
    if exit_at_end:
        fail("--exit-at-end applies to a story: " + _scenario_names())
    cfg = load_config()
    ui = not plain and opener.interactive()
    asked = _theme_asked(ctx, theme)
    # Checked before the demo server starts; a configured theme matters only when a screen opens.
    themed = theme_option(asked, cfg) if ui or asked is not None else {}
    host = config_writer.demo_host(cfg)
    assert host.simulate is not None
    table = dict(host.simulate.table)
    if scenario:
        table["scenario"] = scenario
    if speed:
        table["speed"] = speed
    host = dataclasses.replace(host, simulate=dataclasses.replace(host.simulate, table=table))
    profile = host.profiles.get(profile_name) if profile_name else host.profile
    if profile is None:
        fail(f"the demo host has no profile {profile_name!r}; it has: {', '.join(host.profiles) or 'none'}")
    notices: list[str] = []  # said here, and again on the dashboard (the alternate screen hides this)
    if not _port_free(profile.host, profile.port):
        port = _free_port(profile.host)
        notices.append(f"port {profile.port} is taken on {profile.host}; the demo server uses {port}")
        click.echo(notices[-1], err=True)
        profile = dataclasses.replace(profile, port=port)
    # The dashboard picks the server on the profile's port: make it the one the demo runs.
    host = dataclasses.replace(
        host, profiles={**host.profiles, profile.name: profile}, default_profile=profile.name
    )
    from gdnconsole.host import foreground, simulated  # --plain: the server in the foreground, its log here

    spec = launch_spec(profile, host.python)
    log = simulated.log_path(host)
    env = simulated.environment(host)
    if not ui:
        click.echo(f"-- {shell_line(spec.argv)}")
        click.echo(f"-- log: {log}")
        try:
            code = foreground.run(spec, env=env, cwd=simulated.workdir(host), log=log, out=sys.stdout)
        except foreground.LogRefused as exc:
            fail(str(exc))
    else:
        from gdnconsole.demo import tether
        from gdnconsole.ui.app import run_dashboard  # Textual loads only when a screen is shown

        # The demo's server starts as any launch does (the agent, its own process group, the journal),
        # so that a relaunch is a relaunch and the end below stops whichever server the demo left. A
        # console that cannot get there (killed, its terminal closed) leaves that to its tether.
        tied = tether.tie(log)
        try:
            run_dashboard([host], launch={0: profile.name}, notices=notices, **themed)
        finally:
            try:
                outcome = _stop_demo_server(host)
            finally:
                tied.release()  # the tether stops whatever this did not (its files gone, say)
            with contextlib.suppress(OSError):  # the terminal may be gone (SIGHUP): stopped all the same
                click.echo(f"-- {visible(outcome)}")
        return
    click.echo(f"-- server {foreground.describe_exit(code)}")


if __name__ == "__main__":
    main()
