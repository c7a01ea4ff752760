"""Talking to an SGLang server over its OpenAI-compatible HTTP API: requests and results (``model``,
no HTTP library), the httpx client (``client``) and bursts of concurrent prompts (``burst``)."""
