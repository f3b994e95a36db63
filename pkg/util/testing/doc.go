// Package testing holds object builders for tests:
//
//	MakeQueueUnit("a", "ns").Quota("team-a").Request("cpu", "4").Obj()
//
// Each builder starts from a valid object and each method sets one thing.
package testing
