"""Embedding archived messages outside the engine's lock: the queue, its bookkeeping, its retry policy, its thread.

Archiving never waits for the embedder: a message is stored first, marked pending, and embedded here. What holds:

- **A failure leaves messages pending, never lost.** They stay archived and searchable by their words; a durable
  archive keeps them pending across a restart. Retries are bounded (``_retry``): a failing run is retried after
  ``embedding_retry_interval`` seconds, doubling, and the thread stops retrying on its own after
  ``MAX_AUTOMATIC_ATTEMPTS`` failing runs in a row; a text the embedder rejects is isolated by halving its batch,
  waits on a schedule of its own without holding back other messages, and after ``MAX_AUTOMATIC_ATTEMPTS``
  failures is tried again only by ``embed_pending()``.
- **A restore drops vectors computed for the old archive** (``Claims``' generation): they are never attached to a
  restored message that happens to reuse the index.
- **Claims**: a message is embedded by one run at a time; ``embed_pending()`` also waits for the batches others
  have in hand. Changed options apply from the next claim on.
- **A search sees every write made before it** (background mode): it embeds the newest pending messages itself,
  at most ``QUERY_TIME_LIMIT``, scores them as if their vectors were stored (``_overlay``), and hands the vectors
  to the thread, which stores them without embedding them again. It stores nothing itself. Beyond the bound it
  does not wait: the others are matched by their words, and ``stats().unembedded_at_last_search`` counts them.
- **The thread** (``_worker``) starts on the first request, ends when idle, and never keeps the memory alive.
  ``close`` stops it before the archive closes, and the thread never calls a closed archive. At interpreter exit
  every thread finishes its batch; exit waits ``EXIT_TIMEOUT`` seconds for all of them together, and names in the
  log a thread whose batch it abandons.

Modules: ``_queue`` (``EmbeddingQueue``, what the memory calls), ``_claims`` (who may call the archive, what is in
hand), ``_retry`` (the retry policy and the halving), ``_worker`` (the thread), ``_overlay`` (the archive as a
search sees it).
"""

from strands_semantic_memory.engine.embedding._overlay import PendingView, SearchVectors
from strands_semantic_memory.engine.embedding._queue import QUERY_TIME_LIMIT, EmbeddingQueue

__all__ = ["QUERY_TIME_LIMIT", "EmbeddingQueue", "PendingView", "SearchVectors"]
