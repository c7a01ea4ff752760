"""The flag form shows API keys and tokens masked in every field; ctrl+r reveals them on purpose, and
leaving the form masks them again; a masked value is saved as the real one, and an edited mask never."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Input, TextArea

from gdnconsole.config import hosts as config_hosts
from gdnconsole.ui.dialogs.confirm import ConfirmScreen
from tests.ui.conftest import settle
from tests.ui.dashboard_helpers import SIZE, on_screen, until
from tests.ui.form_helpers import HOSTS, command, field_error, form_app, form_session, open_form, shown

KEY, TOKEN = "sk-live-123", "hf_SECRETtoken"
SECRET_HOSTS = HOSTS.replace(
    'args = ["--mamba-scheduler-strategy", "extra_buffer"]\nenv = { SGLANG_ENABLE_SPEC_V2 = "1" }\n'
    'speculative = { algorithm = "NEXTN", eagle_topk',
    f'args = ["--mamba-scheduler-strategy", "extra_buffer", "--api-key", "{KEY}"]\n'
    f'env = {{ SGLANG_ENABLE_SPEC_V2 = "1", HF_TOKEN = "{TOKEN}" }}\n'
    'speculative = { algorithm = "NEXTN", eagle_topk',
    1,
)


def secret_file(tmp_path: Path) -> Path:
    assert SECRET_HOSTS != HOSTS
    path = tmp_path / "hosts.toml"
    path.write_text(SECRET_HOSTS, encoding="utf-8")
    return path


def saved(path: Path) -> config_hosts.Profile:
    return config_hosts.load(path).hosts["ct129"].profiles["topk-only"]


def text_of(form: object, name: str) -> str:
    return form.query_one(f"#ff-{name}", TextArea).text  # type: ignore[attr-defined, no-any-return]


async def test_the_env_and_args_fields_show_secrets_masked(tmp_path: Path) -> None:
    path = secret_file(tmp_path)
    app = form_app(form_session(tmp_path, path), path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        form = await open_form(pilot)
        everything = (
            text_of(form, "env") + text_of(form, "args") + command(form) + shown(form, "#ff-args-parsed")
        )
        assert KEY not in everything and TOKEN not in everything
        assert "HF_TOKEN=<redacted:" in text_of(form, "env") and "SGLANG_ENABLE_SPEC_V2=1" in text_of(
            form, "env"
        )
        assert "--api-key '<redacted:" in text_of(form, "args")
        assert not form.dirty  # the masks are the saved values, shown masked


async def test_ctrl_r_reveals_and_again_masks(tmp_path: Path) -> None:
    path = secret_file(tmp_path)
    app = form_app(form_session(tmp_path, path), path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        form = await open_form(pilot)
        await pilot.press("ctrl+r")
        assert await until(pilot, lambda: TOKEN in text_of(form, "env"), 5)
        assert f"--api-key {KEY}" in text_of(form, "args") and KEY in command(form)
        assert "secrets shown" in shown(form, "#ff-state") and not form.dirty
        await pilot.press("ctrl+r")
        assert await until(pilot, lambda: TOKEN not in text_of(form, "env"), 5)
        assert KEY not in text_of(form, "args") + command(form)


async def test_saving_with_masked_fields_keeps_the_real_secrets(tmp_path: Path) -> None:
    path = secret_file(tmp_path)
    app = form_app(form_session(tmp_path, path), path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        form = await open_form(pilot)
        env = form.query_one("#ff-env", TextArea)
        env.load_text(text_of(form, "env").replace("SGLANG_ENABLE_SPEC_V2=1", "SGLANG_ENABLE_SPEC_V2=0"))
        await pilot.press("ctrl+s")
        assert await until(pilot, lambda: saved(path).env.get("SGLANG_ENABLE_SPEC_V2") == "0", 5)
        profile = saved(path)
        assert profile.env["HF_TOKEN"] == TOKEN and profile.args[-2:] == ("--api-key", KEY)
        assert "<redacted" not in path.read_text()


async def test_a_new_secret_typed_while_revealed_survives_masking_and_is_saved(tmp_path: Path) -> None:
    path = secret_file(tmp_path)
    app = form_app(form_session(tmp_path, path), path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        form = await open_form(pilot)
        await pilot.press("ctrl+r")
        assert await until(pilot, lambda: TOKEN in text_of(form, "env"), 5)
        form.query_one("#ff-env", TextArea).load_text("HF_TOKEN=hf_new\nOPENAI_API_KEY=sk-o")
        await pilot.press("ctrl+r", "ctrl+s")
        assert await until(pilot, lambda: saved(path).env.get("HF_TOKEN") == "hf_new", 5)
        assert saved(path).env["OPENAI_API_KEY"] == "sk-o" and "hf_new" not in text_of(form, "env")


async def test_an_edited_mask_is_refused_not_saved(tmp_path: Path) -> None:
    path = secret_file(tmp_path)
    app = form_app(form_session(tmp_path, path), path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        form = await open_form(pilot)
        damaged = text_of(form, "env").replace(">", "", 1)  # one character of the mask deleted
        form.query_one("#ff-env", TextArea).load_text(damaged)
        args = form.query_one("#ff-args", TextArea)
        await pilot.press("ctrl+s")
        assert await until(pilot, lambda: "HF_TOKEN holds a masked value" in field_error(form, "env"), 5)
        args.load_text(text_of(form, "args").replace("<redacted:", "<redacted:0"))
        await pilot.pause()
        assert await until(pilot, lambda: "--api-key holds a masked value" in field_error(form, "args"), 5)
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert path.read_text() == SECRET_HOSTS


async def test_a_dialog_over_the_form_masks_the_secrets_again(tmp_path: Path) -> None:
    path = secret_file(tmp_path)
    app = form_app(form_session(tmp_path, path), path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        form = await open_form(pilot)
        await pilot.press("ctrl+r")
        assert await until(pilot, lambda: TOKEN in text_of(form, "env"), 5)
        form.query_one("#ff-tp", Input).value = "4"
        await pilot.press("escape")  # unsaved changes: the discard question comes over the form
        assert await until(pilot, lambda: on_screen(app, ConfirmScreen), 5)
        assert TOKEN not in text_of(form, "env") and not form.revealed


async def test_the_hosts_verdict_is_shown_with_the_forms_secrets_masked(tmp_path: Path) -> None:
    """SGLang's argparse echoes what it refuses: the key must not come back through the host's words."""
    from gdnconsole.host.hostcheck import HostVerdict

    path = secret_file(tmp_path)
    app = form_app(form_session(tmp_path, path), path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        form = await open_form(pilot)
        message = f"sglang: error: unrecognized arguments: --api-kee {KEY} HF_TOKEN={TOKEN}"
        form.verdict, form.verdict_argv = HostVerdict(False, "SystemExit", message), form._current_argv()
        form._paint()
        assert "unrecognized arguments" in shown(form, "#ff-verdicts")
        assert KEY not in shown(form, "#ff-verdicts") and TOKEN not in shown(form, "#ff-verdicts")
        await pilot.press("ctrl+r")
        assert await until(pilot, lambda: KEY in shown(form, "#ff-verdicts"), 5)


async def test_a_launch_error_toast_masks_the_hosts_secrets(tmp_path: Path) -> None:
    path = secret_file(tmp_path)
    app = form_app(form_session(tmp_path, path), path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        error = OSError(f"sglang: error: unrecognized arguments: --api-kee {KEY} (HF_TOKEN={TOKEN})")
        app.dashboard.launches._failed(0, "launch", error)
        app.dashboard.launches._alarm(0, f"timed out: {KEY}")
        await pilot.pause()
        said = [n.message for n in app._notifications]
        assert any("launch failed: sglang: error" in m for m in said) and any("timed out" in m for m in said)
        assert not [m for m in said if KEY in m or TOKEN in m], said
