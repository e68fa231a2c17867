"""The benchmark harness (``bench run``, ``bench rerun``, ``bench prompts``): one module per concept.

Public modules (import them directly; this package re-exports nothing):

* ``config`` the run config (``RunConfig``, ``load_config``, ``--set`` overrides); ``prompts`` prompt sets;
* ``measure`` one measured config: launch or attach, ask the server, sweep, write records (``commands`` and
  ``rerun`` are the command lines over it); ``sweep`` the level-by-level sweep and its record file;
* ``load_generator`` a fixed-concurrency level; ``shards`` the same level over several client processes (one
  clock, one record); ``client`` the streaming HTTP client; ``request`` what one request sends and what it
  measured; ``metrics`` a level's figures from its requests;
* ``engines`` one adapter per serving engine; ``launcher`` the server process; ``environment`` the host, GPUs,
  engine packages and allow-listed variables.

Private modules (``_name``) hold the parts: the SSE decoder and SGLang's native chunks (``_sse``, ``_native``,
``_stream``), claimed vs observed (``_claims``, ``_attach``), how a run ends (``_outcome``), the workload's prefix
markers and cache policy (``_workload``), the recipe (``_recipe``), checks before a run (``_preflight``), the
terminal progress (``_progress``), latency statistics (``_stats``) and a lean HTTP/1.1 transport (``_http1``). The
commit of the measured checkout comes from ``bench.git``; every string a record or the terminal gets passes through
``bench.redact``.
"""

__all__: list[str] = []
