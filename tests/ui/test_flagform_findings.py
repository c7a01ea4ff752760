"""The flag form shows every error our rules find, says which one SGLang stops at first, suggests the
flag a typo meant, and warns when the host's SGLang is outside the rule sets' range (issue 17)."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import TextArea

from tests.ui.conftest import settle
from tests.ui.dashboard_helpers import SIZE, until
from tests.ui.form_helpers import field_error, form_app, form_session, hosts_file, open_form, shown, type_into


async def test_every_error_shown_and_the_first_named(tmp_path: Path) -> None:
    path = hosts_file(tmp_path)
    app = form_app(form_session(tmp_path, path), path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        form = await open_form(pilot)
        await type_into(pilot, form, "num_steps", "1")  # the profile's own error fixed
        args = form.query_one("#ff-args", TextArea)
        args.load_text("--mamba-scheduler-strategy extra_buffer --dp 3 --enable-dp-attention --pagesize 16")
        args.focus()
        await pilot.press("end")
        assert await until(pilot, lambda: "✖ 2 errors" in shown(form, "#ff-verdicts"), 5)
        findings = shown(form, "#ff-findings")
        assert "SGLang stops first at --pagesize [argv.unrecognized]" in findings
        everywhere = findings + field_error(form, "args") + field_error(form, "tp")
        assert "did you mean --page-size?" in everywhere
        assert "parallel.tp_not_divisible_by_dp" in everywhere


async def test_a_version_newer_than_the_rule_sets_is_warned_about(tmp_path: Path) -> None:
    path = hosts_file(tmp_path)
    app = form_app(form_session(tmp_path, path, sglang="0.6.2"), path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        form = await open_form(pilot)
        warning = "SGLang 0.6.2 is newer than the newest rule set (0.5.23): checked with 0.5.23's rules"
        assert await until(pilot, lambda: warning in shown(form, "#ff-findings"), 5)


async def test_the_hosts_gpu_memory_sets_the_chunk_the_page_must_divide(tmp_path: Path) -> None:
    """48 GB A6000s: SGLang picks a 4096-token chunk, which a 3072-token page does not divide; with the
    memory unknown, 3072 would divide none of the sizes SGLang picks either, so the test takes 8192:
    only the host's memory tells that SGLang stops."""
    path = hosts_file(tmp_path)
    app = form_app(form_session(tmp_path, path), path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        form = await open_form(pilot)
        await type_into(pilot, form, "num_steps", "1")
        await type_into(pilot, form, "model", "Qwen/Qwen3-8B")  # dense: no mamba page rules
        args = form.query_one("#ff-args", TextArea)
        args.load_text("--page-size 8192")
        args.focus()
        await pilot.press("end")

        def shown_all() -> str:
            return shown(form, "#ff-findings") + field_error(form, "args")

        assert await until(pilot, lambda: "memory.chunked_prefill_page_size" in shown_all(), 5), shown_all()
        assert "(4096, which SGLang picks from the GPU's memory)" in shown_all()
