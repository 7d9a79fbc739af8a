// Package perfstat turns the latencies a benchmark measured into the figures
// people compare: throughput in records and megabytes per second, the mean
// and maximum latency, and the 50th, 95th, 99th and 99.9th percentiles.
//
// The final report follows the line that Kafka's kafka-producer-perf-test
// prints, so that figures from PyStream can be read next to figures from
// Kafka without translation:
//
//	1000 records sent, 2345.6 records/sec (0.22 MB/sec), 0.42 ms avg latency, 3.10 ms max latency, 0.38 ms 50th, 0.71 ms 95th, 1.20 ms 99th, 3.10 ms 99.9th.
//
// Two details differ from Kafka on purpose. Percentiles are printed with two
// decimals rather than whole milliseconds, because a durable append on a
// local disk takes well under a millisecond and whole milliseconds would show
// only zeros. A megabyte is 1024*1024 bytes, as in Kafka's tool.
//
// Percentiles are computed exactly, from every latency sorted (nearest-rank
// method: the p-th percentile of n samples is the sample at rank
// ceil(p*n)). A benchmark run records at most a few million latencies, so
// keeping them all costs a few megabytes and avoids the approximation error
// of a histogram or sketch. No third-party statistics package is needed.
//
// Recorder collects latencies from many goroutines; Summarize and Summary's
// methods are pure functions over the collected values, tested without a
// clock. Progress prints windowed interim figures while a benchmark runs.
package perfstat
