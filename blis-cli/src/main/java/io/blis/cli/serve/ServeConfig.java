package io.blis.cli.serve;

import java.util.List;

/**
 * Where and as what the simulated server listens.
 *
 * @param host address to bind (for example {@code 127.0.0.1}; {@code 0.0.0.0} for every interface)
 * @param port TCP port, 0 for any free one
 * @param servedModelNames the model names it answers to (the first is the default), as vLLM's
 *     {@code --served-model-name}
 * @param ioThreads Netty event-loop threads writing the answers
 */
public record ServeConfig(String host, int port, List<String> servedModelNames, int ioThreads) {

  public ServeConfig {
    if (port < 0 || port > 65_535) {
      throw new IllegalArgumentException("--port must be in 0..65535, got " + port);
    }
    if (servedModelNames.isEmpty() || servedModelNames.stream().anyMatch(String::isBlank)) {
      throw new IllegalArgumentException("--served-model-name: at least one non-blank name is needed (names separated"
          + " by commas, none empty)");
    }
    if (ioThreads < 1) {
      throw new IllegalArgumentException("I/O threads must be at least 1, got " + ioThreads);
    }
    servedModelNames = List.copyOf(servedModelNames);
  }

  /** On the loopback address, one name, two I/O threads. */
  public static ServeConfig loopback(int port, String servedModelName) {
    return new ServeConfig("127.0.0.1", port, List.of(servedModelName), 2);
  }
}
