"""Text from a log, a host or a server never reaches the terminal raw: each surface that shows it, run
in a real terminal (tmux, a server of our own) on hostile text: an OSC that sets the title, a CSI that
clears the screen, a C1 CSI, BEL, backspace, CR and a bidi override. The pane's title must stay as it
was, the line printed before the command must still be on the screen, and the escaped form must show.

SGLang logs request text, so anyone who can send the server a prompt can write these into its log.
"""

from __future__ import annotations

import contextlib
import http.server
import json
import os
import shlex
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests import needs
from tests.sglang.test_tracker import CRASH_TAIL, CT129_STARTUP

needs.require("tmux", module_level=True)

GDNCONSOLE = [sys.executable, "-I", "-m", "gdnconsole"]
SOCKET = f"gdnesc-{os.getpid()}"  # a tmux server of our own: never the user's
WAIT_S = 30.0
POLL_S = 0.05
TITLE = "untouched-title"
MARKER = "BEFORE-THE-COMMAND"
UNSET = ("COLUMNS", "LINES", "COLORTERM", "NO_COLOR", "FORCE_COLOR", "TMUX", "TMUX_PANE")

# The hostile exception text, as a prompt could put it into the log, and how every surface shows it.
HOSTILE = "boom \x1b]0;PWNED\x07 \x1b[2J \x9b2J bell\x07 back\x08 cr\r \u202edesrever end"
SHOWN = "boom ^[]0;PWNED^G ^[[2J \\x9b2J bell^G back^H cr^M \\u202edesrever end"
RAW = ("\x1b]0;", "\x1b[2J", "\x9b", "\u202e")


def hostile_crash(text: str = HOSTILE) -> str:
    """The CT129 crash, its exception line carrying ``text``."""
    return CRASH_TAIL.replace("Exception: Capture cuda graph failed:", f"Exception: {text}:")


# -- tmux ----------------------------------------------------------------------------------------------------


def tmux(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["tmux", "-u", "-L", SOCKET, "-f", os.devnull, *args],
        env={k: v for k, v in os.environ.items() if k not in UNSET},
        capture_output=True,
        text=True,
        check=check,
        timeout=10,
    )


@pytest.fixture(scope="module")
def tmux_server() -> Iterator[None]:
    tmux("start-server", ";", "set-option", "-g", "exit-empty", "off")
    socket_path = tmux("display-message", "-p", "#{socket_path}").stdout.strip()
    yield
    tmux("kill-server", check=False)
    if socket_path:
        Path(socket_path).unlink(missing_ok=True)


@dataclass
class Pane:
    name: str

    def screen(self) -> list[str]:
        return tmux("capture-pane", "-p", "-t", self.name).stdout.removesuffix("\n").split("\n")

    def title(self) -> str:
        return tmux("display-message", "-p", "-t", self.name, "#{pane_title}").stdout.strip()

    def dead(self) -> bool:
        return tmux("display-message", "-p", "-t", self.name, "#{pane_dead}").stdout.strip() == "1"

    def history(self) -> str:
        return tmux("capture-pane", "-p", "-J", "-S", "-", "-t", self.name).stdout

    def keys(self, *keys: str) -> None:
        tmux("send-keys", "-t", self.name, *keys)

    def wait(self, what: str, check: Callable[[], object]) -> None:
        deadline = time.monotonic() + WAIT_S
        while not check():
            if time.monotonic() > deadline:
                raise AssertionError(f"{what}: not after {WAIT_S:.0f} s\n" + "\n".join(self.screen()))
            time.sleep(POLL_S)

    def untouched(self) -> None:
        """The title is ours still, and nothing cleared the line printed before the command."""
        assert self.title() == TITLE, f"the pane's title was set to {self.title()!r}"
        assert any(MARKER in line for line in self.screen()), "the screen was cleared:\n" + "\n".join(
            self.screen()
        )


