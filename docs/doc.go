// Package docs holds the checks that keep the user guide (user-guide.md)
// true: Blocks splits it into its fenced blocks and says which ones the
// end-to-end suite plays (test/e2e plays them on the local cluster), and the
// package's tests fail when a label, annotation, flag, feature gate, metric,
// event reason or configuration field the code knows is missing from the
// guide, or when one of the original guide's YAML examples is not in it
// verbatim. It owns no state.
package docs
