"""Modules of benchmarks/bench_peers.py: data, methods, report (metrics, tables, plots)."""
