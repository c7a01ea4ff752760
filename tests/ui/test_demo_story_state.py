"""A story's state stays in its own folder: what its simulated hosts said of themselves (which `config
check` would take for a real host's, "as the host said"), its journal and its prompt history never reach
the user's data folder (here: the folders the suite gives each test, as the user's)."""

from __future__ import annotations

import os
from pathlib import Path

from gdnconsole.host import seenfacts
from gdnconsole.host.journal import JOURNAL_DIR_ENV
from gdnconsole.host.prompthistory import PROMPTS_DIR_ENV
from tests.ui.test_demo_stories import played


async def test_a_story_leaves_nothing_in_the_users_data_folder() -> None:
    users = {name: Path(os.environ[name]) for name in (JOURNAL_DIR_ENV, PROMPTS_DIR_ENV)}
    async with played("crash") as run:
        host = run.hosts[0].name
        kept = seenfacts.recall(host)
        assert kept is not None and kept.facts.sglang is not None  # the story's host said its facts...
        assert seenfacts.path_for(host).is_relative_to(run.dir)  # ... and they stay with the story
    assert {name: sorted(folder.iterdir()) for name, folder in users.items()} == {name: [] for name in users}
    assert {name: os.environ[name] for name in users} == {name: str(folder) for name, folder in users.items()}
    assert seenfacts.recall(host) is None
