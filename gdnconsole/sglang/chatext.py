"""SGLang's extensions of the OpenAI chat endpoint that the console asks for, by version.

Read from the wheels: 0.5.11 has neither; 0.5.23 has both (versions between were not read, so they are
not asked: an older server's request model may refuse a field it does not know).
"""

from __future__ import annotations

from gdnconsole.sglang.flags import parse_version

# "return_meta_info": a non-streamed answer carries the request's meta_info (523 protocol.py:964; refused
# with streaming, serving_chat.py:1321).
META_INFO_SINCE = (0, 5, 23)
# "return_spec_tokens_details": the answer's "sglext.spec_tokens_details" holds the request's own
# speculative figures (spec_accept_length, spec_verify_ct, ...), streamed (a chunk with no choices before
# the usage chunk, serving_chat.py:2703-2763) or not (the response's sglext, serving_chat.py:2865-2895);
# 523 protocol.py:456-482, 961.
SPEC_DETAILS_SINCE = (0, 5, 23)


def _since(version: str | None, since: tuple[int, int, int]) -> bool:
    return version is not None and parse_version(version) >= since


def meta_info(version: str | None) -> bool:
    """Whether a non-streamed request may ask for its meta_info."""
    return _since(version, META_INFO_SINCE)


def spec_details(version: str | None) -> bool:
    """Whether a request may ask for its own speculative figures."""
    return _since(version, SPEC_DETAILS_SINCE)
