"""The benchmark runner: environment capture, prompt sets, the HTTP client, sweeps and server launching."""
