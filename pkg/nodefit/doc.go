// Package nodefit answers whether each pod of a unit could run on some node
// of the cluster. Quota is not placement, but a pod that fits no node it may
// run on (by its node selector, required node affinity and tolerations) never
// runs, and its unit would hold quota forever. The package is pure: it takes
// the nodes and the pod sets, and holds no client and no state.
package nodefit
