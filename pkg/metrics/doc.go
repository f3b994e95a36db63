// Package metrics defines every Prometheus metric of the koord-queue
// scheduler, once. Counters and histograms are updated where things happen
// (through the Recorder, injected into the scheduler); gauges are computed at
// scrape time from the scheduler's state (through a State), so they are never
// stale and cost nothing between scrapes.
//
// The unprefixed names are the ones existing dashboards use; names added by
// this project start with koord_queue_. koord_queue_build_info is exported by
// both binaries: the scheduler through Register, the job extensions through
// RegisterBuildInfo.
package metrics
