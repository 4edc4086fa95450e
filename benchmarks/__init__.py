"""Benchmarks for gitfleet: a deterministic synthetic fleet generator (`generate`) and a render
benchmark (`bench_render`). Not part of the installed product; run from the repository root."""