@pytest.fixture
def run_in_pane(tmux_server: None, tmp_path: Path) -> Iterator[Callable[..., Pane]]:
    """Run ``argv`` in a new pane (after the marker line), with our own config and XDG folders."""
    panes: list[Pane] = []

    def start(argv: list[str], env: dict[str, str] | None = None, width: int = 160, height: int = 48) -> Pane:
        pane = Pane(f"esc{len(panes)}")
        own = {
            "TERM": "xterm-256color",
            "LC_ALL": "C.UTF-8",
            "HOME": str(tmp_path / "home"),
            "XDG_CONFIG_HOME": str(tmp_path / "xdg-config"),
            "XDG_DATA_HOME": str(tmp_path / "xdg-data"),
            "XDG_STATE_HOME": str(tmp_path / "xdg-state"),
            "XDG_CACHE_HOME": str(tmp_path / "xdg-cache"),
            "GDNCONSOLE_CONFIG": str(tmp_path / "no-hosts.toml"),
            **(env or {}),
        }
        # The pane's first output can land before tmux draws it: the shell waits for a line from us.
        script = f'read -r go; printf "\\033]2;{TITLE}\\007{MARKER}\\n"; exec "$@"'
        unset = [f"--unset={name}" for name in UNSET]
        command = shlex.join(
            ["env", *unset, *(f"{k}={v}" for k, v in own.items()), "sh", "-c", script, "sh", *argv]
        )
        tmux("new-session", "-d", "-s", pane.name, "-x", str(width), "-y", str(height), command,
             ";", "set-option", "-w", "-t", pane.name, "remain-on-exit", "on")  # fmt: skip
        panes.append(pane)
        pane.keys("Enter")
        pane.wait("the marker and our title", lambda: pane.title() == TITLE)
        return pane

    yield start
    for pane in panes:
        tmux("kill-session", "-t", pane.name, check=False)


def hostile_log(tmp_path: Path) -> Path:
    log = tmp_path / "hostile.log"
    log.write_text(CT129_STARTUP + hostile_crash(), encoding="utf-8")
    return log


# -- the headless commands -----------------------------------------------------------------------------------


def test_log_summarize_shows_the_fatal_escapes_and_obeys_none(
    run_in_pane: Callable[..., Pane], tmp_path: Path
) -> None:
    pane = run_in_pane([*GDNCONSOLE, "log", "summarize", str(hostile_log(tmp_path))])
    pane.wait("log summarize to end", pane.dead)
    pane.untouched()
    assert SHOWN in pane.history(), pane.history()


