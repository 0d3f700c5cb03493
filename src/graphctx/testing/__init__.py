"""Test helpers shipped with graphctx: the GraphStore conformance suite (needs pytest)."""
