// Command checker compares a performance run's summary.yaml with a range
// file and exits non-zero naming every figure out of range:
//
//	go run ./test/performance/checker --summary DIR/summary.yaml --ranges test/performance/ranges/baseline.yaml
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/koordinator-sh/koord-queue/test/performance/harness"
)

func main() {
	summary := flag.String("summary", "", "Path to a summary.yaml written by the runner.")
	ranges := flag.String("ranges", "", "Path to a range file (test/performance/ranges/*.yaml).")
	flag.Parse()
	if *summary == "" || *ranges == "" {
		fmt.Fprintln(os.Stderr, "usage: checker --summary SUMMARY --ranges RANGES")
		os.Exit(2)
	}
	data, err := os.ReadFile(*summary)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	figures, err := harness.Figures(data)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", *summary, err)
		os.Exit(2)
	}
	r, err := harness.LoadRanges(*ranges)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	bad := harness.Check(figures, r)
	for _, b := range bad {
		fmt.Println("OUT OF RANGE:", b)
	}
	if len(bad) > 0 {
		os.Exit(1)
	}
	fmt.Printf("%d figures of %s within %s\n", len(r.Figures), *summary, *ranges)
}
