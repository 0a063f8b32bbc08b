/**
 * {@code blis sweep} on Apache Spark: {@link io.blis.spark.SparkSweep} runs each configuration of
 * a grid as a Spark task and returns the engine's table and a DataFrame of it; {@link
 * io.blis.spark.SparkSweepMain} is the {@code spark-submit} entry point. Spark is a provided
 * dependency: the cluster supplies it. Usage and the classpath notes are in docs/capacity.md,
 * section "Sweeps on Apache Spark".
 */
package io.blis.spark;
