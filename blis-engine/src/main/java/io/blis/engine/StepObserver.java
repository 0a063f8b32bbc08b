package io.blis.engine;

import io.blis.kvcache.KvBlockPool;

/** Per-step hook for tests; called after an instance formed and timed a batch. */
interface StepObserver {
  void onStep(long startUs, long stepUs, RequestList batch, RequestList running, int waitingSize,
      KvBlockPool pool);
}
