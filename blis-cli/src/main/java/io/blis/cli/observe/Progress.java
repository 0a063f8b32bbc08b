package io.blis.cli.observe;

/**
 * Where a run stands, for a progress line.
 *
 * @param elapsedUs time since the start, microseconds
 * @param sent requests sent
 * @param inFlight requests sent and not ended
 * @param done requests answered completely
 * @param failed requests that ended without their whole answer
 * @param late requests sent more than {@link Observer#LATE_US} after their time
 */
public record Progress(long elapsedUs, long sent, long inFlight, long done, long failed, long late) {}
