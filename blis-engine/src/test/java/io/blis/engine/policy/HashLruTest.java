package io.blis.engine.policy;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class HashLruTest {

  /** Agrees with an access-ordered LinkedHashMap (the textbook LRU) on random use sequences. */
  @ParameterizedTest(name = "capacity {0}")
  @ValueSource(ints = {1, 2, 3, 7, 64, 500})
  void behavesExactlyLikeATextbookLru(int capacity) {
    SplittableRandom rnd = new SplittableRandom(capacity);
    HashLru lru = new HashLru(capacity);
    Map<Long, Boolean> ref = new LinkedHashMap<>(16, 0.75f, true) {
      @Override
      protected boolean removeEldestEntry(Map.Entry<Long, Boolean> e) {
        return size() > capacity;
      }
    };
    for (int step = 0; step < 20_000; step++) {
      long h = rnd.nextInt(capacity * 3) * 0x9E3779B97F4A7C15L; // some collide in the table
      if (rnd.nextInt(3) == 0) {
        assertThat(lru.contains(h)).isEqualTo(ref.containsKey(h));
      } else {
        lru.touch(h);
        ref.put(h, Boolean.TRUE);
      }
      assertThat(lru.size()).isEqualTo(ref.size());
    }
    for (long h : ref.keySet()) {
      assertThat(lru.contains(h)).isTrue();
    }
  }
}
