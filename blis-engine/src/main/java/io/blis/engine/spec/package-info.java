/**
 * Speculative decoding as vLLM's v1 engine runs it: a proposer drafts {@code K} tokens per
 * decoding request, the next step verifies them with the target model ({@code K + 1} tokens of
 * that request in the step's token budget and its KV blocks, plus the drafter's lookahead slots),
 * and a per-position acceptance profile decides how many drafts each verification keeps. The
 * drafter's own forward passes are charged on top of the target's step ({@link
 * io.blis.engine.spec.SpeculativeModel}).
 *
 * <p>The engine reaches this package only through {@link io.blis.engine.spec.Speculator}: how many
 * tokens a decoding request schedules, how many lookahead slots it reserves, how many drafts a
 * verification accepts.
 */
package io.blis.engine.spec;
