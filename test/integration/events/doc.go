// Package events tests pkg/eventrecorder against a real API server: a burst
// of events far above the events client's rate is written with none lost,
// and what the recorder does drop is counted.
package events
