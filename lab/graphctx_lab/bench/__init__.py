"""Benchmarks: commands that write reports, not gates with timings."""
