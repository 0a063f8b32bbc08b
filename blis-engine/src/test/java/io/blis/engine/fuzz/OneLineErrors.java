package io.blis.engine.fuzz;

import java.io.UncheckedIOException;
import java.util.List;
import java.util.regex.Pattern;

/**
 * The property every parser's fuzz target checks: an input is either accepted or refused with the
 * project's one-line error, an {@link IllegalArgumentException} or {@link UncheckedIOException}
 * (what {@code blis} prints as one line with exit status 2) whose message is one non-blank line
 * in the project's words. Anything else thrown (another exception, a {@link StackOverflowError},
 * an {@link OutOfMemoryError}) escapes the target and is a finding.
 */
public final class OneLineErrors {

  /** Words of Java and of the parsing libraries that must not reach a user. */
  static final List<String> LEAKS = List.of("Exception", "java.", "com.fasterxml", "org.snakeyaml",
      "Source:", "StreamReadFeature", "CoercionConfig", "No content to map", "in 'reader'",
      "io.blis");

  private static final Pattern LINE_BREAK = Pattern.compile("\\R");
  private static final Pattern EDGES = Pattern.compile("^[^A-Za-z]+|[^A-Za-z]+$");
  private static final Pattern SPACES = Pattern.compile("\\s+");

  /** A parse step that may throw. */
  @FunctionalInterface
  public interface Step {
    void run() throws Exception;
  }

  private OneLineErrors() {}

  /**
   * Runs {@code step}; a refusal must be the one-line error and, when {@code mustName} is not null,
   * name the input (so a user knows which file). {@code input} is the text given, so that words
   * it holds itself (quoted back in the message) are not taken for leaks.
   *
   * @return true when the step ran to the end, false when it refused the input
   * @throws AssertionError for a refusal that is not one clean line
   */
  public static boolean accepted(String input, String mustName, Step step) throws Exception {
    try {
      step.run();
      return true;
    } catch (IllegalArgumentException | UncheckedIOException e) {
      check(e, input, mustName);
      return false;
    }
  }

  private static void check(RuntimeException e, String input, String mustName) {
    String message = e.getMessage();
    if (message == null || message.isBlank()) {
      throw new AssertionError("refused without a message", e);
    }
    if (e instanceof NumberFormatException) {
      throw new AssertionError("a number parser's own message reached the user: " + message, e);
    }
    if (LINE_BREAK.matcher(message).find()) {
      throw new AssertionError("message of more than one line: " + message, e);
    }
    if (mustName != null && !message.contains(mustName)) {
      throw new AssertionError("message does not name the input '" + mustName + "': " + message, e);
    }
    // a word of the input quoted back may meet the message's own quote or colon, and YAML folds
    // the line breaks of a plain value into spaces
    String folded = SPACES.matcher(input).replaceAll(" ");
    for (String leak : LEAKS) {
      if (message.contains(leak) && !folded.contains(EDGES.matcher(leak).replaceAll(""))) {
        throw new AssertionError("message leaks '" + leak + "': " + message, e);
      }
    }
  }
}
