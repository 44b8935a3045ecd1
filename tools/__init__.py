"""Developer tools: generators of the documentation (not installed)."""
