/**
 * The API server in front of a vLLM engine as a CPU that serves one thing at a time: every request
 * it takes in (parsing, chat template, tokenization) and every chunk it streams out
 * (detokenization, the response object, the server-sent event) waits for the work before it
 * ({@link io.blis.engine.frontend.ApiServer}, {@link io.blis.engine.frontend.ApiServerQueue}).
 * The engine never waits for it: vLLM's engine core runs in its own process and hands its outputs
 * over a socket, so a busy API server delays what clients see, and when requests enter the engine,
 * never the steps themselves.
 */
package io.blis.engine.frontend;