def test_log_summarize_json_keeps_the_exact_text(tmp_path: Path) -> None:
    """JSON escapes the controls itself: a script gets the log's exact words."""
    out = subprocess.run(
        [*GDNCONSOLE, "log", "summarize", "--json", str(hostile_log(tmp_path))],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert not any(raw in out.stdout for raw in RAW), out.stdout  # ASCII only, on one line
    assert json.loads(out.stdout)["fatal"]["summary"].startswith(f"Exception: {HOSTILE}:")


def test_an_unreadable_log_named_with_escapes_is_refused_in_one_shown_line(
    run_in_pane: Callable[..., Pane], tmp_path: Path
) -> None:
    missing = tmp_path / "gone\x1b]0;PWNED\x07\x1b[2J.log"
    pane = run_in_pane([*GDNCONSOLE, "log", "summarize", str(missing)])
    pane.wait("log summarize to fail", pane.dead)
    pane.untouched()
    assert "gone^[]0;PWNED^G^[[2J.log" in pane.history()


# -- log view, the dashboard, status and launch on a simulated host ---------------------------------------------


def test_log_view_shows_the_fatal_escapes_and_obeys_none(
    run_in_pane: Callable[..., Pane], tmp_path: Path
) -> None:
    pane = run_in_pane([*GDNCONSOLE, "log", "view", str(hostile_log(tmp_path))])
    pane.wait(
        "the log view's fold and its timeline's fatal summary",
        lambda: (
            any("fatal, line 29" in line for line in pane.screen())
            and any("PWNED" in line for line in pane.screen())
        ),
    )
    assert pane.title() == TITLE, f"the pane's title was set to {pane.title()!r}"
    shown = "\n".join(pane.screen())
    assert "^[]0;PWNED^G" in shown and "\\u202edesrever" in shown
    pane.keys("q")
    pane.wait("the log view to quit", pane.dead)
    pane.untouched()


@dataclass
class Simbox:
    env: dict[str, str]
    log: Path
    record: Path


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def simbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Simbox]:
    """A simulated host whose server was launched and is ready; stopped after."""
    tmp = tmp_path_factory.mktemp("escapes")
    hosts = tmp / "hosts.toml"
    hosts.write_text(
        f"""
[hosts.simbox]
local = true
python = "{sys.executable}"

[hosts.simbox.simulate]
speed = 50.0
release_lag_s = 0.0
home = "{tmp / "simhome"}"

[hosts.simbox.profiles.final]
model = "Qwen/Qwen3.6-27B"
tp = 2
port = {free_port()}
args = ["--mamba-scheduler-strategy", "extra_buffer"]
env = {{ SGLANG_ENABLE_SPEC_V2 = "1" }}
speculative = {{ algorithm = "NEXTN", num_steps = 1, eagle_topk = 1, num_draft_tokens = 2 }}
""",
        encoding="utf-8",
    )
    own = {
        "GDNCONSOLE_CONFIG": str(hosts),
        "GDNCONSOLE_JOURNAL_DIR": str(tmp / "journal"),
        "GDNCONSOLE_PROMPTS_DIR": str(tmp / "prompts"),
    }
    env = {**os.environ, **own}
    record = tmp / "simhome" / ".gdnconsole-server.json"
    launched = subprocess.run(
        [*GDNCONSOLE, "launch", "simbox", "--wait", "ready", "--timeout", "60", "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=90,
    )
    try:
        assert launched.returncode == 0, launched.stdout + launched.stderr
        yield Simbox(env=own, log=tmp / "simhome" / "sglang_serve.log", record=record)
    finally:
        subprocess.run([*GDNCONSOLE, "stop", "simbox"], env=env, capture_output=True, timeout=90)
        if record.exists():
            with contextlib.suppress(ProcessLookupError, ValueError, KeyError):
                os.killpg(int(json.loads(record.read_text())["pid"]), signal.SIGKILL)


def append_hostile_lines(log: Path, text: str = HOSTILE) -> None:
    """A request's text in a log line, then a scheduler crash whose exception carries it."""
    with log.open("a", encoding="utf-8") as out:
        out.write(f"[2026-12-02 05:00:00 TP0] Prefill batch, request text: {text}\n")
        out.write(
            "[2026-12-02 05:00:01 TP1] Scheduler hit an exception: Traceback (most recent call last):\n"
            '  File "/x/sglang/srt/managers/scheduler.py", line 1, in event_loop\n'
            f"RuntimeError: {text}\n"
        )


def test_the_dashboard_shows_a_hostile_log_and_obeys_none_of_it(
    run_in_pane: Callable[..., Pane], simbox: Simbox
) -> None:
    """The log pane, the timeline, the status bar and the crash's toast show the hostile lines (a CR
    in a line shows its last state, as a tqdm bar's)."""
    pane = run_in_pane([*GDNCONSOLE, "simbox"], env=simbox.env)
    pane.wait("the dashboard connected", lambda: "● connected" in pane.screen()[0])
    append_hostile_lines(simbox.log, HOSTILE.replace("end", "dash"))
    pane.wait(
        "the crash in the status bar and the timeline",
        lambda: "failed in" in pane.screen()[0] and any("^[]0;PWNED^G" in line for line in pane.screen()),
    )
    assert pane.title() == TITLE, f"the pane's title was set to {pane.title()!r}"
    shown = "\n".join(pane.screen())
    assert "^[]0;PWNED^G" in shown and "\\u202edesrever" in shown
    assert not any(raw in shown for raw in RAW)
    pane.keys("q")
    pane.wait("the dashboard to quit", pane.dead)
    pane.untouched()


def test_status_shows_the_hostile_fatal_and_obeys_none_of_it(
    run_in_pane: Callable[..., Pane], simbox: Simbox
) -> None:
    append_hostile_lines(simbox.log, HOSTILE.replace("end", "status"))
    pane = run_in_pane([*GDNCONSOLE, "status", "simbox"], env=simbox.env)
    pane.wait("status to end", pane.dead)
    pane.untouched()
    assert "fatal at line" in pane.history() and "^[]0;PWNED^G" in pane.history(), pane.history()


def test_launch_shows_an_argument_s_escapes_and_obeys_none(
    run_in_pane: Callable[..., Pane], simbox: Simbox
) -> None:
    """The changed flag is printed with the attempt: its escape shown, not sent."""
    arg = "args+=--served-model-name=x\x1b]0;PWNED\x07\x1b[2J\u202eeman"
    pane = run_in_pane(
        [*GDNCONSOLE, "launch", "simbox", "--set", arg, "--wait", "started", "--timeout", "60"],
        env=simbox.env,
    )
    pane.wait("launch to end", pane.dead)
    pane.untouched()
    history = pane.history()
    assert "x^[]0;PWNED^G^[[2J\\u202eeman" in history, history


# -- prompt: the answer comes from a server ------------------------------------------------------------------


class HostileChat(http.server.BaseHTTPRequestHandler):
    """An OpenAI-compatible endpoint whose answer is hostile text, streamed (SSE) or whole; the error
    of a second path carries escapes too."""

    answer = "line one \x1b]0;PWNED\x07\nline two \x1b[2J \x9b2J \u202edesrever"

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["content-length"] or 0)))
        if body.get("max_tokens") == 7:
            self._send(500, "application/json", json.dumps({"error": "bad \x1b]0;PWNERR\x07"}).encode())
            return
        if not body.get("stream"):
            message = {"role": "assistant", "content": self.answer}
            payload = {"choices": [{"index": 0, "message": message, "finish_reason": "stop"}]}
            self._send(200, "application/json", json.dumps(payload).encode())
            return
        chunks = [self.answer[:12], self.answer[12:]]
        events = [{"choices": [{"index": 0, "delta": {"content": c}}]} for c in chunks]
        stream = "".join(f"data: {json.dumps(e)}\n\n" for e in events) + "data: [DONE]\n\n"
        self._send(200, "text/event-stream", stream.encode())

    def do_GET(self) -> None:
        if self.path == "/v1/models":
            self._send(200, "application/json", json.dumps({"data": [{"id": "m"}]}).encode())
        else:
            self._send(404, "application/json", b"{}")

    def _send(self, status: int, kind: str, data: bytes) -> None:
        self.send_response(status)
        self.send_header("content-type", kind)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def chat_host(tmp_path: Path) -> Iterator[dict[str, str]]:
    """A local host whose profile's port is our hostile endpoint."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), HostileChat)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    hosts = tmp_path / "chat-hosts.toml"
    hosts.write_text(
        f'[hosts.chatbox]\nlocal = true\npython = "{sys.executable}"\nlog = "{tmp_path / "none.log"}"\n\n'
        f'[hosts.chatbox.profiles.p]\nmodel = "m"\nport = {server.server_address[1]}\n',
        encoding="utf-8",
    )
    try:
        yield {
            "GDNCONSOLE_CONFIG": str(hosts),
            "GDNCONSOLE_JOURNAL_DIR": str(tmp_path / "journal"),
            "GDNCONSOLE_PROMPTS_DIR": str(tmp_path / "prompts"),
            "GDNCONSOLE_AGENT_SCOPE": "GDNESC_NONE",  # no process of this machine is its server
        }
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("stream", ["--stream", "--no-stream"])
def test_prompt_shows_the_answer_s_escapes_and_obeys_none(
    run_in_pane: Callable[..., Pane], chat_host: dict[str, str], stream: str
) -> None:
    pane = run_in_pane([*GDNCONSOLE, "prompt", "chatbox", "hi", stream], env=chat_host)
    pane.wait("prompt to end", pane.dead)
    pane.untouched()
    history = pane.history()
    assert "line one ^[]0;PWNED^G\nline two ^[[2J \\x9b2J \\u202edesrever" in history, history


def test_prompt_shows_a_server_error_s_escapes_and_obeys_none(
    run_in_pane: Callable[..., Pane], chat_host: dict[str, str]
) -> None:
    pane = run_in_pane([*GDNCONSOLE, "prompt", "chatbox", "hi", "--max-tokens", "7"], env=chat_host)
    pane.wait("prompt to end", pane.dead)
    pane.untouched()
    assert "PWNERR" in pane.history() and "^[]0;PWNERR^G" in pane.history(), pane.history()


def test_prompt_json_keeps_the_exact_answer(chat_host: dict[str, str]) -> None:
    out = subprocess.run(
        [*GDNCONSOLE, "prompt", "chatbox", "hi", "--json"],
        env={**os.environ, **chat_host},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert not any(raw in out.stdout for raw in RAW), out.stdout
    assert json.loads(out.stdout)["text"] == HostileChat.answer, out.stdout + out.stderr


# -- check, config check, hosts: the operator's own words, pasted from anywhere -------------------------------


def test_check_shows_an_argument_s_escapes_and_obeys_none(run_in_pane: Callable[..., Pane]) -> None:
    argv = ["--model-path", "Qwen/Qwen3.6-27B", "--tp-size", "2\x1b]0;PWNED\x07\x1b[2J\u202e"]
    pane = run_in_pane([*GDNCONSOLE, "check", "--sglang", "0.5.11", "--", *argv])
    pane.wait("check to end", pane.dead)
    pane.untouched()
    assert "--tp-size" in pane.history() and "PWNED" in pane.history(), pane.history()


@pytest.mark.parametrize("command", [["config", "check"], ["hosts"]])
def test_a_hosts_file_s_hostile_name_is_refused_in_one_shown_line(
    run_in_pane: Callable[..., Pane], tmp_path: Path, command: list[str]
) -> None:
    hosts = tmp_path / "hostile.toml"
    name = json.dumps("p\x1b]0;PWNED\x07\x1b[2J\u202elanif")  # a TOML basic string, \u escapes
    hosts.write_text(
        f'[hosts.box]\nlocal = true\n\n[hosts.box.profiles.{name}]\nmodel = "m"\n', encoding="utf-8"
    )
    pane = run_in_pane([*GDNCONSOLE, *command], env={"GDNCONSOLE_CONFIG": str(hosts)})
    pane.wait(f"{' '.join(command)} to end", pane.dead)
    pane.untouched()
    assert f"{hosts}:4:" in pane.history() and "\\u202elanif" in pane.history(), pane.history()


def test_hosts_and_config_check_show_a_reversed_value_escaped(
    run_in_pane: Callable[..., Pane], tmp_path: Path
) -> None:
    hosts = tmp_path / "reversed.toml"
    hosts.write_text(
        '[hosts.box]\nlocal = true\nsimulate = { sglang = "0.5.11", gpus = 2 }\n\n'
        '[hosts.box.profiles.p]\nmodel = "Qwen/Qwen3.6-27B\\u202e"\nargs = ["--served-model-name", "a\\u202eb"]\n',
        encoding="utf-8",
    )
    for command in (["hosts"], ["config", "check"]):
        pane = run_in_pane([*GDNCONSOLE, *command], env={"GDNCONSOLE_CONFIG": str(hosts)})
        pane.wait(f"{' '.join(command)} to end", pane.dead)
        pane.untouched()
        assert "\u202e" not in pane.history(), pane.history()
