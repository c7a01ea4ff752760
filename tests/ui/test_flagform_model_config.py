"""The flag form checks the profile with the model's config.json as the host holds it (issue 26): read
from the host's Hugging Face cache once, the rules run again with its context length; a damaged one is
one warning and no finding."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from textual.widgets import TextArea

from gdnconsole.host import seenmodels
from tests.ui.conftest import settle
from tests.ui.dashboard_helpers import SIZE, until
from tests.ui.form_helpers import field_error, form_app, form_session, hosts_file, open_form, shown, type_into

RULE = "model.context_length_above_model"


def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    """This machine (the local host ct129) holds Qwen/Qwen3.6-27B in its Hugging Face cache."""
    snapshot = tmp_path / "hub" / "models--Qwen--Qwen3.6-27B" / "snapshots" / "abc"
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_text(text)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setattr(seenmodels, "default_dir", lambda: tmp_path / "state")


def everywhere(form) -> str:  # type: ignore[no-untyped-def]
    return shown(form, "#ff-findings") + field_error(form, "args")


def app_for(tmp_path: Path):  # type: ignore[no-untyped-def]
    path = hosts_file(tmp_path)
    app = form_app(form_session(tmp_path, path), path)
    return app


async def test_a_context_length_above_the_models_is_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = {
        "architectures": ["Qwen3_5ForConditionalGeneration"],
        "text_config": {"max_position_embeddings": 262144},
    }
    cache(tmp_path, monkeypatch, json.dumps(config))
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        form = await open_form(pilot)
        await type_into(pilot, form, "num_steps", "1")
        args = form.query_one("#ff-args", TextArea)
        args.load_text("--mamba-scheduler-strategy extra_buffer --context-length 300000")
        args.focus()
        await pilot.press("end")
        assert await until(pilot, lambda: RULE in everywhere(form), 10)
        assert "allows (262144, from its config.json)" in everywhere(form)


async def test_a_damaged_config_is_one_warning(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache(tmp_path, monkeypatch, '{"max_position_embeddings": NaN}')
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        form = await open_form(pilot)
        await type_into(pilot, form, "num_steps", "1")
        args = form.query_one("#ff-args", TextArea)
        args.load_text("--mamba-scheduler-strategy extra_buffer --context-length 300000")
        args.focus()
        await pilot.press("end")

        def warned() -> list[str]:
            return [str(n.message) for n in app._notifications if "unusable" in str(n.message)]

        assert await until(pilot, lambda: bool(warned()), 10)
        assert warned() == [
            "the config.json of Qwen/Qwen3.6-27B is unusable (not JSON); its checks were not run"
        ]
        assert RULE not in everywhere(form)
